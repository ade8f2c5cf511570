// Tests for tensor/shape.h: the small vector that holds a tensor's sizes and strides. Each
// operation is checked on both sides of the inline capacity (kInline elements kept inside the
// Shape, more on the heap), since a bug there shows only at ranks above it.
#include "tensor/shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace splice {
namespace {

constexpr size_t kInline = Shape::kInline;

// 0, 1, ..., n-1 as a Shape built by push_back (the path that grows it).
Shape iota(size_t n) {
  Shape s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<int64_t>(i));
  return s;
}

std::vector<int64_t> iota_vector(size_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Shape, KeepsItsElementsAcrossTheInlineCapacity) {
  for (size_t n : {size_t{0}, size_t{1}, kInline, kInline + 1, 3 * kInline}) {
    const Shape s = iota(n);
    EXPECT_EQ(s.size(), n);
    EXPECT_EQ(s.empty(), n == 0);
    EXPECT_GE(s.capacity(), n);
    EXPECT_EQ(std::vector<int64_t>(s), iota_vector(n)) << "n=" << n;
  }
}

TEST(Shape, CopiesAndMovesAreIndependentAndComplete) {
  for (size_t n : {size_t{3}, kInline, kInline + 2}) {
    Shape original = iota(n);
    Shape copy = original;
    copy[0] = 100;
    EXPECT_EQ(original[0], 0) << "a copy shares storage, n=" << n;
    Shape moved = std::move(original);
    EXPECT_EQ(std::vector<int64_t>(moved), iota_vector(n));
    EXPECT_TRUE(original.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    original.push_back(7);          // and usable again
    EXPECT_EQ(original, Shape({7}));
    // Assignment replaces contents of either size with either size.
    Shape target = iota(2 * kInline);
    target = copy;
    EXPECT_EQ(target, copy);
    target = Shape{1, 2};
    EXPECT_EQ(target, Shape({1, 2}));
    target = std::move(moved);
    EXPECT_EQ(std::vector<int64_t>(target), iota_vector(n));
  }
}

// A copy of up to kInline elements moves a whole inline buffer's worth: from a heap buffer
// that shrank back to a few elements, and into one, it must still give exactly those elements.
TEST(Shape, SmallCopiesFromAndIntoHeapBuffers) {
  Shape shrunk = iota(kInline + 4);  // on the heap
  shrunk.resize(2);
  const Shape from_heap = shrunk;
  EXPECT_EQ(from_heap, Shape({0, 1}));
  Shape into_heap = iota(kInline + 4);
  into_heap = Shape{5, 6, 7};
  EXPECT_EQ(into_heap, Shape({5, 6, 7}));
  into_heap = shrunk;
  EXPECT_EQ(into_heap, Shape({0, 1}));
  // Growing again after the copy shows zeros, not stale elements.
  into_heap.resize(4);
  EXPECT_EQ(into_heap, Shape({0, 1, 0, 0}));
}

TEST(Shape, SelfAssignmentKeepsTheElements) {
  Shape small = iota(3), big = iota(kInline + 3);
  Shape& small_ref = small;
  Shape& big_ref = big;
  small = small_ref;
  big = big_ref;
  EXPECT_EQ(std::vector<int64_t>(small), iota_vector(3));
  EXPECT_EQ(std::vector<int64_t>(big), iota_vector(kInline + 3));
}

TEST(Shape, InsertAndEraseShiftTheRest) {
  Shape s = {1, 2, 3};
  s.insert(s.begin() + 1, 9);
  EXPECT_EQ(s, Shape({1, 9, 2, 3}));
  s.insert(s.end(), 2, 5);
  EXPECT_EQ(s, Shape({1, 9, 2, 3, 5, 5}));
  s.insert(s.begin(), {7, 8});  // past the inline capacity
  EXPECT_EQ(s, Shape({7, 8, 1, 9, 2, 3, 5, 5}));
  s.erase(s.begin() + 2, s.begin() + 4);
  EXPECT_EQ(s, Shape({7, 8, 2, 3, 5, 5}));
  s.erase(s.begin());
  EXPECT_EQ(s, Shape({8, 2, 3, 5, 5}));
}

TEST(Shape, InsertingItsOwnElementsCopiesThemFirst) {
  // The range being inserted moves when the gap opens (and when the storage grows).
  for (size_t n : {size_t{3}, kInline}) {
    Shape s = iota(n);
    s.insert(s.begin(), s.begin(), s.end());
    std::vector<int64_t> want = iota_vector(n);
    want.insert(want.end(), want.begin(), want.end());
    EXPECT_EQ(std::vector<int64_t>(s), want) << "n=" << n;
  }
}

TEST(Shape, ResizeAssignAndPopBack) {
  Shape s;
  s.resize(2, 4);
  EXPECT_EQ(s, Shape({4, 4}));
  s.resize(kInline + 1, 1);
  EXPECT_EQ(s.size(), kInline + 1);
  EXPECT_EQ(s.back(), 1);
  EXPECT_EQ(s.front(), 4);
  s.pop_back();
  EXPECT_EQ(s.size(), kInline);
  s.assign(3, 0);
  EXPECT_EQ(s, Shape({0, 0, 0}));
  const std::vector<int64_t> v = {5, 6};
  s.assign(v.begin(), v.end());
  EXPECT_EQ(s, Shape(v));
  s.clear();
  EXPECT_TRUE(s.empty());
}

TEST(Shape, ComparesLikeAVector) {
  EXPECT_EQ(Shape({1, 2}), Shape(std::vector<int64_t>{1, 2}));
  EXPECT_NE(Shape({1, 2}), Shape({1, 2, 3}));
  EXPECT_LT(Shape({1, 2}), Shape({1, 3}));
  EXPECT_LT(Shape({1, 2}), Shape({1, 2, 0}));
  EXPECT_EQ(Shape(), Shape(std::vector<int64_t>{}));
}

}  // namespace
}  // namespace splice
