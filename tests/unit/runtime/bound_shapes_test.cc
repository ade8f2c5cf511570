// Tests for runtime/bound_shapes.h: shapes of dynamic-shape values kept per binding of the
// symbols a call starts with. A kept shape must never outlive its binding (a call with other
// input sizes evaluates again), and a value sized by a symbol bound mid-call (.item()) must
// never be kept, since the same input sizes may give it another size next call.
#include "runtime/bound_shapes.h"

#include <gtest/gtest.h>

#include <vector>

namespace splice::detail {
namespace {

const SymExpr s0 = SymExpr::symbol("s0");
const SymExpr u0 = SymExpr::symbol("u0");  // bound mid-call, never at the start

ir::TensorType f32(std::vector<SymExpr> sizes) { return {DType::kFloat32, std::move(sizes)}; }

TEST(BoundShapes, ShapeUnderConstantsOnlyNeedsNoBinding) {
  auto s = shape_under(DType::kFloat32, std::vector<SymExpr>{2, 3}, nullptr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->sizes, Shape({2, 3}));
  EXPECT_EQ(s->strides, Shape({3, 1}));
  EXPECT_EQ(s->nbytes, 24);
  EXPECT_FALSE(shape_under(DType::kFloat32, std::vector<SymExpr>{2, s0}, nullptr).has_value());
  EXPECT_FALSE(shape_under(DType::kFloat32, std::vector<SymExpr>{2, -1}, nullptr).has_value());
  const SymBindings negative = {{"s0", -4}};
  EXPECT_FALSE(shape_under(DType::kFloat32, std::vector<SymExpr>{s0}, &negative).has_value());
}

TEST(BoundShapes, AValueIsReevaluatedWhenTheBindingChanges) {
  BoundShapes shapes;
  const ir::TensorType t = f32({2, s0 * 4});
  shapes.begin_call({{"s0", 3}}, /*slots=*/1, /*buffers=*/0, /*groups=*/0);
  const StaticShape* a = shapes.value(0, t);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->sizes, Shape({2, 12}));
  EXPECT_EQ(a->nbytes, 96);
  shapes.begin_call({{"s0", 5}}, 1, 0, 0);
  const StaticShape* b = shapes.value(0, t);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->sizes, Shape({2, 20}));
  EXPECT_EQ(b->strides, Shape({20, 1}));
  // Back to the first binding: evaluated again, not the second call's shape.
  shapes.begin_call({{"s0", 3}}, 1, 0, 0);
  EXPECT_EQ(shapes.value(0, t)->sizes, Shape({2, 12}));
}

TEST(BoundShapes, TheSameBindingKeepsWhatWasEvaluated) {
  BoundShapes shapes;
  shapes.begin_call({{"s0", 3}}, 1, 1, 1);
  const StaticShape* first = shapes.value(0, f32({s0}));
  shapes.begin_call({{"s0", 3}}, 1, 1, 1);
  // Kept: even a different type would not be looked at again (a slot's type never changes).
  EXPECT_EQ(shapes.value(0, f32({s0 + 1})), first);
  EXPECT_EQ(first->sizes, Shape({3}));
}

TEST(BoundShapes, ASymbolBoundMidCallIsNeverKept) {
  BoundShapes shapes;
  shapes.begin_call({{"s0", 3}}, 1, 1, 1);
  EXPECT_EQ(shapes.value(0, f32({s0, u0})), nullptr);
  EXPECT_FALSE(shapes.buffer_bytes(0, u0 * 4).has_value());
  EXPECT_EQ(shapes.group_sizes(0, std::vector<SymExpr>{u0}), nullptr);
  // Even once u0 is bound in a later call's start binding, the answer is for that binding.
  shapes.begin_call({{"s0", 3}, {"u0", 2}}, 1, 1, 1);
  ASSERT_NE(shapes.value(0, f32({s0, u0})), nullptr);
  EXPECT_EQ(shapes.value(0, f32({s0, u0}))->sizes, Shape({3, 2}));
  EXPECT_EQ(shapes.buffer_bytes(0, u0 * 4), 8);
  EXPECT_EQ(*shapes.group_sizes(0, std::vector<SymExpr>{u0}), Shape({2}));
}

TEST(BoundShapes, BuffersAndGroupsFollowTheBinding) {
  BoundShapes shapes;
  shapes.begin_call({{"s0", 3}}, 0, 1, 1);
  EXPECT_EQ(shapes.buffer_bytes(0, s0 * 16), 48);
  EXPECT_EQ(*shapes.group_sizes(0, std::vector<SymExpr>{2, s0}), Shape({2, 3}));
  shapes.begin_call({{"s0", 7}}, 0, 1, 1);
  EXPECT_EQ(shapes.buffer_bytes(0, s0 * 16), 112);
  EXPECT_EQ(*shapes.group_sizes(0, std::vector<SymExpr>{2, s0}), Shape({2, 7}));
}

}  // namespace
}  // namespace splice::detail
