// slice_scatter / select_scatter: Python slice bounds, dtype conversion of src, shape and
// index errors.
#include <gtest/gtest.h>

#include <limits>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

const int64_t kMax = std::numeric_limits<int64_t>::max();

Tensor zeros(DType dtype, const Shape& sizes) { return Tensor::empty(dtype, sizes).value(); }

TEST(SliceScatter, BoundsNormalisation) {
  Tensor x = zeros(DType::kInt64, {6});
  Tensor src2 = make(DType::kInt64, {2}, {1, 2});
  // Open end (INT64_MAX) from a negative start.
  EXPECT_EQ(
      values(call1("aten.slice_scatter.default", {x, src2, i64(0), i64(-2), i64(kMax), i64(1)})),
      (std::vector<double>{0, 0, 0, 0, 1, 2}));
  // None start/end with step 3.
  EXPECT_EQ(values(call1("aten.slice_scatter.default", {x, src2, i64(0), none(), none(), i64(3)})),
            (std::vector<double>{1, 0, 0, 2, 0, 0}));
  // start below -size clamps to 0; end > size clamps to size.
  Tensor src6 = make(DType::kInt64, {6}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(
      values(call1("aten.slice_scatter.default", {x, src6, i64(0), i64(-100), i64(100), i64(1)})),
      (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // end < start: an empty slice, self returned unchanged as a new tensor.
  Tensor x2 = make(DType::kInt64, {6}, {9, 9, 9, 9, 9, 9});
  Tensor empty_src = zeros(DType::kInt64, {0});
  Tensor r = call1("aten.slice_scatter.default", {x2, empty_src, i64(0), i64(4), i64(2), i64(1)});
  EXPECT_EQ(values(r), values(x2));
  EXPECT_NE(r.storage(), x2.storage());
  // Negative dim on a 2-D tensor.
  Tensor y = zeros(DType::kFloat32, {2, 3});
  Tensor col = make(DType::kFloat32, {2, 1}, {7, 8});
  EXPECT_EQ(values(call1("aten.slice_scatter.default", {y, col, i64(-1), i64(-1), none(), i64(1)})),
            (std::vector<double>{0, 0, 7, 0, 0, 8}));
}

TEST(SliceScatter, CastsSrcToSelfDtype) {
  // i32 x, src = full((4, 8), 2.7): the slice holds 2, so (result * 3) is 6.
  Tensor x = zeros(DType::kInt32, {4, 8});
  Tensor src = call1("aten.full.default", {ints({4, 8}), f64(2.7), none(), none(), none(), none()});
  Tensor r = call1("aten.slice_scatter.default", {x, src, i64(1), i64(0), i64(8), i64(1)});
  EXPECT_EQ(r.dtype(), DType::kInt32);
  Tensor m = call1("aten.mul.Scalar", {r, i64(3)});
  for (double v : values(m)) EXPECT_EQ(v, 6);
  Tensor u = zeros(DType::kUInt8, {2});
  Tensor neg = make(DType::kFloat32, {1}, {-1.0});
  EXPECT_EQ(values(call1("aten.slice_scatter.default", {u, neg, i64(0), i64(1), none(), i64(1)})),
            (std::vector<double>{0, 255}));
  Tensor b = zeros(DType::kBool, {2});
  Tensor half = make(DType::kFloat32, {2}, {0.5, 0.0});
  EXPECT_EQ(values(call1("aten.slice_scatter.default", {b, half, i64(0), none(), none(), i64(1)})),
            (std::vector<double>{1, 0}));
}

TEST(SliceScatter, Errors) {
  Tensor x = zeros(DType::kFloat32, {2, 4});
  Tensor src = zeros(DType::kFloat32, {2, 3});
  Error e = call_error("aten.slice_scatter.default", {x, src, i64(1), i64(0), i64(2), i64(1)});
  EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  EXPECT_NE(e.message().find("[2, 3]"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("[2, 2]"), std::string::npos) << e.message();
  Tensor src2 = zeros(DType::kFloat32, {2, 2});
  EXPECT_EQ(
      call_error("aten.slice_scatter.default", {x, src2, i64(1), i64(0), i64(2), i64(0)}).kind(),
      ErrorKind::kBadInput);
  EXPECT_EQ(
      call_error("aten.slice_scatter.default", {x, src2, i64(2), i64(0), i64(2), i64(1)}).kind(),
      ErrorKind::kOutOfRange);
}

TEST(SelectScatter, NegativeIndexAndErrors) {
  Tensor x = zeros(DType::kFloat16, {2, 4});
  Tensor src = make(DType::kFloat32, {2}, {1.5, -2.0});
  Tensor r = call1("aten.select_scatter.default", {x, src, i64(1), i64(-1)});
  EXPECT_EQ(r.dtype(), DType::kFloat16);
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 0, 1.5, 0, 0, 0, -2}));
  Error e = call_error("aten.select_scatter.default", {x, src, i64(1), i64(4)});
  EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(e.message(),
            "aten.select_scatter.default: index 4 is out of range for dim 1 of size 4");
  EXPECT_EQ(call_error("aten.select_scatter.default", {x, src, i64(1), i64(-5)}).kind(),
            ErrorKind::kOutOfRange);
  Tensor bad = zeros(DType::kFloat16, {4});
  EXPECT_EQ(call_error("aten.select_scatter.default", {x, bad, i64(1), i64(0)}).kind(),
            ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
