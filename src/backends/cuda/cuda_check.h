#pragma once
// The one reporting statement for CUDA runtime calls: SPLICE_CUDA_CHECK(call) returns an
// Error of kind kBackend naming the call, the CUDA error and the source line from the
// enclosing function (which returns Result<...>). Kernel launches are checked with
// SPLICE_CUDA_CHECK(cudaGetLastError()) right after the launch.

#include <cuda_runtime_api.h>

#include "support/error.h"

namespace splice::cuda {

Error cuda_error(cudaError_t status, const char* call, const char* file, int line);

}  // namespace splice::cuda

#define SPLICE_CUDA_CHECK(call)                                                          \
  do {                                                                                   \
    const cudaError_t splice_cuda_status_ = (call);                                      \
    if (splice_cuda_status_ != cudaSuccess)                                              \
      return ::splice::cuda::cuda_error(splice_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)
