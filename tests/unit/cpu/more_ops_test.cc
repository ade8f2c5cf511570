// Kernels the keep form records as written: softmax/log_softmax.int, layer_norm/rms_norm front
// doors, std/var/prod, min/argmin/max/min, fmod, bitwise and logical xor, masked_fill,
// clamp_min/max, float math and activations, sign/isnan/isinf,
// tril/triu/flip/roll/constant_pad_nd/stack, new_* factories and repeat_interleave.self_Tensor.
// Expected values are PyTorch 2.11's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  const std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

Tensor x23() { return make(DType::kFloat32, {2, 3}, {1, -2, 3, 0.5, 4, -1}); }

TEST(MoreOps, SoftmaxWithDtype) {
  Tensor s = call1("aten.softmax.int", {x23(), i64(1), none()});
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  expect_near(s, {0.11849965, 0.00589975, 0.87560058, 0.02912176, 0.96438032, 0.00649794});
  Tensor h = make(DType::kFloat16, {2, 3}, {1, -2, 3, 0.5, 4, -1});
  Tensor l = call1("aten.log_softmax.int", {h, i64(0), DType::kFloat32});
  EXPECT_EQ(l.dtype(), DType::kFloat32);
  expect_near(l, {-0.47407699, -6.00247574, -0.01814996, -0.97407699, -0.00247565, -4.01814985});
  EXPECT_EQ(
      call_error("aten.softmax.int", {make(DType::kInt64, {2}, {1, 2}), i64(0), none()}).kind(),
      ErrorKind::kBadInput);
}

TEST(MoreOps, LayerNormAndRmsNorm) {
  Tensor w = make(DType::kFloat32, {3}, {1, 2, 0.5});
  expect_near(call1("aten.rms_norm.default", {x23(), ints({3}), w, none()}),
              {0.46291006, -1.85164022, 0.69436508, 0.20851441, 3.33623052, -0.20851441});
  expect_near(call1("aten.layer_norm.default", {x23(), ints({3}), none(), none(), f64(1e-5), true}),
              {0.16222124, -1.29776967, 1.13554859, -0.31822252, 1.35244584, -1.03422320});
  // bf16: normalised and weighted in float, rounded once; eps None is float's epsilon.
  Tensor b = make(DType::kBFloat16, {1, 2}, {3, 4});
  Tensor r = call1("aten.rms_norm.default", {b, ints({2}), none(), none()});
  EXPECT_EQ(r.dtype(), DType::kBFloat16);
  EXPECT_EQ(values(r), (std::vector<double>{0.84765625, 1.1328125}));
  auto fused = call("aten._fused_rms_norm.default", {b, ints({2}), none(), none()});
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(values((*fused)[0]), values(r));
  EXPECT_EQ((*fused)[1].dtype(), DType::kFloat32);  // rstd in the compute type
  EXPECT_EQ((*fused)[1].sizes(), (Shape{1, 1}));
  expect_near((*fused)[1], {0.28284271});
  EXPECT_EQ(call_error("aten.rms_norm.default", {x23(), ints({2}), none(), none()}).kind(),
            ErrorKind::kShapeMismatch);
}

TEST(MoreOps, StdVarProd) {
  expect_near(call1("aten.std.dim", {x23(), ints({1}), true, false}), {2.51661158, 2.56580067});
  expect_near(call1("aten.var.correction", {x23(), none(), f64(0), false}), {4.36805534});
  expect_near(call1("aten.var.dim", {x23(), ints({0}), false, true}), {0.0625, 9.0, 4.0});
  Tensor i = make(DType::kInt32, {2, 3}, {1, -2, 3, 2, 4, -1});
  Tensor p = call1("aten.prod.default", {i, none()});
  EXPECT_EQ(p.dtype(), DType::kInt64);
  EXPECT_EQ(values(p), (std::vector<double>{48}));
  Tensor pd = call1("aten.prod.dim_int", {x23(), i64(1), true, none()});
  EXPECT_EQ(pd.sizes(), (Shape{2, 1}));
  EXPECT_EQ(values(pd), (std::vector<double>{-6, -2}));
}

