#pragma once
// The matmul family on the GPU through cuBLASLt: mm, bmm, matmul (torch.matmul's 1-D operands
// and broadcast batch dims), linear (with or without bias), addmm and baddbmm (beta, alpha).
//
// Numerics, as PyTorch's CUDA defaults: float32 in full float32 (CUBLAS_COMPUTE_32F, no TF32,
// as torch.backends.cuda.matmul.allow_tf32 = False); float16 and bfloat16 with float32
// accumulation and scale (CUBLAS_COMPUTE_32F), split-K partial sums kept in float32 (reduction
// scheme COMPUTE_TYPE; only when no such algorithm exists any scheme, which is PyTorch's
// default); float64 in CUBLAS_COMPUTE_64F. The result is rounded once (a
// bias or beta·self is added inside the GEMM). Integer dtypes — which PyTorch's CUDA refuses —
// run a simple correct kernel with the CPU backend's wraparound (matmul_int.h); bool is
// refused (kBadInput), as on the CPU. Agreement with the CPU backend (which multiplies 16-bit
// floats in float and rounds, and adds addmm's self after rounding): float32 ~1e-5 relative
// (scaled by sqrt(k) in the tests), float16 2e-3 and bfloat16 1.6e-2 relative plus an absolute
// term of the same size times sqrt(k)·|x|·|y| (documented in docs/cuda.md).
//
// Layouts: any strided views. A transposed operand is read with cuBLAS's op flag and leading
// dimension; one with no unit stride in its matrix dims (a slice with a step, a broadcast row)
// is copied to contiguous scratch first (strided_copy.h); so is an output with no unit stride.
// MatmulRunner::scratch_bytes says how much scratch a call needs (0 for every layout cuBLASLt
// reads in place); a call given less fails with kBackend naming the bytes.
//
// Products of at most kGemvMaxRows rows (after folding batch dims into rows) in float16,
// bfloat16 and float32, unbatched, with no C or a bias-like C, run splice's GEMV kernels
// instead (gemv.h; choose_gemv in matmul_exec.h says when and why): they read the weight at
// the copy bandwidth where cuBLASLt's tiles do not, in any layout, with no scratch but their
// split-k partials. Everything else goes to cuBLASLt.
//
// The algorithm is chosen once per (shape, dtype, layout, alignment, epilogue) with
// cublasLtMatmulAlgoGetHeuristic and cached with its descriptors; cuBLASLt gets the fixed
// workspace given at creation, so every call can be captured in a CUDA graph. One runner per
// session; not thread-safe.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernel_scratch.h"
#include "backends/cuda/matmul_exec.h"
#include "support/error.h"

namespace splice::cuda {

class MatmulRunner {
 public:
  // workspace: device memory handed to cuBLASLt on every call (e.g. 32 MiB; 0 bytes works, with
  // fewer algorithms); it must outlive the runner. kBackend when cuBLASLt cannot start.
  static Result<std::unique_ptr<MatmulRunner>> create(void* workspace, size_t workspace_bytes);
  ~MatmulRunner();
  MatmulRunner(const MatmulRunner&) = delete;
  MatmulRunner& operator=(const MatmulRunner&) = delete;

  // mm(a [m,k], b [k,n]) -> out [m,n]
  Result<void> mm(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& out,
                  const KernelScratch& scratch, cudaStream_t stream);
  // bmm(a [B,m,k], b [B,k,n]) -> out [B,m,n]
  Result<void> bmm(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& out,
                   const KernelScratch& scratch, cudaStream_t stream);
  // torch.matmul: 1-D operands are a row / a column (their dim dropped from out), the batch
  // dims broadcast.
  Result<void> matmul(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& out,
                      const KernelScratch& scratch, cudaStream_t stream);
  // linear(input [*, k], weight [n, k] or [k], bias? broadcast to out) -> out [*, n] or [*]
  Result<void> linear(const DeviceTensor& input, const DeviceTensor& weight,
                      const DeviceTensor* bias, const DeviceTensor& out,
                      const KernelScratch& scratch, cudaStream_t stream);
  // addmm(self, mat1 [m,k], mat2 [k,n], beta, alpha) = beta·self + alpha·mat1·mat2; self
  // broadcasts to [m,n]; beta = 0 ignores self (NaN included).
  Result<void> addmm(const DeviceTensor& self, const DeviceTensor& mat1, const DeviceTensor& mat2,
                     double beta, double alpha, const DeviceTensor& out,
                     const KernelScratch& scratch, cudaStream_t stream);
  // baddbmm(self, batch1 [B,m,k], batch2 [B,k,n], beta, alpha); self broadcasts to [B,m,n].
  Result<void> baddbmm(const DeviceTensor& self, const DeviceTensor& batch1,
                       const DeviceTensor& batch2, double beta, double alpha,
                       const DeviceTensor& out, const KernelScratch& scratch, cudaStream_t stream);

  // The general entry all of the above use.
  Result<void> run(const MatmulArgs& args, const KernelScratch& scratch, cudaStream_t stream);

  // Scratch a call with these arguments needs (checks them like the call).
  static Result<size_t> scratch_bytes(const MatmulArgs& args);

  // Algorithms chosen so far (one per distinct configuration).
  size_t cached_algorithms() const;
  // Products computed by the GEMV kernels so far (gemv.h).
  size_t gemv_launches() const;
  // Whether products the GEMV kernels could compute go to them (default true); false sends
  // everything to cuBLASLt (the benchmark's baseline).
  void set_gemv_enabled(bool enabled);
  bool gemv_enabled() const;
  // The GEMV kernels' arrival counters (gemv.h), for kernels that split k the same way
  // (gemv_epilogue.h): launches on one stream never overlap, and each leaves them zeroed.
  unsigned* gemv_counters() const;
  // Counts a GEMV launched by another kernel (gemv_launches).
  void count_gemv_launch();

  struct Impl;

 private:
  explicit MatmulRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The op name of a kind ("mm", "linear", ...), for errors.
std::string_view matmul_kind_name(MatmulKind kind);

}  // namespace splice::cuda
