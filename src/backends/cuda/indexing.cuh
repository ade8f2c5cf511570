#pragma once
// Device side of strided indexing: the element offsets of a row-major linear index in a shared
// iteration space (indexing.h), in 64-bit or — when fits_int32 said so — 32-bit arithmetic
// (32-bit division is several times cheaper on the GPU), and the offset of a linear index in
// one DeviceTensor.

#include <cstdint>

#include "backends/cuda/device_tensor.h"

namespace splice::cuda {

// A coalesced iteration as kernel parameters: N operands' strides over one shape.
template <int N>
struct IterParams {
  int rank;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];
};

// offsets[k] = sum over dims of coord[d] * strides[k][d] for the row-major `linear` index.
// Index is int32_t (only when the host's fits_int32 holds) or int64_t.
template <typename Index, int N>
__device__ __forceinline__ void linear_to_offsets(Index linear, const IterParams<N>& p,
                                                  Index (&offsets)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) offsets[k] = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < p.rank) {
      const Index size = static_cast<Index>(p.sizes[d]);
      const Index coord = linear % size;
      linear /= size;
#pragma unroll
      for (int k = 0; k < N; ++k) offsets[k] += coord * static_cast<Index>(p.strides[k][d]);
    }
  }
}

// The element offset of row-major `linear` in t (its own sizes and strides).
__device__ __forceinline__ int64_t tensor_offset(const DeviceTensor& t, int64_t linear) {
  int64_t offset = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < t.rank) {
      const int64_t coord = linear % t.sizes[d];
      linear /= t.sizes[d];
      offset += coord * t.strides[d];
    }
  }
  return offset;
}

}  // namespace splice::cuda
