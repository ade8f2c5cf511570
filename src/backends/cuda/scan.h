#pragma once
// cumsum along one dim on the GPU, as the CPU backend's kernel (cpu/reduce_extrema.cc)
// and PyTorch: out's dtype is the result dtype (the dtype argument, else int64 for integer and
// bool inputs, else self's); each element is converted to it first, then added in PyTorch's
// CPU accumulate type — double for float32/float64 results, float for float16/bfloat16, int64
// with wraparound for integers, logical or for bool — and every prefix rounded to out's dtype.
// Any strides, rank <= 8, any length; lanes along a strided dim with contiguous neighbours get
// a thread each, others a warp (length <= 2048) or a block of 512 that scans chunk by chunk
// carrying the running total.

#include <cuda_runtime_api.h>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"

namespace splice::cuda {

Result<void> cumsum(const DeviceTensor& self, int64_t dim, const DeviceTensor& out,
                    cudaStream_t stream);

}  // namespace splice::cuda
