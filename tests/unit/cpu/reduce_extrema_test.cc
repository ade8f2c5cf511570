// amax/amin, max.dim, argmax, all, cumsum and var_mean: NaN handling, first-occurrence
// indices, dtype rules and empty reductions.
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

TEST(Amax, DimsKeepdimAndNaN) {
  Tensor x = make(DType::kFloat32, {2, 3}, {1, 5, 3, 4, kNaN, 0});
  Tensor m = call1("aten.amax.default", {x, ints({1}), false});
  EXPECT_EQ(m.sizes(), (Shape{2}));
  EXPECT_TRUE(same(values(m), {5, kNaN}));
  Tensor all = call1("aten.amax.default", {x, ints({}), false});  // dim=[] reduces all
  EXPECT_EQ(all.sizes(), (Shape{}));
  EXPECT_TRUE(std::isnan(values(all)[0]));
  Tensor mn = call1("aten.amin.default", {x, ints({0}), true});
  EXPECT_EQ(mn.sizes(), (Shape{1, 3}));
  EXPECT_TRUE(same(values(mn), {1, kNaN, 0}));
  Tensor i = make(DType::kInt32, {2, 2}, {-5, 2, 7, -9});
  Tensor im = call1("aten.amin.default", {i, ints({0, 1}), false});
  EXPECT_EQ(im.dtype(), DType::kInt32);
  EXPECT_EQ(values(im), (std::vector<double>{-9}));
  call_error("aten.amax.default", {make(DType::kFloat32, {2, 0}, {}), ints({1}), false});
}

TEST(MaxDim, FirstMaximumAndNaN) {
  Tensor x = make(DType::kFloat32, {2, 3}, {1, 5, 5, kNaN, 7, kNaN});
  auto r = call("aten.max.dim", {x, i64(1), false});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE(same(values((*r)[0]), {5, kNaN}));
  EXPECT_EQ((*r)[1].dtype(), DType::kInt64);
  EXPECT_EQ(values((*r)[1]), (std::vector<double>{1, 0}));
  auto c = call("aten.max.dim", {x, i64(0), true});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].sizes(), (Shape{1, 3}));
  EXPECT_TRUE(same(values((*c)[0]), {kNaN, 7, kNaN}));
  EXPECT_EQ(values((*c)[1]), (std::vector<double>{1, 1, 1}));
  // A strided (transposed) int input.
  Tensor i = make(DType::kInt64, {2, 2}, {3, 9, 3, 1});
  Tensor it = call1("aten.t.default", {i});  // [[3, 3], [9, 1]]
  auto ri = call("aten.max.dim", {it, i64(-1), false});
  ASSERT_TRUE(ri.ok());
  EXPECT_EQ(values((*ri)[0]), (std::vector<double>{3, 9}));
  EXPECT_EQ(values((*ri)[1]), (std::vector<double>{0, 0}));
}

TEST(Argmax, FlatAndAlongDim) {
  Tensor x = make(DType::kFloat32, {2, 2}, {1, 9, 9, 2});
  Tensor flat = call1("aten.argmax.default", {x, none(), false});
  EXPECT_EQ(flat.sizes(), (Shape{}));
  EXPECT_EQ(flat.dtype(), DType::kInt64);
  EXPECT_EQ(values(flat), (std::vector<double>{1}));
  EXPECT_EQ(call1("aten.argmax.default", {x, none(), true}).sizes(), (Shape{1, 1}));
  EXPECT_EQ(values(call1("aten.argmax.default", {x, i64(0), false})), (std::vector<double>{1, 0}));
  Tensor n = make(DType::kFloat64, {4}, {1, kNaN, 5, kNaN});
  EXPECT_EQ(values(call1("aten.argmax.default", {n, none(), false})), (std::vector<double>{1}));
  call_error("aten.argmax.default", {make(DType::kFloat32, {0}, {}), none(), false});
}

