#pragma once
// The small strided copy the matmul family needs (operands into contiguous scratch, a bias
// broadcast into the output before a beta GEMM, a temporary output back into its view) and an
// in-place scale. Kept in this one place so the general copy/cast kernels of the backend can
// replace it.

#include <cuda_runtime_api.h>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"

namespace splice::cuda {

// dst[idx] = src[idx] for every index of dst's shape; src has dst's rank and dtype and each of
// its dims is dst's size or 1 / stride 0 (broadcast). Any strides, rank <= 8.
Result<void> strided_copy(const DeviceTensor& dst, const DeviceTensor& src, cudaStream_t stream);

// dst = beta * dst elementwise in dst's opmath (integers wrap); beta == 0 writes zeros even
// over NaN (BLAS's beta = 0 rule, which PyTorch follows).
Result<void> scale_in_place(const DeviceTensor& dst, double beta, cudaStream_t stream);

}  // namespace splice::cuda
