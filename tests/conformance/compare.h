#pragma once
// Comparing splice's results with PyTorch's recorded ones: exact for integer and bool
// tensors, dtype-appropriate tolerances for floats (|a - e| <= atol + rtol * |e|, NaN equal to
// NaN, infinities equal only to the same infinity).

#include <string>

#include "tensor/tensor.h"

namespace splice::testing {

struct Tolerance {
  double rtol;
  double atol;
};
Tolerance tolerance_for(DType dtype);

// Empty when equal; otherwise a message naming the first mismatch and the count.
std::string compare_tensors(const Tensor& expected, const Tensor& actual);

}  // namespace splice::testing