TEST(All, Variants) {
  EXPECT_EQ(values(call1("aten.all.default", {make(DType::kInt64, {3}, {1, 2, 0})})),
            (std::vector<double>{0}));
  Tensor b = make(DType::kBool, {2, 2}, {1, 1, 0, 1});
  Tensor d = call1("aten.all.dim", {b, i64(0), false});
  EXPECT_EQ(d.dtype(), DType::kBool);
  EXPECT_EQ(values(d), (std::vector<double>{0, 1}));
  Tensor k = call1("aten.all.dims", {b, ints({1}), true});
  EXPECT_EQ(k.sizes(), (Shape{2, 1}));
  EXPECT_EQ(values(k), (std::vector<double>{1, 0}));
  Tensor u = call1("aten.all.default", {make(DType::kUInt8, {2}, {3, 4})});
  EXPECT_EQ(u.dtype(), DType::kUInt8);
  EXPECT_EQ(values(u), (std::vector<double>{1}));
  EXPECT_EQ(values(call1("aten.all.default", {make(DType::kFloat32, {0}, {})})),
            (std::vector<double>{1}));  // the empty conjunction
  EXPECT_EQ(values(call1("aten.all.dims", {b, ints({}), false})),
            (std::vector<double>{1, 1, 0, 1}));  // dim=[] reduces nothing
}

TEST(Cumsum, DtypesAndAccumulation) {
  Tensor i = call1("aten.cumsum.default", {make(DType::kInt32, {3}, {1, 2, 3}), i64(0), none()});
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(values(i), (std::vector<double>{1, 3, 6}));
  Tensor b = call1("aten.cumsum.default", {make(DType::kBool, {3}, {1, 0, 1}), i64(0), none()});
  EXPECT_EQ(b.dtype(), DType::kInt64);
  EXPECT_EQ(values(b), (std::vector<double>{1, 1, 2}));
  Tensor f = make(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values(call1("aten.cumsum.default", {f, i64(0), none()})),
            (std::vector<double>{1, 2, 4, 6}));
  Tensor ft = call1("aten.t.default", {f});  // [[1, 3], [2, 4]]
  EXPECT_EQ(values(call1("aten.cumsum.default", {ft, i64(1), none()})),
            (std::vector<double>{1, 4, 2, 6}));
  Tensor d = call1("aten.cumsum.default",
                   {make(DType::kInt64, {2}, {1, 2}), i64(0), KernelArg(DType::kFloat64)});
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  // float16 accumulates in float: 2048+1 rounds to 2048 in the output but the running sum
  // keeps 2049, so the third prefix is 2050 (a half accumulator would stay at 2048).
  Tensor h =
      call1("aten.cumsum.default", {make(DType::kFloat16, {3}, {2048, 1, 1}), i64(0), none()});
  EXPECT_EQ(values(h), (std::vector<double>{2048, 2048, 2050}));
  EXPECT_EQ(
      call1("aten.cumsum.default", {make(DType::kFloat32, {0, 3}, {}), i64(0), none()}).sizes(),
      (Shape{0, 3}));
}

TEST(VarMean, CorrectionAndDims) {
  Tensor x = make(DType::kFloat32, {4}, {1, 2, 3, 4});
  auto r = call("aten.var_mean.correction", {x, none(), none(), false});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(values((*r)[0])[0], static_cast<double>(5.0f / 3.0f));
  EXPECT_EQ(values((*r)[1])[0], 2.5);
  auto r0 = call("aten.var_mean.correction", {x, none(), i64(0), false});
  ASSERT_TRUE(r0.ok());
  EXPECT_EQ(values((*r0)[0])[0], 1.25);
  Tensor m = make(DType::kFloat64, {2, 2}, {1, 2, 3, 5});
  auto rd = call("aten.var_mean.correction", {m, ints({1}), none(), true});
  ASSERT_TRUE(rd.ok());
  EXPECT_EQ((*rd)[0].sizes(), (Shape{2, 1}));
  EXPECT_EQ(values((*rd)[0]), (std::vector<double>{0.5, 2}));
  EXPECT_EQ(values((*rd)[1]), (std::vector<double>{1.5, 4}));
  auto one =
      call("aten.var_mean.correction", {make(DType::kFloat32, {1}, {7}), none(), none(), false});
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(std::isnan(values((*one)[0])[0]));  // N - correction = 0
  EXPECT_EQ(values((*one)[1])[0], 7);
  call_error("aten.var_mean.correction", {make(DType::kInt64, {2}, {1, 2}), none(), none(), false});
}

}  // namespace
}  // namespace splice::cpu
