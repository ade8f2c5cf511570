// Scaled dot-product attention: a hand-computed case, then causal / bool mask / float mask /
// GQA / explicit scale against a naive double-precision reference written here, the fully
// masked row, and the output shapes and dtypes of the flash / efficient / cudnn forms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

std::vector<double> random_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

struct Naive {
  std::vector<double> out, lse;
};

// q [B,Hq,L,E], k [B,Hk,S,E], v [B,Hk,S,Ev] (row-major doubles); mask [L,S] (NaN = masked
// out, else added); kv head of q head h is h / (Hq / Hk).
Naive naive_attention(const std::vector<double>& q, const std::vector<double>& k,
                      const std::vector<double>& v, int64_t B, int64_t Hq, int64_t Hk, int64_t L,
                      int64_t S, int64_t E, int64_t Ev, const std::vector<double>* mask,
                      bool causal, double scale) {
  Naive r;
  r.out.assign(B * Hq * L * Ev, 0);
  r.lse.assign(B * Hq * L, 0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hk);
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S, -INFINITY);
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          if (causal && j > i) continue;
          if (mask && std::isnan((*mask)[i * S + j])) continue;
          double dot = 0;
          for (int64_t e = 0; e < E; ++e)
            dot += q[((b * Hq + h) * L + i) * E + e] * k[((b * Hk + hk) * S + j) * E + e];
          s[j] = dot * scale + (mask ? (*mask)[i * S + j] : 0.0);
          mx = std::max(mx, s[j]);
        }
        if (mx == -INFINITY) continue;  // fully masked: zeros, lse 0
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += std::exp(s[j] - mx);
        for (int64_t j = 0; j < S; ++j) {
          const double p = std::exp(s[j] - mx) / sum;
          for (int64_t e = 0; e < Ev; ++e)
            r.out[((b * Hq + h) * L + i) * Ev + e] += p * v[((b * Hk + hk) * S + j) * Ev + e];
        }
        r.lse[(b * Hq + h) * L + i] = mx + std::log(sum);
      }
    }
  }
  return r;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

constexpr const char* kSdpa = "aten.scaled_dot_product_attention.default";
constexpr const char* kFlashCpu = "aten._scaled_dot_product_flash_attention_for_cpu.default";

TEST(Attention, HandComputed) {
  // One query [1, 0] against keys [1, 0], [0, 1]: scores 1 and 0 with scale 1.
  Tensor q = make(DType::kFloat32, {1, 2}, {1, 0});
  Tensor k = make(DType::kFloat32, {2, 2}, {1, 0, 0, 1});
  Tensor v = make(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 1), p1 = 1 - p0;
  Tensor r = call1(kSdpa, {q, k, v, none(), f64(0), false, f64(1.0), false});
  EXPECT_EQ(r.sizes(), (Shape{1, 2}));
  expect_near(values(r), {p0 + 3 * p1, 2 * p0 + 4 * p1}, 1e-6);
  // Default scale 1/sqrt(2).
  const double e = std::exp(1 / std::sqrt(2.0)), d0 = e / (e + 1), d1 = 1 - d0;
  expect_near(values(call1(kSdpa, {q, k, v})), {d0 + 3 * d1, 2 * d0 + 4 * d1}, 1e-6);
}

struct Case {
  int64_t B = 2, Hq = 2, Hk = 2, L = 3, S = 4, E = 5, Ev = 3;
  std::vector<double> q, k, v;
  Case() = default;
  void fill() {
    q = random_values(B * Hq * L * E, 1);
    k = random_values(B * Hk * S * E, 2);
    v = random_values(B * Hk * S * Ev, 3);
  }
  Tensor tq(DType dt = DType::kFloat32) const { return make(dt, {B, Hq, L, E}, q); }
  Tensor tk(DType dt = DType::kFloat32) const { return make(dt, {B, Hk, S, E}, k); }
  Tensor tv(DType dt = DType::kFloat32) const { return make(dt, {B, Hk, S, Ev}, v); }
};

