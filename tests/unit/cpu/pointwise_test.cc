// Pointwise kernels: broadcasting, dtype rules, integer division errors, unary float ops,
// comparisons and where.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

TEST(Binary, AddBroadcastsAndAlpha) {
  Tensor a = make(DType::kFloat32, {2, 1}, {1, 2});
  Tensor b = make(DType::kFloat32, {3}, {10, 20, 30});
  Tensor r = call1("aten.add.Tensor", {a, b, i64(2)});
  EXPECT_EQ(r.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(r), (std::vector<double>{21, 41, 61, 22, 42, 62}));
  Tensor s = call1("aten.sub.Tensor", {a, b, i64(1)});
  EXPECT_EQ(values(s), (std::vector<double>{-9, -19, -29, -8, -18, -28}));
}

TEST(Binary, StridedInputs) {
  Tensor a = make(DType::kInt64, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor at = call1("aten.t.default", {a});  // [3, 2] strided view
  Tensor b = make(DType::kInt64, {3, 1}, {100, 200, 300});
  EXPECT_EQ(values(call1("aten.add.Tensor", {at, b, i64(1)})),
            (std::vector<double>{100, 103, 201, 204, 302, 305}));
}

TEST(Binary, PromotionOfScalars) {
  Tensor i = make(DType::kInt32, {3}, {1, 2, 3});
  Tensor r = call1("aten.add.Scalar", {i, f64(0.5), i64(1)});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{1.5, 2.5, 3.5}));
  Tensor m = call1("aten.mul.Scalar", {i, i64(3)});
  EXPECT_EQ(m.dtype(), DType::kInt32);
  EXPECT_EQ(values(m), (std::vector<double>{3, 6, 9}));
  Tensor bl = make(DType::kBool, {2}, {1, 0});
  Tensor bi = call1("aten.add.Scalar", {bl, i64(2), i64(1)});
  EXPECT_EQ(bi.dtype(), DType::kInt64);
  EXPECT_EQ(values(bi), (std::vector<double>{3, 2}));
  // Integer overflow wraps.
  Tensor big = make(DType::kInt32, {1}, {2147483647});
  EXPECT_EQ(values(call1("aten.add.Scalar", {big, i64(1), i64(1)})),
            (std::vector<double>{-2147483648.0}));
}

TEST(Binary, HalfComputesInFloatAndRoundsOnce) {
  Tensor h = make(DType::kFloat16, {1}, {1.0});
  Tensor r = call1("aten.mul.Scalar", {h, f64(1.1)});
  EXPECT_EQ(r.dtype(), DType::kFloat16);
  // 1.0 * 1.1 in float, rounded to half: 1.099609375.
  EXPECT_EQ(values(r)[0], 1.099609375);
  // A 0-d float32 second operand keeps float precision (PyTorch's opmath scalar):
  // 3 * (1 + 2^-11) = 3.00146484375 rounds to half 3.001953125; rounding the operand to half
  // first (1 + 2^-11 ties to 1.0) would give 3.
  Tensor h3 = make(DType::kFloat16, {1}, {3.0});
  Tensor s = make(DType::kFloat32, {}, {1.0 + std::ldexp(1.0, -11)});
  Tensor p = call1("aten.mul.Tensor", {h3, s});
  EXPECT_EQ(p.dtype(), DType::kFloat16);
  EXPECT_EQ(values(p)[0], 3.001953125);
  // 3 + 2^-11 computed in float is below half a half-ulp above 3: rounds to 3.
  Tensor q = call1("aten.add.Scalar", {h3, f64(std::ldexp(1.0, -11)), i64(1)});
  EXPECT_EQ(values(q)[0], 3.0);
}

