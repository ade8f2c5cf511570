// _softmax / _log_softmax (stability with large values, -inf, dims, half_to_float) and
// native_layer_norm (out, mean, rstd shapes and values, weight/bias, dtypes, errors).
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(Softmax, StableForLargeValues) {
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), s = 1 + e1 + e2;
  const std::vector<double> want = {e2 / s, e1 / s, 1 / s};
  for (double shift : {0.0, 1000.0, -1000.0}) {
    Tensor x = make(DType::kFloat32, {3}, {shift + 1, shift + 2, shift + 3});
    expect_near(values(call1("aten._softmax.default", {x, i64(0), false})), want, 1e-6);
    expect_near(values(call1("aten._log_softmax.default", {x, i64(-1), false})),
                {-2 - std::log(s), -1 - std::log(s), -std::log(s)}, 1e-5);
  }
  const double inf = INFINITY;
  Tensor m = make(DType::kFloat64, {2, 2}, {-inf, 0, -inf, -inf});
  auto r = values(call1("aten._softmax.default", {m, i64(1), false}));
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 1);
  EXPECT_TRUE(std::isnan(r[2]) && std::isnan(r[3]));  // all -inf: NaN, as in PyTorch
  auto lr = values(call1("aten._log_softmax.default", {m, i64(1), false}));
  EXPECT_EQ(lr[0], -inf);
  EXPECT_EQ(lr[1], 0);
}

TEST(Softmax, DimsAndDtypes) {
  // Over dim 0 of [[0, 1], [0, 1]]: each column is uniform.
  Tensor x = make(DType::kFloat32, {2, 2}, {0, 1, 0, 1});
  EXPECT_EQ(values(call1("aten._softmax.default", {x, i64(0), false})),
            (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  Tensor lx = make(DType::kFloat32, {2}, {1000, 1000});
  expect_near(values(call1("aten._log_softmax.default", {lx, i64(0), false})),
              {-std::log(2.0), -std::log(2.0)}, 1e-6);
  Tensor h = make(DType::kFloat16, {2}, {3, 3});
  Tensor hr = call1("aten._softmax.default", {h, i64(0), false});
  EXPECT_EQ(hr.dtype(), DType::kFloat16);
  EXPECT_EQ(values(hr), (std::vector<double>{0.5, 0.5}));
  Tensor hf = call1("aten._softmax.default", {h, i64(0), true});
  EXPECT_EQ(hf.dtype(), DType::kFloat32);
  EXPECT_EQ(values(hf), (std::vector<double>{0.5, 0.5}));
  Tensor b = make(DType::kBFloat16, {1, 3}, {1, 2, 3});
  Tensor br = call1("aten._log_softmax.default", {b, i64(1), false});
  EXPECT_EQ(br.dtype(), DType::kBFloat16);
  EXPECT_NEAR(values(br)[2], -0.40760596, 4e-3);
  Tensor s = make(DType::kFloat32, {}, {7});
  EXPECT_EQ(values(call1("aten._softmax.default", {s, i64(-1), false})), (std::vector<double>{1}));
  EXPECT_EQ(
      call_error("aten._softmax.default", {make(DType::kInt64, {2}, {1, 2}), i64(0), false}).kind(),
      ErrorKind::kBadInput);
  EXPECT_EQ(call_error("aten._softmax.default", {x, i64(2), false}).kind(), ErrorKind::kOutOfRange);
}

// float32 softmax over the last dim takes a vector row path; over another dim (inner > 1) the
// generic one. Both must agree on every row, the special rows included.
TEST(Softmax, LastDimRowsMatchTheGenericPath) {
  const int64_t rows = 6, n = 37;
  const double inf = INFINITY, nan = NAN;
  std::vector<double> x(rows * n);
  for (int64_t i = 0; i < rows * n; ++i) x[i] = std::sin(0.37 * i) * 20;
  for (int64_t j = 0; j < n; ++j) x[1 * n + j] = -inf;  // all -inf: NaN
  x[2 * n + 5] = -inf;                                  // one -inf: that element 0
  x[3 * n + 36] = nan;                                  // a NaN: the whole row NaN
  x[4 * n + 9] = inf;                                   // +inf: NaN, as exp(inf - inf)
  std::vector<double> xt(rows * n);                     // x transposed: the same softmax over dim 0
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) xt[j * rows + r] = x[r * n + j];
  for (const char* op : {"aten._softmax.default", "aten._log_softmax.default"}) {
    const auto fast = values(call1(op, {make(DType::kFloat32, {rows, n}, x), i64(1), false}));
    const auto generic = values(call1(op, {make(DType::kFloat32, {n, rows}, xt), i64(0), false}));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        const double a = fast[r * n + j], b = generic[j * rows + r];
        if (std::isnan(b) || std::isinf(b)) {
          EXPECT_TRUE(std::isnan(a) ? std::isnan(b) : a == b) << op << " row " << r << " col " << j;
        } else {
          EXPECT_NEAR(a, b, 1e-6 * std::max(1.0, std::abs(b)))
              << op << " row " << r << " col " << j;
        }
      }
    }
  }
}

