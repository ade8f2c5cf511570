#pragma once
// PyTorch's computeStride for the CPU view kernels (views.cc) and the CUDA backend's (which
// must know whether a reshape can be a view before deciding to copy on the device).

#include <optional>

#include "tensor/tensor.h"

namespace splice::cpu {

// Strides for viewing (old sizes, old strides) as new_sizes without copying, or nullopt
// (merge runs of dims that are contiguous with each other).
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides,
                                  const Shape& new_sizes);

}  // namespace splice::cpu
