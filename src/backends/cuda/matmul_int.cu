// The integer GEMM of matmul_int.h: a grid-stride loop over output elements, each a dot
// product accumulated in uint64 (wrapping as int64 arithmetic does), scaled by alpha, plus
// beta times the value already in d, stored with the output type's wraparound.
#include "backends/cuda/matmul_int.h"

#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/indexing.cuh"

namespace splice::cuda {

namespace {

struct IntGemmParams {
  const void* a;
  const void* b;
  void* d;
  StridedOffsets<3> batch;
  int64_t batches, m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs, d_rs, d_cs;
  uint64_t alpha, beta;
};

template <typename T>
__global__ void int_gemm_kernel(IntGemmParams p) {
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* d = static_cast<T*>(p.d);
  const int64_t total = p.batches * p.m * p.n;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = idx % p.n;
    const int64_t i = (idx / p.n) % p.m;
    const int64_t bi = idx / (p.n * p.m);
    int64_t off[3];
    p.batch.get(bi, off);
    const T* ar = a + off[0] + i * p.a_rs;
    const T* bc = b + off[1] + j * p.b_cs;
    uint64_t acc = 0;
    for (int64_t q = 0; q < p.k; ++q)
      acc += static_cast<uint64_t>(static_cast<int64_t>(ar[q * p.a_cs])) *
             static_cast<uint64_t>(static_cast<int64_t>(bc[q * p.b_rs]));
    T* out = d + off[2] + i * p.d_rs + j * p.d_cs;
    uint64_t r = p.alpha * acc;
    if (p.beta != 0) r += p.beta * static_cast<uint64_t>(static_cast<int64_t>(*out));
    *out = static_cast<T>(r);
  }
}

}  // namespace

Result<void> int_gemm(const IntGemmArgs& args, cudaStream_t stream) {
  IntGemmParams p{};
  p.a = args.a;
  p.b = args.b;
  p.d = args.d;
  p.batch.rank = static_cast<int>(args.batch.size());
  p.batches = 1;
  for (int d = 0; d < p.batch.rank; ++d) {
    p.batch.sizes[d] = args.batch[d];
    p.batch.strides[0][d] = args.a_batch_strides[d];
    p.batch.strides[1][d] = args.b_batch_strides[d];
    p.batch.strides[2][d] = args.d_batch_strides[d];
    p.batches *= args.batch[d];
  }
  p.m = args.m;
  p.n = args.n;
  p.k = args.k;
  p.a_rs = args.a_rs;
  p.a_cs = args.a_cs;
  p.b_rs = args.b_rs;
  p.b_cs = args.b_cs;
  p.d_rs = args.d_rs;
  p.d_cs = args.d_cs;
  p.alpha = static_cast<uint64_t>(args.alpha);
  p.beta = static_cast<uint64_t>(args.beta);
  const int64_t total = p.batches * p.m * p.n;
  if (total == 0) return ok_result();
  const unsigned blocks =
      static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, int64_t{1} << 20));
  switch (args.dtype) {
    case DType::kUInt8:
      int_gemm_kernel<uint8_t><<<blocks, 256, 0, stream>>>(p);
      break;
    case DType::kInt8:
      int_gemm_kernel<int8_t><<<blocks, 256, 0, stream>>>(p);
      break;
    case DType::kInt16:
      int_gemm_kernel<int16_t><<<blocks, 256, 0, stream>>>(p);
      break;
    case DType::kInt32:
      int_gemm_kernel<int32_t><<<blocks, 256, 0, stream>>>(p);
      break;
    case DType::kInt64:
      int_gemm_kernel<int64_t><<<blocks, 256, 0, stream>>>(p);
      break;
    default:
      return Error(ErrorKind::kInternal, "int_gemm: not an integer dtype");
  }
  SPLICE_CUDA_CHECK(cudaGetLastError());
  return ok_result();
}

}  // namespace splice::cuda