TEST(Attention, CausalMasksAndScaleAgainstNaive) {
  Case c;
  c.fill();
  const double dscale = 1 / std::sqrt(5.0);
  // Plain, then causal (top-left aligned with L < S).
  for (bool causal : {false, true}) {
    Naive n = naive_attention(c.q, c.k, c.v, c.B, c.Hq, c.Hk, c.L, c.S, c.E, c.Ev, nullptr, causal,
                              dscale);
    expect_near(values(call1(kSdpa, {c.tq(), c.tk(), c.tv(), none(), f64(0), causal})), n.out,
                1e-5);
    auto r = call(kFlashCpu, {c.tq(), c.tk(), c.tv(), f64(0), causal, none(), none()});
    ASSERT_TRUE(r.ok()) << r.error().message();
    expect_near(values((*r)[0]), n.out, 1e-5);
    EXPECT_EQ((*r)[1].sizes(), (Shape{c.B, c.Hq, c.L}));
    EXPECT_EQ((*r)[1].dtype(), DType::kFloat32);
    expect_near(values((*r)[1]), n.lse, 1e-5);
  }
  // A bool mask [L, S] (True keeps) broadcast over batch and heads; explicit scale 0.3.
  const std::vector<double> keep = {1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0};
  std::vector<double> as_add(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) as_add[i] = keep[i] ? 0.0 : NAN;
  Naive nb =
      naive_attention(c.q, c.k, c.v, c.B, c.Hq, c.Hk, c.L, c.S, c.E, c.Ev, &as_add, false, 0.3);
  Tensor bmask = make(DType::kBool, {c.L, c.S}, keep);
  expect_near(values(call1(kSdpa, {c.tq(), c.tk(), c.tv(), bmask, f64(0), false, f64(0.3)})),
              nb.out, 1e-5);
  // A float mask [1, 1, L, S] is added to the scaled scores.
  const std::vector<double> add = random_values(c.L * c.S, 4);
  Naive nf =
      naive_attention(c.q, c.k, c.v, c.B, c.Hq, c.Hk, c.L, c.S, c.E, c.Ev, &add, false, dscale);
  Tensor fmask = make(DType::kFloat32, {1, 1, c.L, c.S}, add);
  expect_near(values(call1(kSdpa, {c.tq(), c.tk(), c.tv(), fmask})), nf.out, 1e-5);
  auto r = call(kFlashCpu, {c.tq(), c.tk(), c.tv(), f64(0), false, fmask, none()});
  ASSERT_TRUE(r.ok());
  expect_near(values((*r)[1]), nf.lse, 1e-5);
  // A mask that does not broadcast.
  Error e = call_error(kSdpa, {c.tq(), c.tk(), c.tv(), make(DType::kBool, {2, 2}, {1, 1, 1, 1})});
  EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
}

TEST(Attention, GroupedQueryHeads) {
  Case c;
  c.Hq = 4;
  c.Hk = 2;
  c.fill();
  const double scale = 1 / std::sqrt(5.0);
  Naive n =
      naive_attention(c.q, c.k, c.v, c.B, c.Hq, c.Hk, c.L, c.S, c.E, c.Ev, nullptr, true, scale);
  expect_near(values(call1(kSdpa, {c.tq(), c.tk(), c.tv(), none(), f64(0), true, none(), true})),
              n.out, 1e-5);
  auto r = call(kFlashCpu, {c.tq(), c.tk(), c.tv(), f64(0), true, none(), none()});
  ASSERT_TRUE(r.ok());
  expect_near(values((*r)[0]), n.out, 1e-5);
  // Without enable_gqa, 4 heads and 2 do not broadcast.
  EXPECT_EQ(call_error(kSdpa, {c.tq(), c.tk(), c.tv()}).kind(), ErrorKind::kShapeMismatch);
  // 3 kv heads do not divide 4.
  Tensor k3 = make(DType::kFloat32, {1, 3, 1, 1}, {1, 1, 1});
  Tensor q4 = make(DType::kFloat32, {1, 4, 1, 1}, {1, 1, 1, 1});
  Error e = call_error(kFlashCpu, {q4, k3, k3, f64(0), false, none(), none()});
  EXPECT_NE(e.message().find("do not divide"), std::string::npos) << e.message();
}

TEST(Attention, FullyMaskedRowAndHalf) {
  Case c;
  c.B = 1;
  c.Hq = c.Hk = 1;
  c.fill();
  // Row 1 is fully masked: output 0 and logsumexp 0 (PyTorch's CPU flash kernel).
  std::vector<double> keep(c.L * c.S, 1);
  for (int64_t j = 0; j < c.S; ++j) keep[c.S + j] = 0;
  auto r = call(kFlashCpu, {c.tq(), c.tk(), c.tv(), f64(0), false,
                            make(DType::kBool, {c.L, c.S}, keep), none()});
  ASSERT_TRUE(r.ok());
  const auto out = values((*r)[0]);
  for (int64_t e = 0; e < c.Ev; ++e) EXPECT_EQ(out[c.Ev + e], 0);
  EXPECT_EQ(values((*r)[1])[1], 0);
  EXPECT_NE(out[0], 0);
  // f16 in, f16 out, computed in float.
  Naive n = naive_attention(c.q, c.k, c.v, 1, 1, 1, c.L, c.S, c.E, c.Ev, nullptr, false,
                            1 / std::sqrt(5.0));
  Tensor h = call1(kSdpa, {c.tq(DType::kFloat16), c.tk(DType::kFloat16), c.tv(DType::kFloat16)});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  expect_near(values(h), n.out, 3e-3);
  Tensor d = call1(kSdpa, {c.tq(DType::kFloat64), c.tk(DType::kFloat64), c.tv(DType::kFloat64)});
  expect_near(values(d), n.out, 1e-12);
  EXPECT_EQ(call_error(kSdpa, {c.tq(), c.tk(), c.tv(), none(), f64(0.1)}).kind(),
            ErrorKind::kBadInput);
}

