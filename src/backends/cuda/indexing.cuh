#pragma once
// Device side of strided indexing (the host side is indexing.h): StridedOffsets<N> maps a
// row-major linear index over a shape (last dim fastest) to the element offsets of N strided
// operands that share that shape — a kernel parameter (plain data). Rank 0 is a single
// element; rank 1 is one multiply (the common case after the host merges contiguous dims, see
// merge_dims in the planners); higher ranks divide once per dim. tensor_offset does the same
// for one DeviceTensor with its own sizes and strides.

#include <cstdint>

#include "backends/cuda/device_tensor.h"

namespace splice::cuda {

template <int N>
struct StridedOffsets {
  int rank = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  __host__ __device__ __forceinline__ void get(int64_t linear, int64_t (&out)[N]) const {
    for (int i = 0; i < N; ++i) out[i] = 0;
    if (rank == 1) {
      for (int i = 0; i < N; ++i) out[i] = linear * strides[i][0];
      return;
    }
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t size = sizes[d];
      const int64_t idx = d == 0 ? linear : linear % size;
      linear = d == 0 ? 0 : linear / size;
      for (int i = 0; i < N; ++i) out[i] += idx * strides[i][d];
    }
  }

  // The offset of operand 0 only.
  __host__ __device__ __forceinline__ int64_t get0(int64_t linear) const {
    if (rank == 1) return linear * strides[0][0];
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = d == 0 ? linear : linear % sizes[d];
      linear = d == 0 ? 0 : linear / sizes[d];
      off += idx * strides[0][d];
    }
    return off;
  }
};

// The element offset of row-major `linear` in t (its own sizes and strides).
__host__ __device__ __forceinline__ int64_t tensor_offset(const DeviceTensor& t, int64_t linear) {
  int64_t offset = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    const int64_t coord = linear % t.sizes[d];
    linear /= t.sizes[d];
    offset += coord * t.strides[d];
  }
  return offset;
}

}  // namespace splice::cuda
