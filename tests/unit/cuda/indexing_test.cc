// Host-side indexing helpers of the CUDA backend (no GPU needed): coalescing keeps every
// element's linear index and offsets, broadcasting onto an output, the 32-bit index test, and
// the errors device checks turn into.
#include <gtest/gtest.h>

#include "backends/cuda/error_word.h"
#include "backends/cuda/indexing.h"

namespace splice::cuda {
namespace {

// Offsets of every element of `it` (row-major), per operand.
std::vector<std::vector<int64_t>> all_offsets(const StridedIteration& it) {
  std::vector<std::vector<int64_t>> out(it.strides.size());
  const int64_t n = it.numel();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    std::vector<int64_t> off(it.strides.size(), 0);
    for (int d = it.rank - 1; d >= 0; --d) {
      const int64_t c = rest % it.sizes[d];
      rest /= it.sizes[d];
      for (size_t k = 0; k < off.size(); ++k) off[k] += c * it.strides[k][d];
    }
    for (size_t k = 0; k < off.size(); ++k) out[k].push_back(off[k]);
  }
  return out;
}

StridedIteration iteration(std::vector<int64_t> sizes, std::vector<std::vector<int64_t>> strides) {
  StridedIteration it;
  it.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < it.rank; ++d) it.sizes[d] = sizes[d];
  for (const auto& s : strides) {
    std::array<int64_t, kMaxDims> a{};
    for (int d = 0; d < it.rank; ++d) a[d] = s[d];
    it.strides.push_back(a);
  }
  return it;
}

TEST(CudaIndexing, CoalesceMergesDenseDimsAndKeepsOffsets) {
  StridedIteration it = iteration({2, 3, 4}, {{12, 4, 1}, {0, 4, 1}});
  const auto before = all_offsets(it);
  coalesce(it);
  EXPECT_EQ(it.rank, 2);
  EXPECT_EQ(it.sizes[0], 2);
  EXPECT_EQ(it.sizes[1], 12);
  EXPECT_EQ(all_offsets(it), before);
}

TEST(CudaIndexing, CoalesceKeepsTransposedAndFlippedDims) {
  // A transposed input, a flipped one (negative stride) and size-1 dims.
  StridedIteration it = iteration({3, 1, 4, 5}, {{20, 20, 5, 1}, {1, 7, 15, 3}, {20, 9, -5, -1}});
  const auto before = all_offsets(it);
  coalesce(it);
  EXPECT_EQ(all_offsets(it), before);
  // The size-1 dim is gone and 4x5 merges into 20 (every operand walks it as one run); the
  // transposed outer dim stays.
  EXPECT_EQ(it.rank, 2);
}

TEST(CudaIndexing, CoalesceOfEmptyAndSingleElement) {
  StridedIteration empty = iteration({3, 0, 2}, {{2, 2, 1}});
  coalesce(empty);
  EXPECT_EQ(empty.rank, 1);
  EXPECT_EQ(empty.numel(), 0);
  StridedIteration one = iteration({1, 1}, {{1, 1}});
  coalesce(one);
  EXPECT_EQ(one.rank, 0);
  EXPECT_EQ(one.numel(), 1);
}

TEST(CudaIndexing, Fits32Bits) {
  EXPECT_TRUE(fits_int32(iteration({1 << 15, 1 << 15}, {{1 << 15, 1}})));
  EXPECT_FALSE(fits_int32(iteration({1 << 16, 1 << 15}, {{1 << 15, 1}})));
  // Few elements, but an operand reaching far (a slice of a huge buffer).
  EXPECT_FALSE(fits_int32(iteration({2, 2}, {{2, 1}, {int64_t{1} << 31, 1}})));
  EXPECT_TRUE(fits_int32(iteration({2, 2}, {{2, 1}, {-(int64_t{1} << 30), 1}})));
}

TEST(CudaIndexing, MakeIterationBroadcasts) {
  const int64_t out_sizes[] = {2, 3, 4};
  const int64_t in_sizes[] = {3, 1};
  DeviceTensor out = contiguous_tensor(nullptr, DType::kFloat32, out_sizes);
  DeviceTensor in = contiguous_tensor(nullptr, DType::kFloat32, in_sizes);
  StridedIteration it;
  const DeviceTensor inputs[] = {in};
  ASSERT_TRUE(make_iteration(out, inputs, it));
  EXPECT_EQ(it.strides[1][0], 0);
  EXPECT_EQ(it.strides[1][1], 1);
  EXPECT_EQ(it.strides[1][2], 0);
  const int64_t bad_sizes[] = {2, 4};
  const DeviceTensor bad[] = {contiguous_tensor(nullptr, DType::kFloat32, bad_sizes)};
  EXPECT_FALSE(make_iteration(out, bad, it));
}

TEST(CudaIndexing, Contiguity) {
  const int64_t sizes[] = {2, 1, 3};
  DeviceTensor t = contiguous_tensor(nullptr, DType::kInt8, sizes);
  EXPECT_TRUE(is_contiguous(t));
  t.strides[1] = 77;  // a size-1 dim's stride does not matter
  EXPECT_TRUE(is_contiguous(t));
  t.strides[2] = 2;
  EXPECT_FALSE(is_contiguous(t));
}

TEST(CudaErrorWord, FailureMessages) {
  DeviceCheckFailure f;
  f.check = DeviceCheck::kIndexOutOfRange;
  f.value = 7;
  f.limit = 5;
  f.dim = 1;
  Error e = failure_error(f, "node index_copy (aten.index_copy.default)");
  EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(e.message(),
            "node index_copy (aten.index_copy.default): index 7 is out of range for dim 1 of "
            "size 5");
  f.check = DeviceCheck::kPositionOutOfRange;
  f.value = 2047;
  f.extra = 2;
  f.limit = 2048;
  f.dim = 2;
  EXPECT_EQ(failure_error(f, "").message(),
            "position 2047 (covering 2 entries) is out of range for dim 2 of size 2048");
  f.check = DeviceCheck::kIntegerDivisionByZero;
  EXPECT_EQ(failure_error(f, "").kind(), ErrorKind::kBadInput);
  f.check = static_cast<DeviceCheck>(99);
  EXPECT_EQ(failure_error(f, "").kind(), ErrorKind::kInternal);
}

}  // namespace
}  // namespace splice::cuda
