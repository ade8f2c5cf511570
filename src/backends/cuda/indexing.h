#pragma once
// Host side of strided indexing: a shared iteration space over several strided operands, the
// coalescing that shrinks it before a launch (fewer dims = fewer divisions per element), and
// the test that decides whether kernels may do their index math in 32 bits.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "backends/cuda/device_tensor.h"

namespace splice::cuda {

// sizes[0..rank) in row-major order (dim rank-1 fastest) and, per operand, strides in elements
// (0 on broadcast dims, possibly negative for flipped views).
struct StridedIteration {
  int rank = 0;
  std::array<int64_t, kMaxDims> sizes{};
  std::vector<std::array<int64_t, kMaxDims>> strides;

  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
};

// Drops size-1 dims and merges each pair of adjacent dims that every operand walks as one
// (stride[d] == stride[d + 1] * size[d + 1]), so the row-major linear index of every element is
// unchanged: kernels may compute it over the coalesced shape. An empty iteration becomes rank 1
// of size 0; a single element rank 0.
// Example: sizes [2, 3, 4], output strides [12, 4, 1], input strides [0, 4, 1] → sizes [2, 12],
// strides [12, 1] and [0, 1].
void coalesce(StridedIteration& it);

// Whether numel and every operand's element offsets (both signs) fit in int32, so kernels can
// use 32-bit index math.
bool fits_int32(const StridedIteration& it);

// The iteration over `out`'s shape with `out` first and each of `inputs` after it, inputs
// broadcast to it by numpy rules (right-aligned; size-1 or missing dims get stride 0); false
// when an input does not broadcast to out's shape.
bool make_iteration(const DeviceTensor& out, std::span<const DeviceTensor> inputs,
                    StridedIteration& it);

// Whether t's elements are dense in row-major order (strides of a contiguous tensor, ignoring
// size-1 dims).
bool is_contiguous(const DeviceTensor& t);

// A DeviceTensor of `sizes` with contiguous strides.
DeviceTensor contiguous_tensor(void* data, DType dtype, std::span<const int64_t> sizes);

}  // namespace splice::cuda