TEST(Binary, Division) {
  Tensor a = make(DType::kInt64, {4}, {7, -7, 1, 0});
  Tensor b = make(DType::kInt64, {4}, {2, 2, 0, 0});
  Tensor t = call1("aten.div.Tensor", {a, b});
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  auto v = values(t);
  EXPECT_EQ(v[0], 3.5);
  EXPECT_EQ(v[1], -3.5);
  EXPECT_TRUE(std::isinf(v[2]));
  EXPECT_TRUE(std::isnan(v[3]));
  Tensor a2 = make(DType::kInt64, {2}, {7, -7});
  Tensor b2 = make(DType::kInt64, {2}, {2, 2});
  EXPECT_EQ(values(call1("aten.div.Tensor_mode", {a2, b2, std::string("floor")})),
            (std::vector<double>{3, -4}));
  EXPECT_EQ(values(call1("aten.div.Tensor_mode", {a2, b2, std::string("trunc")})),
            (std::vector<double>{3, -3}));
  Error e = call_error("aten.div.Tensor_mode", {a, b, std::string("floor")});
  EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  Tensor f = make(DType::kFloat32, {2}, {-7.5, 7.5});
  EXPECT_EQ(values(call1("aten.div.Scalar_mode", {f, f64(2.0), std::string("floor")})),
            (std::vector<double>{-4, 3}));
}

TEST(Binary, BoolSubtractionIsRejected) {
  Tensor b = make(DType::kBool, {1}, {1});
  EXPECT_EQ(call_error("aten.sub.Tensor", {b, b, i64(1)}).kind(), ErrorKind::kBadInput);
}

TEST(Binary, Pow) {
  Tensor i = make(DType::kInt64, {3}, {2, 3, -2});
  EXPECT_EQ(values(call1("aten.pow.Tensor_Scalar", {i, i64(3)})), (std::vector<double>{8, 27, -8}));
  Tensor f = call1("aten.pow.Tensor_Scalar", {i, f64(0.5)});
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(values(f)[0], static_cast<double>(std::pow(2.0f, 0.5f)));
  EXPECT_EQ(call_error("aten.pow.Tensor_Scalar", {i, i64(-1)}).kind(), ErrorKind::kBadInput);
  Tensor e = make(DType::kInt64, {3}, {0, 1, 2});
  Tensor s = call1("aten.pow.Scalar", {i64(2), e});
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(values(s), (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(values(call1("aten.pow.Tensor_Tensor", {i, e})), (std::vector<double>{1, 3, 4}));
}

TEST(Unary, FloatOpsPromoteIntegers) {
  Tensor i = make(DType::kInt32, {2}, {4, 9});
  Tensor r = call1("aten.sqrt.default", {i});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{2, 3}));
  Tensor z = make(DType::kFloat32, {1}, {0});
  EXPECT_EQ(values(call1("aten.sigmoid.default", {z})), (std::vector<double>{0.5}));
  EXPECT_EQ(values(call1("aten.exp.default", {z})), (std::vector<double>{1}));
  Tensor h = make(DType::kFloat16, {1}, {4});
  EXPECT_EQ(values(call1("aten.rsqrt.default", {h})), (std::vector<double>{0.5}));
  EXPECT_EQ(values(call1("aten.neg.default", {i})), (std::vector<double>{-4, -9}));
  Tensor b = make(DType::kFloat32, {3}, {0, 2, -0.0});
  Tensor n = call1("aten.logical_not.default", {b});
  EXPECT_EQ(n.dtype(), DType::kBool);
  EXPECT_EQ(values(n), (std::vector<double>{1, 0, 1}));
}

TEST(Compare, PromotesThenCompares) {
  Tensor i = make(DType::kInt32, {3}, {2, 3, 4});
  Tensor r = call1("aten.lt.Scalar", {i, f64(2.5)});
  EXPECT_EQ(r.dtype(), DType::kBool);
  EXPECT_EQ(values(r), (std::vector<double>{1, 0, 0}));
  Tensor col = make(DType::kInt64, {3, 1}, {2, 3, 9});
  EXPECT_EQ(values(call1("aten.eq.Tensor", {i, col})),
            (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 0}));
}

TEST(Where, BroadcastsAndPromotes) {
  Tensor c = make(DType::kBool, {3}, {1, 0, 1});
  Tensor x = make(DType::kInt32, {3}, {1, 2, 3});
  Tensor r = call1("aten.where.ScalarOther", {c, x, f64(0.5)});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(values(r), (std::vector<double>{1, 0.5, 3}));
  Tensor y = make(DType::kInt64, {2, 1}, {7, 8});
  Tensor s = call1("aten.where.self", {c, x, y});
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(values(s), (std::vector<double>{1, 7, 3, 1, 8, 3}));
  Tensor b = call1("aten.logical_and.default", {c, make(DType::kFloat32, {1}, {2})});
  EXPECT_EQ(values(b), (std::vector<double>{1, 0, 1}));
}

}  // namespace
}  // namespace splice::cpu
