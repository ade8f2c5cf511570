// The vector float loops of vec_math.h against libm (computed in double and rounded once):
// exp within 2 ulp over float's whole range, its special values and denormal results; sigmoid
// and silu from it; erf and gelu within 2e-7 of libm's erf; the shifted exp sum of softmax; a row's
// max that is NaN when any lane is; a layer_norm row against its double-precision formula.
#include "backends/cpu/vec_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace splice::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Distance in units in the last place between two finite floats of one sign (or zero).
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return std::abs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

std::vector<float> exp_of(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  exp_floats(x.data(), out.data(), static_cast<int64_t>(x.size()));
  return out;
}

TEST(VecMath, ExpWithinTwoUlpOverFloatsRange) {
  // Every 1/512 from below the underflow point to above the overflow point, so every lane
  // position and the tail block see every region (denormal results included).
  std::vector<float> x;
  for (double v = -110.0; v <= 90.0; v += 1.0 / 512) x.push_back(static_cast<float>(v));
  const std::vector<float> got = exp_of(x);
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = static_cast<float>(std::exp(static_cast<double>(x[i])));
    if (std::isinf(want) || want == 0.0f) {
      ASSERT_EQ(got[i], want) << "exp(" << x[i] << ")";
    } else if (want < std::numeric_limits<float>::min()) {
      // Denormal results keep fewer bits: an absolute bound of two denormal steps.
      ASSERT_LE(ulps(got[i], want), 2) << "exp(" << x[i] << ")";
    } else {
      worst = std::max(worst, ulps(got[i], want));
      ASSERT_LE(ulps(got[i], want), 2) << "exp(" << x[i] << ") = " << got[i] << ", want " << want;
    }
  }
  EXPECT_LE(worst, 2);
}

TEST(VecMath, ExpSpecialValues) {
  const std::vector<float> x = {-kInf, kInf,    kNaN,    0.0f, -0.0f, 88.72283935546875f,
                                88.8f, -103.9f, -104.0f, 1.0f};
  const std::vector<float> got = exp_of(x);
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], kInf);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[3], 1.0f);
  EXPECT_EQ(got[4], 1.0f);
  // The float nearest ln(FLT_MAX) is just above it: exp overflows there, as libm's does; the
  // float below it stays finite.
  EXPECT_EQ(got[5], kInf);
  const std::vector<float> below = exp_of({std::nextafter(88.72283935546875f, 0.0f)});
  EXPECT_TRUE(std::isfinite(below[0]));
  EXPECT_LE(ulps(below[0], static_cast<float>(std::exp(
                               static_cast<double>(std::nextafter(88.72283935546875f, 0.0f))))),
            2);
  EXPECT_EQ(got[6], kInf);
  EXPECT_GT(got[7], 0.0f);  // a denormal, not flushed
  EXPECT_EQ(got[8], 0.0f);
  EXPECT_LE(ulps(got[9], static_cast<float>(std::exp(1.0))), 1);
  // In place (out == x) gives the same values.
  std::vector<float> in_place = x;
  exp_floats(in_place.data(), in_place.data(), static_cast<int64_t>(in_place.size()));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_TRUE(in_place[i] == got[i] || (std::isnan(in_place[i]) && std::isnan(got[i])));
}

TEST(VecMath, SigmoidAndSiluFollowExp) {
  std::vector<float> x;
  for (double v = -120.0; v <= 120.0; v += 0.37) x.push_back(static_cast<float>(v));
  x.insert(x.end(), {-kInf, kInf, kNaN, 0.0f});
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> sig(x.size()), silu(x.size());
  sigmoid_floats(x.data(), sig.data(), n);
  silu_floats(x.data(), silu.data(), n);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(sig[i]) && std::isnan(silu[i]));
      continue;
    }
    const double s = 1.0 / (1.0 + std::exp(-v));
    // exp(-x) overflows float below x = -88.7: the result is then 0 instead of a tiny value.
    EXPECT_NEAR(sig[i], s, 4e-7 * s + 1e-37) << "sigmoid(" << v << ")";
    // silu is x / (1 + exp(-x)) as PyTorch's kernel computes it: NaN at -inf (-inf / inf).
    const double want = v / (1.0 + std::exp(-v));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(silu[i])) << "silu(" << v << ")";
    } else if (std::isinf(want)) {
      EXPECT_EQ(silu[i], want);
    } else {
      EXPECT_NEAR(silu[i], want, 4e-7 * std::abs(want) + 1e-35) << "silu(" << v << ")";
    }
  }
}