TEST(LayerNorm, MeanRstdAndAffine) {
  // Rows [1, 3] (mean 2, var 1) and [2, 2] (mean 2, var 0), eps 0.25.
  Tensor x = make(DType::kFloat32, {2, 2}, {1, 3, 2, 2});
  auto r = call("aten.native_layer_norm.default", {x, ints({2}), none(), none(), f64(0.25)});
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  const double r0 = 1 / std::sqrt(1.25), r1 = 2;
  expect_near(values((*r)[0]), {-r0, r0, 0, 0}, 1e-6);
  EXPECT_EQ((*r)[1].sizes(), (Shape{2, 1}));
  EXPECT_EQ((*r)[2].sizes(), (Shape{2, 1}));
  EXPECT_EQ((*r)[1].dtype(), DType::kFloat32);
  EXPECT_EQ(values((*r)[1]), (std::vector<double>{2, 2}));
  expect_near(values((*r)[2]), {r0, r1}, 1e-6);
  Tensor w = make(DType::kFloat32, {2}, {2, -1});
  Tensor b = make(DType::kFloat32, {2}, {1, 0});
  auto ra = call("aten.native_layer_norm.default", {x, ints({2}), w, b, f64(0.25)});
  ASSERT_TRUE(ra.ok());
  expect_near(values((*ra)[0]), {-2 * r0 + 1, -r0, 1, 0}, 1e-6);
  // Only weight, only bias.
  auto rw = call("aten.native_layer_norm.default", {x, ints({2}), w, none(), f64(0.25)});
  expect_near(values((*rw)[0]), {-2 * r0, -r0, 0, 0}, 1e-6);
  auto rb = call("aten.native_layer_norm.default", {x, ints({2}), none(), b, f64(0.25)});
  expect_near(values((*rb)[0]), {-r0 + 1, r0, 1, 0}, 1e-6);
  // Strided parameters (every other element of a wider tensor) read as the contiguous ones.
  Tensor wide = make(DType::kFloat32, {4}, {2, 7, -1, 7});
  Tensor wide_b = make(DType::kFloat32, {3}, {1, 5, 0});
  auto rs = call("aten.native_layer_norm.default",
                 {x, ints({2}), wide.view_as({2}, {2}, 0), wide_b.view_as({2}, {2}, 0), f64(0.25)});
  ASSERT_TRUE(rs.ok()) << rs.error().message();
  expect_near(values((*rs)[0]), {-2 * r0 + 1, -r0, 1, 0}, 1e-6);
}

TEST(LayerNorm, MultiDimShapeAndDtypes) {
  // Normalise over the last two dims of [1, 2, 2]: values 0..3, mean 1.5, var 1.25.
  Tensor x = make(DType::kFloat64, {1, 2, 2}, {0, 1, 2, 3});
  auto r = call("aten.native_layer_norm.default", {x, ints({2, 2}), none(), none(), f64(0)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[1].sizes(), (Shape{1, 1, 1}));
  EXPECT_EQ((*r)[1].dtype(), DType::kFloat64);
  const double rs = 1 / std::sqrt(1.25);
  expect_near(values((*r)[0]), {-1.5 * rs, -0.5 * rs, 0.5 * rs, 1.5 * rs}, 1e-12);
  expect_near(values((*r)[2]), {rs}, 1e-12);
  // bf16 input with float32 weight (PyTorch's mixed type): statistics in the input dtype.
  Tensor xb = make(DType::kBFloat16, {1, 2}, {1, 3});
  Tensor wf = make(DType::kFloat32, {2}, {1, 1});
  auto rb = call("aten.native_layer_norm.default", {xb, ints({2}), wf, none(), f64(0)});
  ASSERT_TRUE(rb.ok()) << rb.error().message();
  EXPECT_EQ((*rb)[0].dtype(), DType::kBFloat16);
  EXPECT_EQ((*rb)[1].dtype(), DType::kBFloat16);
  EXPECT_EQ(values((*rb)[0]), (std::vector<double>{-1, 1}));
  EXPECT_EQ(values((*rb)[1]), (std::vector<double>{2}));
  // Errors: normalized_shape not trailing, weight of the wrong shape.
  Error e = call_error("aten.native_layer_norm.default", {x, ints({3}), none(), none(), f64(0)});
  EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  EXPECT_NE(e.message().find("normalized_shape [3]"), std::string::npos) << e.message();
  EXPECT_EQ(call_error("aten.native_layer_norm.default",
                       {x, ints({2}), make(DType::kFloat64, {3}, {1, 1, 1}), none(), f64(0)})
                .kind(),
            ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
