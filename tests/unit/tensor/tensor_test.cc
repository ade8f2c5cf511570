// Tests for the Tensor/Storage helpers of tensor/tensor.h: strides, element counts, shape
// strings, allocation, contiguity, contiguous copies of strided views, and the bounds check
// used on views built from untrusted archives.
#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#include "tests/unit/asan.h"

namespace splice {
namespace {

Tensor iota_i32(const Shape& sizes) {
  Tensor t = Tensor::empty(DType::kInt32, sizes).value();
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i);
  return t;
}

std::vector<int32_t> values_i32(const Tensor& contiguous) {
  return std::vector<int32_t>(contiguous.data<int32_t>(),
                              contiguous.data<int32_t>() + contiguous.numel());
}

TEST(Tensor, ContiguousStrides) {
  EXPECT_EQ(contiguous_strides({}), Shape{});
  EXPECT_EQ(contiguous_strides({5}), (Shape{1}));
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  // A zero-size dim does not zero the outer strides.
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (Shape{3, 3, 1}));
}

TEST(Tensor, NumelAndCheckedNumel) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({2, 0, 4}), 0);
  EXPECT_EQ(checked_numel({2, 3, 4}), 24);
  EXPECT_EQ(checked_numel({}), 1);
  EXPECT_EQ(checked_numel({3, -1}), std::nullopt);
  EXPECT_EQ(checked_numel({int64_t{1} << 32, int64_t{1} << 32}), std::nullopt);
  EXPECT_EQ(checked_numel({std::numeric_limits<int64_t>::max(), 1}),
            std::numeric_limits<int64_t>::max());
}

TEST(Tensor, ShapeString) {
  EXPECT_EQ(shape_string({}), "[]");
  EXPECT_EQ(shape_string({7}), "[7]");
  EXPECT_EQ(shape_string({2, 0, -1}), "[2, 0, -1]");
}

TEST(Tensor, EmptyIsZeroFilledAlignedAndContiguous) {
  Tensor t = Tensor::empty(DType::kFloat64, {3, 5}).value();
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.sizes(), (Shape{3, 5}));
  EXPECT_EQ(t.strides(), (Shape{5, 1}));
  EXPECT_EQ(t.offset(), 0);
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 120u);
  EXPECT_EQ(t.storage()->nbytes(), 120u);
  EXPECT_TRUE(t.storage()->writable());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(t.data<double>()[i], 0.0);

  Tensor scalar = Tensor::empty(DType::kInt16, {}).value();
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 2u);

  EXPECT_FALSE(Tensor().defined());
}

TEST(Tensor, AReusedHostBlockIsZeroFilledAgain) {
  // Freed blocks are kept for the next allocation of their size (tensor.cc's cache): the next
  // owner still gets zeros, and two live storages never share a block.
  std::byte* first = nullptr;
  {
    auto s = Storage::allocate(1000).value();
    first = s->data();
    std::memset(s->data(), 0xAB, s->nbytes());
  }
  auto again = Storage::allocate(1000).value();
  auto other = Storage::allocate(1000).value();
  EXPECT_NE(again->data(), other->data());
#if !SPLICE_TEST_ASAN
  EXPECT_TRUE(again->data() == first || other->data() == first);  // the freed block came back
#else
  (void)first;  // AddressSanitizer builds keep no blocks (tensor.cc)
#endif
  for (size_t i = 0; i < again->nbytes(); ++i) ASSERT_EQ(again->data()[i], std::byte{0}) << i;
  for (size_t i = 0; i < other->nbytes(); ++i) ASSERT_EQ(other->data()[i], std::byte{0}) << i;
}

TEST(Tensor, BorrowKeepsOwnerAliveAndWritableFlag) {
  auto owner = std::make_shared<std::vector<std::byte>>(16);
  std::weak_ptr<std::vector<std::byte>> watch = owner;
  auto storage = Storage::borrow(owner->data(), owner->size(), owner, /*writable=*/false);
  owner.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_FALSE(storage->writable());
  EXPECT_EQ(storage->nbytes(), 16u);
  storage.reset();
  EXPECT_TRUE(watch.expired());
}

