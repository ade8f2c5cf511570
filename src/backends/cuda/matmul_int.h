#pragma once
// Integer matrix products for the matmul family. cuBLASLt has no integer GEMM of these types
// and PyTorch's CUDA refuses them ("not implemented for 'Long'"); the CPU backend computes
// them, so splice's GPU does too, with the same two's-complement wraparound: a simple kernel,
// one thread per output element (correct, not fast; integer matmuls are rare).

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"

namespace splice::cuda {

struct IntGemmArgs {
  DType dtype = DType::kInt64;  // uint8, int8, int16, int32 or int64
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  std::vector<int64_t> batch;  // output batch shape (rank <= kMaxDims)
  std::vector<int64_t> a_batch_strides, b_batch_strides, d_batch_strides;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, d_rs = 0, d_cs = 0;
  int64_t alpha = 1;
  int64_t beta = 0;  // beta != 0: d already holds C and is read back: d = alpha·AB + beta·d
};

Result<void> int_gemm(const IntGemmArgs& args, cudaStream_t stream);

}  // namespace splice::cuda
