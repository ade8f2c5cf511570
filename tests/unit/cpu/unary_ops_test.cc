// Unary pointwise kernels added with the activation/rounding family: silu, gelu, reciprocal,
// erf, floor/ceil/round (+decimals), bitwise_not, and the functional fill.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(Unary, SiluAndGelu) {
  Tensor x = make(DType::kFloat32, {3}, {0, 1, -1});
  Tensor s = call1("aten.silu.default", {x});
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  expect_near_all(values(s), {0, 0.7310585975646973, -0.2689414322376251}, 1e-7);
  Tensor g = call1("aten.gelu.default", {x, std::string("none")});
  expect_near_all(values(g), {0, 0.8413447460685429, -0.15865525393145707}, 1e-6);
  Tensor gt = call1("aten.gelu.default", {x, std::string("tanh")});
  EXPECT_NEAR(values(gt)[1], 0.8411919906082768, 1e-6);
  // Half computes in float and rounds once: silu(1) = 0.73106 -> half 0.7309570...
  Tensor h = call1("aten.silu.default", {make(DType::kFloat16, {1}, {1})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(values(h)[0], 0.73095703125);
  // No integer promotion for silu/gelu, and only 'none'/'tanh' approximations.
  call_error("aten.silu.default", {make(DType::kInt64, {1}, {1})});
  call_error("aten.gelu.default", {make(DType::kInt32, {1}, {1}), std::string("none")});
  call_error("aten.gelu.default", {x, std::string("fast")});
}

TEST(Unary, ReciprocalAndErfPromoteIntegers) {
  Tensor r = call1("aten.reciprocal.default", {make(DType::kInt32, {3}, {2, 0, -4})});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  auto v = values(r);
  EXPECT_EQ(v[0], 0.5);
  EXPECT_TRUE(std::isinf(v[1]) && v[1] > 0);
  EXPECT_EQ(v[2], -0.25);
  Tensor e = call1("aten.erf.default", {make(DType::kFloat64, {2}, {0.5, 0})});
  EXPECT_EQ(e.dtype(), DType::kFloat64);
  EXPECT_DOUBLE_EQ(values(e)[0], std::erf(0.5));
  Tensor eb = call1("aten.erf.default", {make(DType::kBool, {2}, {1, 0})});
  EXPECT_EQ(eb.dtype(), DType::kFloat32);
  EXPECT_NEAR(values(eb)[0], 0.8427007929497149, 1e-7);
}

TEST(Unary, FloorCeilRound) {
  Tensor x = make(DType::kFloat32, {6}, {-1.5, -0.5, 0.5, 1.5, 2.5, 2.7});
  EXPECT_EQ(values(call1("aten.floor.default", {x})), (std::vector<double>{-2, -1, 0, 1, 2, 2}));
  EXPECT_EQ(values(call1("aten.ceil.default", {x})), (std::vector<double>{-1, 0, 1, 2, 3, 3}));
  auto r = values(call1("aten.round.default", {x}));
  EXPECT_EQ(r, (std::vector<double>{-2, 0, 0, 2, 2, 3}));  // half to even
  EXPECT_TRUE(std::signbit(r[1]));                         // round(-0.5) is -0.0
  // Integers come back unchanged with their dtype; bool is rejected.
  Tensor i = make(DType::kInt64, {2}, {-3, 7});
  Tensor fi = call1("aten.floor.default", {i});
  EXPECT_EQ(fi.dtype(), DType::kInt64);
  EXPECT_EQ(values(fi), (std::vector<double>{-3, 7}));
  EXPECT_EQ(call1("aten.round.default", {make(DType::kUInt8, {1}, {200})}).dtype(), DType::kUInt8);
  call_error("aten.ceil.default", {make(DType::kBool, {1}, {1})});
}

TEST(Unary, RoundDecimals) {
  Tensor x = make(DType::kFloat32, {2}, {0.125, 0.375});
  auto v = values(call1("aten.round.decimals", {x, i64(2)}));
  EXPECT_EQ(v[0], static_cast<double>(0.12f));  // 12.5 -> 12 (half to even)
  EXPECT_EQ(v[1], static_cast<double>(0.38f));
  Tensor big = make(DType::kFloat64, {3}, {12345, 150, 250});
  EXPECT_EQ(values(call1("aten.round.decimals", {big, i64(-2)})),
            (std::vector<double>{12300, 200, 200}));
  EXPECT_EQ(values(call1("aten.round.decimals", {big, i64(0)})),
            (std::vector<double>{12345, 150, 250}));
  call_error("aten.round.decimals", {make(DType::kInt32, {1}, {1}), i64(1)});
}

TEST(Unary, BitwiseNot) {
  Tensor i = call1("aten.bitwise_not.default", {make(DType::kInt8, {3}, {0, 5, -1})});
  EXPECT_EQ(i.dtype(), DType::kInt8);
  EXPECT_EQ(values(i), (std::vector<double>{-1, -6, 0}));
  EXPECT_EQ(values(call1("aten.bitwise_not.default", {make(DType::kUInt8, {1}, {0})})),
            (std::vector<double>{255}));
  Tensor b = call1("aten.bitwise_not.default", {make(DType::kBool, {2}, {1, 0})});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(values(b), (std::vector<double>{0, 1}));
  call_error("aten.bitwise_not.default", {make(DType::kFloat32, {1}, {1})});
}

TEST(Fill, ScalarAndTensorValues) {
  Tensor self = make(DType::kInt32, {2, 2}, {9, 9, 9, 9});
  Tensor f = call1("aten.fill.Scalar", {self, f64(2.7)});
  EXPECT_EQ(f.dtype(), DType::kInt32);
  EXPECT_EQ(f.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(f), (std::vector<double>{2, 2, 2, 2}));
  EXPECT_EQ(values(self)[0], 9);  // functional: the input is untouched
  Tensor h = call1("aten.fill.Scalar", {make(DType::kFloat16, {1}, {0}), f64(1.0 / 3.0)});
  EXPECT_EQ(values(h)[0], 0.333251953125);
  Tensor t = call1("aten.fill.Tensor",
                   {make(DType::kInt64, {3}, {0, 0, 0}), make(DType::kFloat64, {}, {5.5})});
  EXPECT_EQ(t.dtype(), DType::kInt64);
  EXPECT_EQ(values(t), (std::vector<double>{5, 5, 5}));
  // A negative int wraps into uint8 (c10 allows down to -255); beyond the range is an error.
  EXPECT_EQ(values(call1("aten.fill.Scalar", {make(DType::kUInt8, {1}, {0}), i64(-1)})),
            (std::vector<double>{255}));
  call_error("aten.fill.Scalar", {make(DType::kUInt8, {1}, {0}), i64(300)});
  call_error("aten.fill.Scalar", {make(DType::kFloat16, {1}, {0}), i64(70000)});
  call_error("aten.fill.Scalar", {make(DType::kBool, {1}, {0}), i64(2)});
  EXPECT_TRUE(std::isinf(
      values(call1("aten.fill.Scalar", {make(DType::kFloat16, {1}, {0}), f64(INFINITY)}))[0]));
  call_error("aten.fill.Tensor",
             {make(DType::kFloat32, {2}, {0, 0}), make(DType::kFloat32, {1}, {1})});
}

}  // namespace
}  // namespace splice::cpu