TEST(Attention, ManyQueryRowsSpanBlocks) {
  // 300 query rows are processed in more than one block of rows.
  Case c;
  c.B = 1;
  c.Hq = c.Hk = 1;
  c.L = 300;
  c.S = 5;
  c.E = 3;
  c.Ev = 2;
  c.fill();
  Naive n = naive_attention(c.q, c.k, c.v, 1, 1, 1, c.L, c.S, c.E, c.Ev, nullptr, true, 0.7);
  auto r = call(kFlashCpu, {c.tq(), c.tk(), c.tv(), f64(0), true, none(), f64(0.7)});
  ASSERT_TRUE(r.ok());
  expect_near(values((*r)[0]), n.out, 1e-5);
  expect_near(values((*r)[1]), n.lse, 1e-5);
}

TEST(Attention, CudaFormsOutputs) {
  Case c;
  c.fill();
  Naive n =
      naive_attention(c.q, c.k, c.v, c.B, c.Hq, c.Hk, c.L, c.S, c.E, c.Ev, nullptr, true, 0.5);
  auto fl = call("aten._scaled_dot_product_flash_attention.default",
                 {c.tq(), c.tk(), c.tv(), f64(0), true, false, f64(0.5)});
  ASSERT_TRUE(fl.ok()) << fl.error().message();
  ASSERT_EQ(fl->size(), 9u);
  expect_near(values((*fl)[0]), n.out, 1e-5);
  expect_near(values((*fl)[1]), n.lse, 1e-5);
  EXPECT_EQ(values((*fl)[4]), (std::vector<double>{3}));  // max_q
  EXPECT_EQ(values((*fl)[5]), (std::vector<double>{4}));  // max_k
  EXPECT_EQ((*fl)[6].sizes(), (Shape{2}));
  EXPECT_EQ((*fl)[8].sizes(), (Shape{0}));
  auto fd = call("aten._scaled_dot_product_flash_attention.default",
                 {c.tq(), c.tk(), c.tv(), f64(0), true, true, f64(0.5)});
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ((*fd)[8].sizes(), (Shape{2, 2, 3, 128}));

  auto ef = call("aten._scaled_dot_product_efficient_attention.default",
                 {c.tq(), c.tk(), c.tv(), none(), true, f64(0), true, f64(0.5)});
  ASSERT_TRUE(ef.ok());
  ASSERT_EQ(ef->size(), 4u);
  expect_near(values((*ef)[0]), n.out, 1e-5);
  EXPECT_EQ((*ef)[1].sizes(), (Shape{2, 2, 32}));
  const auto lse = values((*ef)[1]);
  EXPECT_NEAR(lse[1], n.lse[1], 1e-5);
  EXPECT_EQ(lse[3], INFINITY);
  EXPECT_EQ((*ef)[2].dtype(), DType::kInt64);
  EXPECT_EQ((*ef)[2].sizes(), Shape{});
  auto ef0 = call("aten._scaled_dot_product_efficient_attention.default",
                  {c.tq(), c.tk(), c.tv(), none(), false, f64(0), true, f64(0.5)});
  EXPECT_EQ((*ef0)[1].sizes(), (Shape{2, 2, 0}));

  auto cu = call("aten._scaled_dot_product_cudnn_attention.default",
                 {c.tq(), c.tk(), c.tv(), none(), true, f64(0), true, false, f64(0.5)});
  ASSERT_TRUE(cu.ok());
  ASSERT_EQ(cu->size(), 9u);
  expect_near(values((*cu)[0]), n.out, 1e-5);
  EXPECT_EQ((*cu)[1].sizes(), (Shape{2, 2, 3, 1}));
  expect_near(values((*cu)[1]), n.lse, 1e-5);
  EXPECT_EQ(values((*cu)[5]), (std::vector<double>{4}));
}

}  // namespace
}  // namespace splice::cpu