TEST(MoreOps, MinArgminMaxMin) {
  Tensor x = make(DType::kFloat32, {2, 3}, {3, 1, 1, kNan, -5, 2});
  auto r = call("aten.min.dim", {x, i64(1), false});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values((*r)[1]), (std::vector<double>{1, 0}));  // first minimum; NaN wins
  EXPECT_EQ(values(call1("aten.argmin.default", {x23(), none(), false})), (std::vector<double>{1}));
  EXPECT_EQ(values(call1("aten.argmin.default", {x23(), i64(0), true})),
            (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(values(call1("aten.max.default", {x23()})), (std::vector<double>{4}));
  EXPECT_EQ(values(call1("aten.min.default", {x23()})), (std::vector<double>{-2}));
  EXPECT_TRUE(std::isnan(values(call1("aten.max.default", {x}))[0]));
  EXPECT_EQ(call_error("aten.min.default", {make(DType::kFloat32, {0}, {})}).kind(),
            ErrorKind::kShapeMismatch);
}

TEST(MoreOps, FmodAndFloorDivide) {
  Tensor i = make(DType::kInt32, {2}, {-7, 7});
  Tensor j = make(DType::kInt64, {2}, {2, -2});
  Tensor f = call1("aten.fmod.Tensor", {i, j});
  EXPECT_EQ(f.dtype(), DType::kInt64);
  EXPECT_EQ(values(f), (std::vector<double>{-1, 1}));  // the dividend's sign
  EXPECT_EQ(values(call1("aten.fmod.Scalar", {make(DType::kInt64, {2}, {-7, 7}), f64(2.5)})),
            (std::vector<double>{-2, 2}));
  EXPECT_EQ(call_error("aten.fmod.Tensor", {i, make(DType::kInt64, {2}, {0, 1})}).kind(),
            ErrorKind::kBadInput);
  EXPECT_EQ(values(call1("aten.floor_divide.default",
                         {make(DType::kInt64, {2}, {-7, 7}), make(DType::kInt64, {2}, {2, 2})})),
            (std::vector<double>{-4, 3}));
}

TEST(MoreOps, BitwiseAndLogicalXor) {
  Tensor i = make(DType::kInt32, {3}, {12, -1, 5});
  Tensor j = make(DType::kInt64, {3}, {10, 6, 3});
  Tensor a = call1("aten.bitwise_and.Tensor", {i, j});
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_EQ(values(a), (std::vector<double>{8, 6, 1}));
  EXPECT_EQ(values(call1("aten.__or__.Tensor", {i, j})), (std::vector<double>{14, -1, 7}));
  EXPECT_EQ(values(call1("aten.__xor__.Scalar", {i, i64(-1)})), (std::vector<double>{-13, 0, -6}));
  Tensor s = call1("aten.bitwise_or.Scalar", {i, i64(3)});
  EXPECT_EQ(s.dtype(), DType::kInt32);
  Tensor b = make(DType::kBool, {2}, {1, 0});
  Tensor bx = call1("aten.bitwise_xor.Scalar", {b, true});
  EXPECT_EQ(bx.dtype(), DType::kBool);
  EXPECT_EQ(values(bx), (std::vector<double>{0, 1}));
  EXPECT_EQ(values(call1("aten.bitwise_xor.Scalar", {b, i64(3)})), (std::vector<double>{2, 3}));
  EXPECT_EQ(call_error("aten.bitwise_and.Tensor", {x23(), j}).kind(), ErrorKind::kBadInput);
  Tensor lx = call1("aten.logical_xor.default", {make(DType::kFloat32, {3}, {0, kNan, 2}),
                                                 make(DType::kInt64, {3}, {1, 1, 0})});
  EXPECT_EQ(lx.dtype(), DType::kBool);
  EXPECT_EQ(values(lx), (std::vector<double>{1, 0, 1}));
}

TEST(MoreOps, MaskedFillAndClampOneSide) {
  Tensor x = make(DType::kInt64, {3}, {1, 2, 3});
  Tensor m = make(DType::kBool, {2, 3}, {1, 0, 1, 0, 0, 1});
  Tensor r = call1("aten.masked_fill.Scalar", {x, m, f64(7.9)});
  EXPECT_EQ(r.sizes(), (Shape{2, 3}));  // self and mask broadcast
  EXPECT_EQ(values(r), (std::vector<double>{7, 2, 7, 1, 2, 7}));
  Tensor v = make(DType::kFloat64, {}, {2.5});
  expect_near(call1("aten.masked_fill.Tensor", {x23(), m, v}), {2.5, -2, 2.5, 0.5, 4, 2.5});
  EXPECT_EQ(call_error("aten.masked_fill.Scalar", {x, make(DType::kUInt8, {3}, {1, 0, 1}), i64(1)})
                .kind(),
            ErrorKind::kBadInput);
  Tensor c = call1("aten.clamp_min.default", {x, f64(2.5)});
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(values(c), (std::vector<double>{2.5, 2.5, 3}));
  EXPECT_EQ(values(call1("aten.clamp_max.Tensor", {x, make(DType::kInt64, {1}, {2})})),
            (std::vector<double>{1, 2, 2}));
  // A NaN bound fills with NaN here (clamp with one NaN bound does not).
  EXPECT_TRUE(std::isnan(values(call1("aten.clamp_min.default", {x23(), f64(kNan)}))[0]));
  EXPECT_EQ(values(call1("aten.clamp.default", {x23(), f64(kNan), none()}))[0], 1);
}

TEST(MoreOps, FloatMathAndActivations) {
  Tensor p = make(DType::kFloat32, {2}, {0.5, 2});
  expect_near(call1("aten.log1p.default", {p}), {std::log1p(0.5), std::log1p(2.0)});
  expect_near(call1("aten.expm1.default", {p}), {std::expm1(0.5), std::expm1(2.0)});
  expect_near(call1("aten.log2.default", {p}), {-1, 1});
  const std::vector<double> as = values(call1("aten.asin.default", {p}));
  EXPECT_NEAR(as[0], std::asin(0.5), 1e-6);
  EXPECT_TRUE(std::isnan(as[1]));
  Tensor i = make(DType::kInt64, {2}, {1, -1});
  Tensor at = call1("aten.atan2.default", {i, make(DType::kInt64, {2}, {1, 1})});
  EXPECT_EQ(at.dtype(), DType::kFloat32);
  expect_near(at, {M_PI / 4, -M_PI / 4});
  Tensor a = make(DType::kFloat32, {4}, {-1, 0, 2, 30});
  expect_near(call1("aten.softplus.default", {a, i64(2), i64(3)}), {0.06346400, 0.34657359, 2, 30});
  expect_near(call1("aten.elu.default", {a, f64(0.5), i64(2), i64(1)}), {-0.63212055, 0, 4, 60});
  expect_near(call1("aten.leaky_relu.default", {a, f64(0.2)}), {-0.2, 0, 2, 30});
  expect_near(call1("aten.hardtanh.default", {a, f64(-0.5), i64(2)}), {-0.5, 0, 2, 2});
  Tensor ih = call1("aten.hardtanh.default", {make(DType::kInt64, {2}, {-3, 3}), i64(-1), i64(1)});
  EXPECT_EQ(ih.dtype(), DType::kInt64);
  EXPECT_EQ(values(ih), (std::vector<double>{-1, 1}));
  EXPECT_EQ(call_error("aten.elu.default", {i, i64(1), i64(1), i64(1)}).kind(),
            ErrorKind::kBadInput);
}

TEST(MoreOps, SignIsnanIsinf) {
  Tensor x = make(DType::kFloat32, {4}, {-0.0, kNan, -3, kInf});
  Tensor s = call1("aten.sign.default", {x});
  EXPECT_EQ(values(s), (std::vector<double>{0, 0, -1, 1}));
  EXPECT_FALSE(std::signbit(values(s)[0]));
  EXPECT_EQ(values(call1("aten.sign.default", {make(DType::kInt32, {3}, {-4, 0, 9})})),
            (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(values(call1("aten.isnan.default", {x})), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(values(call1("aten.isinf.default", {x})), (std::vector<double>{0, 0, 0, 1}));
  Tensor ii = call1("aten.isinf.default", {make(DType::kInt64, {1}, {5})});
  EXPECT_EQ(ii.dtype(), DType::kBool);
  EXPECT_EQ(values(ii), (std::vector<double>{0}));
}

Tensor iota(DType dtype, const Shape& sizes) {
  std::vector<double> v(shape_numel(sizes));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k);
  return make(dtype, sizes, v);
}

TEST(MoreOps, TriFlipRollPadStack) {
  Tensor x = iota(DType::kInt64, {2, 3});
  EXPECT_EQ(values(call1("aten.tril.default", {x, i64(0)})),
            (std::vector<double>{0, 0, 0, 3, 4, 0}));
  EXPECT_EQ(values(call1("aten.triu.default", {x, i64(1)})),
            (std::vector<double>{0, 1, 2, 0, 0, 5}));
  EXPECT_EQ(values(call1("aten.flip.default", {x, ints({0, 1})})),
            (std::vector<double>{5, 4, 3, 2, 1, 0}));
  // flip of a transposed view reads through its strides.
  Tensor t = call1("aten.t.default", {x});
  EXPECT_EQ(values(call1("aten.flip.default", {t, ints({1})})),
            (std::vector<double>{3, 0, 4, 1, 5, 2}));
  EXPECT_EQ(values(call1("aten.roll.default", {x, ints({1, -1}), ints({0, 1})})),
            (std::vector<double>{4, 5, 3, 1, 2, 0}));
  EXPECT_EQ(values(call1("aten.roll.default", {x, ints({2}), ints({})})),
            (std::vector<double>{4, 5, 0, 1, 2, 3}));
  Tensor p = call1("aten.constant_pad_nd.default", {x, ints({-1, 2, 1, 0}), i64(9)});
  EXPECT_EQ(p.sizes(), (Shape{3, 4}));
  EXPECT_EQ(values(p), (std::vector<double>{9, 9, 9, 9, 1, 2, 9, 9, 4, 5, 9, 9}));
  // (aten.pad reaches no backend: decompose_composites makes it constant_pad_nd.)
  EXPECT_EQ(values(call1("aten.constant_pad_nd.default", {x, ints({1, 0}), i64(0)})),
            (std::vector<double>{0, 0, 1, 2, 0, 3, 4, 5}));
  Tensor y = make(DType::kFloat32, {2, 3}, {10, 11, 12, 13, 14, 15});
  Tensor s = call1("aten.stack.default", {std::vector<Tensor>{x, y}, i64(-1)});
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(s.sizes(), (Shape{2, 3, 2}));
  EXPECT_EQ(values(s), (std::vector<double>{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}));
  EXPECT_EQ(call_error("aten.stack.default", {std::vector<Tensor>{x, t}, i64(0)}).kind(),
            ErrorKind::kShapeMismatch);
}

TEST(MoreOps, NewFactoriesAndRepeatInterleave) {
  Tensor i = make(DType::kInt32, {2}, {1, 2});
  Tensor z =
      call1("aten.new_full.default", {i, ints({2, 2}), f64(7.5), none(), none(), none(), none()});
  EXPECT_EQ(z.dtype(), DType::kInt32);  // self's dtype, not the fill value's
  EXPECT_EQ(values(z), (std::vector<double>{7, 7, 7, 7}));
  Tensor o =
      call1("aten.new_ones.default", {i, ints({3}), DType::kFloat16, none(), none(), none()});
  EXPECT_EQ(o.dtype(), DType::kFloat16);
  EXPECT_EQ(values(o), (std::vector<double>{1, 1, 1}));
  Tensor x = iota(DType::kFloat32, {2, 3});
  Tensor r = call1("aten.repeat_interleave.self_Tensor",
                   {x, make(DType::kInt64, {3}, {1, 0, 2}), i64(1), none()});
  EXPECT_EQ(r.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(r), (std::vector<double>{0, 2, 2, 3, 5, 5}));
  Tensor flat = call1("aten.repeat_interleave.self_Tensor",
                      {iota(DType::kInt64, {3}), make(DType::kInt64, {}, {2}), none(), i64(6)});
  EXPECT_EQ(values(flat), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(call_error("aten.repeat_interleave.self_Tensor",
                       {x, make(DType::kInt64, {2}, {1, 1}), i64(1), none()})
                .kind(),
            ErrorKind::kShapeMismatch);
}

}  // namespace
}  // namespace splice::cpu
