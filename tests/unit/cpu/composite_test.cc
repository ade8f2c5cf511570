// diagonal (a view: backends/common/views.cc) and native_group_norm (composite_math.cc, a
// fused kernel of a core ATen op). The CompositeImplicit ops the CPU's composite files used to
// run are decomposed before any backend (tests/unit/runtime/decompositions_test.cc).
// Expected values are PyTorch's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

Tensor iota(DType dtype, const Shape& sizes) {
  std::vector<double> v(shape_numel(sizes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make(dtype, sizes, v);
}

TEST(CompositeShape, Diagonal) {
  Tensor x = iota(DType::kFloat32, {3, 4});
  EXPECT_EQ(values(call1("aten.diagonal.default", {x, i64(1), i64(0), i64(1)})),
            (std::vector<double>{1, 6, 11}));
  EXPECT_EQ(values(call1("aten.diagonal.default", {x, i64(-1), i64(0), i64(1)})),
            (std::vector<double>{4, 9}));
  EXPECT_EQ(call1("aten.diagonal.default", {x, i64(9), i64(0), i64(1)}).numel(), 0);
  EXPECT_EQ(call_error("aten.diagonal.default", {x, i64(0), i64(1), i64(-1)}).kind(),
            ErrorKind::kBadInput);
}

TEST(CompositeMath, NativeGroupNorm) {
  Tensor g = iota(DType::kFloat32, {1, 4, 2});
  Tensor w = make(DType::kFloat32, {4}, {1, 2, 1, 1});
  Tensor b = make(DType::kFloat32, {4}, {0, 0, 1, 0});
  auto native =
      call("aten.native_group_norm.default", {g, w, b, i64(1), i64(4), i64(2), i64(2), f64(1e-5)});
  ASSERT_TRUE(native.ok()) << native.error().message();
  ASSERT_EQ(native->size(), 3u);
  expect_near(values((*native)[0]), {-1.3416355, -0.4472119, 0.8944235, 2.6832707, -0.3416355,
                                     0.5527881, 0.4472120, 1.3416356});
  EXPECT_EQ((*native)[1].sizes(), (Shape{1, 2}));
  EXPECT_EQ(values((*native)[1]), (std::vector<double>{1.5, 5.5}));
  const double rstd = 1.0 / std::sqrt(1.25 + 1e-5);  // both groups have variance 1.25
  expect_near(values((*native)[2]), {rstd, rstd});
  EXPECT_EQ(call_error("aten.native_group_norm.default",
                       {g, none(), none(), i64(1), i64(4), i64(2), i64(3), f64(1e-5)})
                .kind(),
            ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
