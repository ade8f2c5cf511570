#pragma once
// DeviceTensor: what a CUDA kernel launcher takes for a tensor operand — a strided view of
// device memory (pointer to the view's first element, dtype, sizes and strides in elements).
// Plain data, copied by value into kernel parameters; kernels index it with the helpers in
// indexing.cuh. Views of more than kMaxDims dims are coalesced first (adjacent dims that are
// contiguous with each other merge) and refused if still larger.

#include <array>
#include <cstdint>

#include "support/dtype.h"

namespace splice::cuda {

inline constexpr int kMaxDims = 8;

struct DeviceTensor {
  void* data = nullptr;
  DType dtype = DType::kFloat32;
  int rank = 0;
  std::array<int64_t, kMaxDims> sizes{};
  std::array<int64_t, kMaxDims> strides{};

  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
};

}  // namespace splice::cuda
