// minimum/maximum (NaN propagation, promotion) and clamp with scalar and tensor bounds.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

const double kNaN = std::nan("");

bool same(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) ? !std::isnan(got[i]) : got[i] != want[i]) return false;
  }
  return true;
}

TEST(MinMax, NaNPropagates) {
  Tensor a = make(DType::kFloat32, {3}, {1, kNaN, 3});
  Tensor b = make(DType::kFloat32, {3}, {2, 0, kNaN});
  EXPECT_TRUE(same(values(call1("aten.maximum.default", {a, b})), {2, kNaN, kNaN}));
  EXPECT_TRUE(same(values(call1("aten.minimum.default", {a, b})), {1, kNaN, kNaN}));
}

TEST(MinMax, PromotionAndBool) {
  Tensor i = make(DType::kInt32, {2}, {1, 5});
  Tensor f = make(DType::kFloat32, {2}, {2.5, 2.5});
  Tensor m = call1("aten.maximum.default", {i, f});
  EXPECT_EQ(m.dtype(), DType::kFloat32);
  EXPECT_EQ(values(m), (std::vector<double>{2.5, 5}));
  Tensor u = make(DType::kUInt8, {1}, {200});
  Tensor s = make(DType::kInt8, {1}, {-1});
  Tensor mn = call1("aten.minimum.default", {u, s});
  EXPECT_EQ(mn.dtype(), DType::kInt16);
  EXPECT_EQ(values(mn), (std::vector<double>{-1}));
  Tensor p = make(DType::kBool, {2}, {1, 0});
  Tensor q = make(DType::kBool, {2, 1}, {0, 1});
  Tensor bm = call1("aten.maximum.default", {p, q});
  EXPECT_EQ(bm.dtype(), DType::kBool);
  EXPECT_EQ(values(bm), (std::vector<double>{1, 0, 1, 1}));
}

TEST(Clamp, ScalarBounds) {
  Tensor x = make(DType::kFloat32, {4}, {-2, 0.5, 3, kNaN});
  EXPECT_TRUE(same(values(call1("aten.clamp.default", {x, i64(-1), i64(1)})), {-1, 0.5, 1, kNaN}));
  EXPECT_TRUE(same(values(call1("aten.clamp.default", {x, none(), f64(0)})), {-2, 0, 0, kNaN}));
  // min > max: max wins.
  EXPECT_EQ(values(call1("aten.clamp.default", {make(DType::kInt64, {2}, {0, 5}), i64(3), i64(1)})),
            (std::vector<double>{1, 1}));
  // An int tensor keeps its dtype with int bounds and becomes float32 with a float bound.
  Tensor i = make(DType::kInt32, {3}, {-2, 0, 5});
  Tensor ci = call1("aten.clamp.default", {i, none(), i64(3)});
  EXPECT_EQ(ci.dtype(), DType::kInt32);
  EXPECT_EQ(values(ci), (std::vector<double>{-2, 0, 3}));
  Tensor cf = call1("aten.clamp.default", {i, f64(0.5), none()});
  EXPECT_EQ(cf.dtype(), DType::kFloat32);
  EXPECT_EQ(values(cf), (std::vector<double>{0.5, 0.5, 5}));
  // A float16 tensor stays float16 with a float bound; both bounds NaN-checked.
  Tensor h = call1("aten.clamp.default", {make(DType::kFloat16, {1}, {9}), none(), f64(1.1)});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(values(h)[0], 1.099609375);
  EXPECT_TRUE(
      same(values(call1("aten.clamp.default", {x, f64(kNaN), i64(1)})), {kNaN, kNaN, kNaN, kNaN}));
  call_error("aten.clamp.default", {x, none(), none()});
}

TEST(Clamp, TensorBounds) {
  Tensor x = make(DType::kFloat32, {3}, {-2, 0.5, 3});
  Tensor lo = make(DType::kFloat32, {1}, {-1});
  Tensor hi = make(DType::kInt64, {2, 1}, {0, 2});
  Tensor c = call1("aten.clamp.Tensor", {x, lo, hi});
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(c.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(c), (std::vector<double>{-1, 0, 0, -1, 0.5, 2}));
  // A NaN bound gives NaN when both bounds are given.
  Tensor y = make(DType::kFloat32, {3}, {5, 5, -5});
  Tensor l2 = make(DType::kFloat32, {3}, {kNaN, 0, 0});
  Tensor h2 = make(DType::kFloat32, {3}, {1, 1, 1});
  EXPECT_TRUE(same(values(call1("aten.clamp.Tensor", {y, l2, h2})), {kNaN, 1, 0}));
  // A single bound is maximum/minimum: NaN propagates from either side, ints promote.
  EXPECT_TRUE(same(values(call1("aten.clamp.Tensor", {y, l2, none()})), {kNaN, 5, 0}));
  Tensor ci = call1("aten.clamp.Tensor",
                    {make(DType::kInt32, {2}, {1, 9}), none(), make(DType::kInt64, {1}, {4})});
  EXPECT_EQ(ci.dtype(), DType::kInt64);
  EXPECT_EQ(values(ci), (std::vector<double>{1, 4}));
  call_error("aten.clamp.Tensor", {x, none(), none()});
}

}  // namespace
}  // namespace splice::cpu