TEST(Tensor, IsContiguous) {
  Tensor t = iota_i32({2, 3});
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.view_as({3, 2}, {1, 3}, 0).is_contiguous());  // transpose
  EXPECT_FALSE(t.view_as({2, 2}, {3, 1}, 1).is_contiguous());  // t[:, 1:3]
  EXPECT_TRUE(t.view_as({3}, {1}, 3).is_contiguous());         // t[1]
  // No elements: contiguous whatever the strides (torch.empty(2, 0, 4) has strides (4, 4, 1)
  // and is_contiguous() is True).
  EXPECT_TRUE(t.view_as({2, 0, 4}, {4, 4, 1}, 0).is_contiguous());
  // Size-1 dims may carry any stride.
  EXPECT_TRUE(t.view_as({1, 3}, {99, 1}, 3).is_contiguous());
  EXPECT_TRUE(t.view_as({3, 1}, {1, 7}, 0).is_contiguous());
}

TEST(Tensor, ContiguousCopyOfStridedViews) {
  Tensor t = iota_i32({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  Tensor tr = t.view_as({3, 2}, {1, 3}, 0).contiguous_copy().value();
  EXPECT_EQ(tr.strides(), (Shape{2, 1}));
  EXPECT_EQ(values_i32(tr), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  Tensor sl = t.view_as({2, 2}, {3, 1}, 1).contiguous_copy().value();
  EXPECT_EQ(values_i32(sl), (std::vector<int32_t>{1, 2, 4, 5}));
  Tensor bc = t.view_as({2, 3}, {0, 1}, 3).contiguous_copy().value();  // row 1 broadcast
  EXPECT_EQ(values_i32(bc), (std::vector<int32_t>{3, 4, 5, 3, 4, 5}));
  Tensor row = t.view_as({3}, {1}, 3);
  Tensor row_copy = row.contiguous_copy().value();
  EXPECT_NE(row_copy.storage(), t.storage());  // always copies
  EXPECT_EQ(values_i32(row_copy), (std::vector<int32_t>{3, 4, 5}));
  Tensor empty = t.view_as({0, 3}, {3, 1}, 0).contiguous_copy().value();
  EXPECT_EQ(empty.sizes(), (Shape{0, 3}));
  EXPECT_EQ(empty.numel(), 0);
}

TEST(Tensor, CheckViewInBounds) {
  Tensor t = iota_i32({2, 3});  // 24 bytes of storage
  EXPECT_TRUE(check_view_in_bounds(t).ok());
  EXPECT_TRUE(check_view_in_bounds(t.view_as({3, 2}, {1, 3}, 0)).ok());
  EXPECT_TRUE(check_view_in_bounds(t.view_as({1}, {1}, 5)).ok());
  EXPECT_TRUE(check_view_in_bounds(t.view_as({0, 100}, {100, 1}, 1000)).ok());  // no elements

  auto past = check_view_in_bounds(t.view_as({2}, {1}, 5));
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(past.error().message(),
            "tensor view of sizes [2] strides [1] offset 5 needs more than the 24 bytes of its "
            "storage");

  auto negative_size = check_view_in_bounds(t.view_as({-1}, {1}, 0));
  ASSERT_FALSE(negative_size.ok());
  EXPECT_EQ(negative_size.error().message(), "tensor sizes [-1] are negative or overflow");

  auto negative_offset = check_view_in_bounds(t.view_as({1}, {1}, -1));
  ASSERT_FALSE(negative_offset.ok());
  EXPECT_EQ(negative_offset.error().message(), "negative storage offset -1");

  auto negative_stride = check_view_in_bounds(t.view_as({2}, {-1}, 1));
  ASSERT_FALSE(negative_stride.ok());
  EXPECT_EQ(negative_stride.error().message(), "negative stride -1");

  auto overflow =
      check_view_in_bounds(t.view_as({2, 2}, {std::numeric_limits<int64_t>::max(), 1}, 0));
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message(), "tensor view [2, 2] overflows");
}

}  // namespace
}  // namespace splice
