#pragma once
// Comparing splice's results with PyTorch's recorded ones: exact for integer and bool
// tensors, dtype-appropriate tolerances for floats (|a - e| <= atol + rtol * |e|, NaN equal to
// NaN, infinities equal only to the same infinity).

#include <optional>
#include <string>
#include <string_view>

#include "tensor/tensor.h"

namespace splice::testing {

struct Tolerance {
  double rtol;
  double atol;
};
// The bound for results computed on `device` ("cpu", "cuda"): the GPU's float results differ
// from PyTorch's CPU ones by accumulation order (blocked reductions, cuBLASLt's GEMM tiling,
// split-K) and its math library, so its bounds are looser (docs/cuda.md lists them).
Tolerance tolerance_for(DType dtype, std::string_view device = "cpu");

// Empty when equal; otherwise a message naming the first mismatch and the count. `compute`: a
// lower precision the program computes in before its outputs are cast up (a case's
// `compute_dtype`: SmolVLA's VLM in bfloat16 feeding a float32 expert); floats then get the
// looser of the two dtypes' bounds.
std::string compare_tensors(const Tensor& expected, const Tensor& actual,
                            std::string_view device = "cpu",
                            std::optional<DType> compute = std::nullopt);

}  // namespace splice::testing