TEST(VecMath, ErfAgainstLibmAcrossBothBranches) {
  // Every 1/1024 over [-6, 6] (both polynomial branches, the switch at |x| = 1 and the clamp
  // at 4) plus tiny, denormal and special arguments.
  std::vector<float> x;
  for (double v = -6.0; v <= 6.0; v += 1.0 / 1024) x.push_back(static_cast<float>(v));
  x.insert(x.end(), {1e-30f, -1e-30f, 1e-40f, 0.0f, -0.0f, 1.0f, -1.0f, std::nextafter(1.0f, 0.0f),
                     3.92f, 4.0f, 1e30f, -kInf, kInf, kNaN});
  std::vector<float> got(x.size()), gelu(x.size());
  erf_floats(x.data(), got.data(), static_cast<int64_t>(x.size()));
  gelu_floats(x.data(), gelu.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(got[i]) && std::isnan(gelu[i]));
      continue;
    }
    const double want = std::erf(v);
    // 2e-7 absolute, and 4e-7 relative where erf is small (3-4 ulp).
    EXPECT_NEAR(got[i], want, std::max(2e-7, 4e-7 * std::abs(want))) << "erf(" << v << ")";
    EXPECT_EQ(std::signbit(got[i]), std::signbit(v)) << "erf(" << v << ")";
    const double want_gelu = v * 0.5 * (1.0 + std::erf(v * M_SQRT1_2));
    if (std::isinf(v)) {
      // The formula's own values, as libm's erf gives them: inf, and -inf * 0 = NaN.
      if (v > 0) {
        EXPECT_EQ(gelu[i], kInf);
      } else {
        EXPECT_TRUE(std::isnan(gelu[i]));
      }
    } else {
      EXPECT_NEAR(gelu[i], want_gelu, 2e-7 * std::abs(v) + 4e-7 * std::abs(want_gelu) + 1e-38)
          << "gelu(" << v << ")";
    }
  }
  EXPECT_EQ(got[x.size() - 3], -1.0f);
  EXPECT_EQ(got[x.size() - 2], 1.0f);
}

TEST(VecMath, ExpShiftedSumAndMax) {
  // Lengths that end inside and outside a whole block of lanes.
  for (int64_t n : {1, 7, 8, 9, 31, 64}) {
    std::vector<float> x(n), out(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(0.7 * i) * 5);
    const float max = max_floats(x.data(), n);
    float want_max = x[0];
    for (float v : x) want_max = std::max(want_max, v);
    EXPECT_EQ(max, want_max) << n;
    const double sum = exp_shifted_sum(x.data(), max, out.data(), n);
    double want_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      // The shift is subtracted in float, as PyTorch does: only the exp is compared.
      const double e = std::exp(static_cast<double>(x[i] - max));
      EXPECT_NEAR(out[i], e, 2.5e-7 * e) << n << " at " << i;
      want_sum += e;
    }
    EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum) << n;
    // A NaN in any lane position, or in the tail, makes the max NaN.
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> with_nan = x;
      with_nan[at] = kNaN;
      EXPECT_TRUE(std::isnan(max_floats(with_nan.data(), n))) << n << " at " << at;
    }
  }
  const std::vector<float> low = {-kInf, -kInf, -3.0f};
  EXPECT_EQ(max_floats(low.data(), 3), -3.0f);
  EXPECT_EQ(max_floats(low.data(), 2), -kInf);
}

TEST(VecMath, LayerNormRowAgainstDouble) {
  // Rows that end inside and outside a block of lanes, with a large common offset (where a
  // one-pass variance in float would cancel), with and without weight and bias.
  for (int64_t n : {1, 5, 8, 13, 64, 67}) {
    std::vector<float> x(n), w(n), b(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(1000.0 + std::sin(0.9 * i) * 3);
      w[i] = static_cast<float>(0.5 + 0.01 * i);
      b[i] = static_cast<float>(-0.25 + 0.02 * i);
    }
    double mean = 0, var = 0;
    for (float v : x) mean += v;
    mean /= static_cast<double>(n);
    for (float v : x) var += (v - mean) * (v - mean);
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + 1e-5);
    for (bool affine : {false, true}) {
      const RowMoments m = layer_norm_row(x.data(), y.data(), n, affine ? w.data() : nullptr,
                                          affine ? b.data() : nullptr, 1e-5f);
      EXPECT_NEAR(m.mean, mean, 1e-7 * std::abs(mean)) << n;
      EXPECT_NEAR(m.rstd, rstd, 1e-6 * rstd) << n;
      for (int64_t i = 0; i < n; ++i) {
        double want = (x[i] - mean) * rstd;
        if (affine) want = want * w[i] + b[i];
        // PyTorch's order, x * rstd + (-rstd * mean) in float, rounds at the offset's
        // magnitude (1000 * rstd): a few float ulps of it.
        EXPECT_NEAR(y[i], want, 4 * 1000 * rstd * 6e-8 + 1e-6) << n << " at " << i;
      }
    }
  }
  // A NaN anywhere in the row makes the whole row and its statistics NaN.
  std::vector<float> x(19, 1.0f), y(19);
  x[17] = kNaN;
  const RowMoments m = layer_norm_row(x.data(), y.data(), 19, nullptr, nullptr, 1e-5f);
  EXPECT_TRUE(std::isnan(m.mean) && std::isnan(m.rstd));
  for (float v : y) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace splice::cpu
