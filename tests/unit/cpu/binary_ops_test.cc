// Binary kernels: wrapped Python numbers in the self position (`2 - x` exports as
// sub.Tensor(2, x)), rsub, remainder with Python's sign rule, and comparisons with a number
// on the left; where over broadcast and strided operands (its row and element paths).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

TEST(WrappedSelf, ArithmeticWithANumberFirst) {
  Tensor x = make(DType::kInt32, {2}, {1, 5});
  Tensor s = call1("aten.sub.Tensor", {i64(2), x, i64(1)});
  EXPECT_EQ(s.dtype(), DType::kInt32);  // a wrapped int does not widen the int32 tensor
  EXPECT_EQ(values(s), (std::vector<double>{1, -3}));
  Tensor sf = call1("aten.sub.Tensor", {f64(2.5), x, i64(1)});
  EXPECT_EQ(sf.dtype(), DType::kFloat32);
  EXPECT_EQ(values(sf), (std::vector<double>{1.5, -2.5}));
  Tensor d = call1("aten.div.Tensor", {i64(1), make(DType::kInt64, {2}, {2, 4})});
  EXPECT_EQ(d.dtype(), DType::kFloat32);
  EXPECT_EQ(values(d), (std::vector<double>{0.5, 0.25}));
  Tensor m = call1("aten.mul.Tensor", {i64(3), make(DType::kFloat16, {1}, {0.5})});
  EXPECT_EQ(m.dtype(), DType::kFloat16);
  EXPECT_EQ(values(m), (std::vector<double>{1.5}));
  Tensor a = call1("aten.add.Tensor", {i64(1), make(DType::kUInt8, {1}, {255}), i64(1)});
  EXPECT_EQ(a.dtype(), DType::kUInt8);
  EXPECT_EQ(values(a), (std::vector<double>{0}));
}

TEST(WrappedSelf, Comparisons) {
  Tensor x = make(DType::kInt64, {3}, {1, 2, 3});
  EXPECT_EQ(values(call1("aten.lt.Tensor", {i64(2), x})), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(values(call1("aten.ge.Tensor", {f64(1.5), x})), (std::vector<double>{1, 0, 0}));
}

TEST(Rsub, ScalarAndTensor) {
  Tensor x = make(DType::kInt64, {3}, {1, 2, 3});
  Tensor r = call1("aten.rsub.Scalar", {x, i64(10), i64(2)});  // 10 - 2 * x
  EXPECT_EQ(r.dtype(), DType::kInt64);
  EXPECT_EQ(values(r), (std::vector<double>{8, 6, 4}));
  Tensor rf = call1("aten.rsub.Scalar", {make(DType::kInt32, {2}, {1, 2}), f64(0.5), i64(1)});
  EXPECT_EQ(rf.dtype(), DType::kFloat32);
  EXPECT_EQ(values(rf), (std::vector<double>{-0.5, -1.5}));
  Tensor a = make(DType::kFloat32, {2}, {1, 2});
  Tensor b = make(DType::kFloat32, {2, 1}, {10, 20});
  Tensor rt = call1("aten.rsub.Tensor", {a, b, i64(1)});  // b - a, broadcast
  EXPECT_EQ(rt.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(rt), (std::vector<double>{9, 8, 19, 18}));
  call_error("aten.rsub.Tensor",
             {make(DType::kBool, {1}, {1}), make(DType::kBool, {1}, {0}), i64(1)});
}

TEST(Remainder, PythonSignRule) {
  Tensor a = make(DType::kInt64, {4}, {-7, 7, -7, 7});
  Tensor b = make(DType::kInt64, {4}, {3, -3, -3, 3});
  Tensor r = call1("aten.remainder.Tensor", {a, b});
  EXPECT_EQ(r.dtype(), DType::kInt64);
  EXPECT_EQ(values(r), (std::vector<double>{2, -2, -1, 1}));
  Tensor f = call1("aten.remainder.Tensor",
                   {make(DType::kFloat32, {2}, {-7.5, 7.5}), make(DType::kFloat32, {2}, {2, -2})});
  EXPECT_EQ(values(f), (std::vector<double>{0.5, -0.5}));
  // An int tensor with a float number promotes to float32: fmod(-7, 2.5) = -2 -> 0.5.
  Tensor s = call1("aten.remainder.Scalar", {make(DType::kInt32, {2}, {-7, 6}), f64(2.5)});
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(values(s), (std::vector<double>{0.5, 1}));
  Tensor si = call1("aten.remainder.Scalar", {make(DType::kInt32, {2}, {-7, 6}), i64(-4)});
  EXPECT_EQ(si.dtype(), DType::kInt32);
  EXPECT_EQ(values(si), (std::vector<double>{-3, -2}));
  // INT64_MIN % -1 is 0 (no trap); integer remainder by zero is an error; bool is rejected.
  Tensor mn = Tensor::empty(DType::kInt64, {1}).value();
  *mn.data<int64_t>() = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(values(call1("aten.remainder.Scalar", {mn, i64(-1)})), (std::vector<double>{0}));
  call_error("aten.remainder.Tensor", {a, make(DType::kInt64, {1}, {0})});
  call_error("aten.remainder.Scalar", {make(DType::kBool, {1}, {1}), true});
  // Float remainder by zero is NaN, not an error.
  EXPECT_TRUE(std::isnan(
      values(call1("aten.remainder.Scalar", {make(DType::kFloat32, {1}, {1}), f64(0)}))[0]));
}

// where(c, x, y) element by element from the operands' values, as the reference: c [4, 1, 5]
// broadcast over dim 1, x a permuted view [4, 3, w] of a [3, 4, w] tensor, y [w] broadcast.
// w = 5 keeps every innermost dim dense or broadcast (the row path); x's innermost dim
// strided (taking every other element of a wider tensor) forces the element path.
TEST(Where, BroadcastAndStridedOperands) {
  for (const bool dense_rows : {true, false}) {
    const int64_t w = 5, xw = dense_rows ? w : 2 * w;
    std::vector<double> cv(4 * w), xv(3 * 4 * xw), yv(w);
    for (size_t i = 0; i < cv.size(); ++i) cv[i] = (i * 7) % 3 == 0;
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(i);
    for (size_t i = 0; i < yv.size(); ++i) yv[i] = -1.0 - static_cast<double>(i);
    const Tensor c = make(DType::kBool, {4, 1, w}, cv);
    const Tensor xb = make(DType::kFloat32, {3, 4, xw}, xv);
    const Tensor x = xb.view_as({4, 3, w}, {xw, 4 * xw, xw / w}, xb.offset());
    const Tensor y = make(DType::kFloat32, {w}, yv);
    const auto got = values(call1("aten.where.self", {c, x, y}));
    ASSERT_EQ(got.size(), static_cast<size_t>(4 * 3 * w));
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t k = 0; k < w; ++k) {
          const double want = cv[i * w + k] != 0 ? xv[j * 4 * xw + i * xw + k * (xw / w)] : yv[k];
          EXPECT_EQ(got[(i * 3 + j) * w + k], want) << dense_rows << " " << i << j << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace splice::cpu
