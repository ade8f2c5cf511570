// split_with_sizes/split/unbind (list results, views) and repeat/repeat_interleave.
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

std::vector<std::vector<double>> all_values(const std::vector<Tensor>& ts) {
  std::vector<std::vector<double>> out;
  for (const Tensor& t : ts) out.push_back(values(t));
  return out;
}

TEST(Split, WithSizes) {
  Tensor x = make(DType::kInt64, {6}, {0, 1, 2, 3, 4, 5});
  auto r = call("aten.split_with_sizes.default", {x, ints({1, 2, 3}), i64(0)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(all_values(*r), (std::vector<std::vector<double>>{{0}, {1, 2}, {3, 4, 5}}));
  EXPECT_EQ((*r)[2].storage(), x.storage());  // a view
  Tensor m = make(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  auto c = call("aten.split_with_sizes.default", {m, ints({2, 1}), i64(-1)});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].sizes(), (Shape{2, 2}));
  EXPECT_EQ(all_values(*c), (std::vector<std::vector<double>>{{0, 1, 3, 4}, {2, 5}}));
  call_error("aten.split_with_sizes.default", {x, ints({1, 2}), i64(0)});
  call_error("aten.split_with_sizes.default", {x, ints({7, -1}), i64(0)});
}

TEST(Split, EqualPiecesLastSmaller) {
  Tensor x = make(DType::kInt32, {5}, {0, 1, 2, 3, 4});
  auto r = call("aten.split.Tensor", {x, i64(2), i64(0)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(all_values(*r), (std::vector<std::vector<double>>{{0, 1}, {2, 3}, {4}}));
  auto big = call("aten.split.Tensor", {x, i64(9), i64(0)});
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->size(), 1u);
  auto empty = call("aten.split.Tensor", {make(DType::kInt32, {0}, {}), i64(0), i64(0)});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 1u);
  call_error("aten.split.Tensor", {x, i64(0), i64(0)});
}

TEST(Unbind, Dim1) {
  Tensor m = make(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  auto r = call("aten.unbind.int", {m, i64(1)});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].sizes(), (Shape{2}));
  EXPECT_EQ(all_values(*r), (std::vector<std::vector<double>>{{0, 3}, {1, 4}, {2, 5}}));
  call_error("aten.unbind.int", {make(DType::kFloat32, {}, {1}), i64(0)});
}

TEST(Repeat, TilesAndAddsLeadingDims) {
  Tensor x = make(DType::kInt64, {2}, {1, 2});
  Tensor r = call1("aten.repeat.default", {x, ints({2, 3})});
  EXPECT_EQ(r.sizes(), (Shape{2, 6}));
  EXPECT_EQ(values(r), (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}));
  Tensor m = make(DType::kFloat16, {2, 1}, {1, 2});
  Tensor mt = call1("aten.t.default", {m});  // [[1, 2]], strided
  EXPECT_EQ(values(call1("aten.repeat.default", {mt, ints({2, 1})})),
            (std::vector<double>{1, 2, 1, 2}));
  EXPECT_EQ(call1("aten.repeat.default", {x, ints({0})}).sizes(), (Shape{0}));
  call_error("aten.repeat.default", {m, ints({2})});
}

TEST(RepeatInterleave, SelfInt) {
  Tensor x = make(DType::kInt32, {2, 2}, {1, 2, 3, 4});
  Tensor flat = call1("aten.repeat_interleave.self_int", {x, i64(2), none(), none()});
  EXPECT_EQ(flat.sizes(), (Shape{8}));
  EXPECT_EQ(values(flat), (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  Tensor d0 = call1("aten.repeat_interleave.self_int", {x, i64(2), i64(0), none()});
  EXPECT_EQ(d0.sizes(), (Shape{4, 2}));
  EXPECT_EQ(values(d0), (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4}));
  Tensor d1 = call1("aten.repeat_interleave.self_int", {x, i64(2), i64(-1), i64(4)});
  EXPECT_EQ(values(d1), (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(d1.sizes(), (Shape{2, 4}));
  call_error("aten.repeat_interleave.self_int", {x, i64(-1), none(), none()});
  call_error("aten.repeat_interleave.self_int", {x, i64(2), i64(0), i64(5)});
}

TEST(RepeatInterleave, TensorRepeats) {
  Tensor r = call1("aten.repeat_interleave.Tensor", {make(DType::kInt64, {3}, {2, 0, 3}), none()});
  EXPECT_EQ(r.dtype(), DType::kInt64);
  EXPECT_EQ(values(r), (std::vector<double>{0, 0, 2, 2, 2}));
  Tensor r32 = call1("aten.repeat_interleave.Tensor", {make(DType::kInt32, {2}, {1, 1}), i64(2)});
  EXPECT_EQ(r32.dtype(), DType::kInt32);
  EXPECT_EQ(values(r32), (std::vector<double>{0, 1}));
  call_error("aten.repeat_interleave.Tensor", {make(DType::kInt64, {2}, {1, -1}), none()});
  call_error("aten.repeat_interleave.Tensor", {make(DType::kFloat32, {1}, {1}), none()});
  call_error("aten.repeat_interleave.Tensor", {make(DType::kInt64, {2}, {1, 1}), i64(3)});
}

}  // namespace
}  // namespace splice::cpu
