#pragma once
// The matmul family reduced to GEMM steps (plain C++): describe_matmul checks an op's operands
// with PyTorch's rules and the CPU backend's messages and turns it into a GemmProblem with its
// plan (matmul_plan.h), the C operand (addmm's self, linear's bias) and the bias epilogue
// choice; execute_matmul runs the steps — copies into scratch, C into the output, one strided
// batched column-major GEMM per outer batch index, the copy back — through a GemmSteps
// implementation: cuBLASLt and CUDA kernels on the GPU (matmul.cc), a host emulation in the
// unit tests (so every layout decision is verified without a GPU).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/kernel_scratch.h"
#include "backends/cuda/matmul_int.h"
#include "backends/cuda/matmul_plan.h"
#include "support/error.h"

namespace splice::cuda {

enum class MatmulKind { kMm, kBmm, kMatmul, kLinear, kAddmm, kBaddbmm };

// An op's operands as the kernel table passes them.
struct MatmulArgs {
  MatmulKind kind = MatmulKind::kMm;
  DeviceTensor a;                   // mm/bmm/matmul/addmm/baddbmm: the left operand; linear: input
  DeviceTensor b;                   // the right operand; linear: weight ([n, k] or [k])
  const DeviceTensor* c = nullptr;  // addmm/baddbmm: self; linear: bias (nullptr: none)
  double alpha = 1.0;               // addmm/baddbmm (integers: truncated to int64)
  double beta = 1.0;
  DeviceTensor out;  // the result, of the op's output shape and dtype
};

// One strided batched column-major GEMM: D = alpha · op(A) · op(B) + beta · D (+ bias[row]).
struct BlasCall {
  DType dtype = DType::kFloat32;
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  const void* a = nullptr;  // stored (trans_a ? k x m : m x k), leading dim lda
  int64_t lda = 1, stride_a = 0;
  const void* b = nullptr;  // stored (trans_b ? n x k : k x n)
  int64_t ldb = 1, stride_b = 0;
  void* d = nullptr;  // m x n; also C when beta != 0
  int64_t ldd = 1, stride_d = 0;
  double alpha = 1.0, beta = 0.0;
  const void* bias = nullptr;  // epilogue bias of m elements (same dtype), or nullptr
};

struct MatmulExec {
  std::string_view op;
  DType dtype = DType::kFloat32;
  bool empty = false;   // nothing to compute (an empty output)
  bool k_zero = false;  // no GEMM: out = beta * C, or zeros
  GemmProblem problem;  // the row-major problem (batch shape, strides)
  const void* a_data = nullptr;
  const void* b_data = nullptr;
  void* d_data = nullptr;
  GemmPlan plan;               // float types only
  DeviceTensor out;            // as given
  bool use_c = false;          // C is added (beta != 0 and a C operand)
  DeviceTensor c_broadcast;    // C broadcast to out's shape (stride 0 on broadcast dims)
  bool bias_epilogue = false;  // C is a contiguous [n] bias added by cuBLASLt's epilogue
  // C (when used) varies only along the output's last dim n (linear's bias, addmm's [n] or
  // scalar self): element n at c_vector_stride * n (0 for a broadcast scalar).
  bool c_vector = false;
  int64_t c_vector_stride = 0;
  double alpha = 1.0, beta = 0.0;

  // The problem operand w (0 a, 1 b, 2 d) as a strided tensor [batch_sizes.., rows, cols] in
  // its own memory, and the same shape contiguous at `data` (its copy).
  DeviceTensor operand_view(int w) const;
  DeviceTensor copy_view(int w, void* data) const;
};

Result<MatmulExec> describe_matmul(std::string_view op, const MatmulArgs& args);

// Whether splice's GEMV kernels (gemv.h) compute a described product, and why (not): a float16,
// bfloat16 or float32 product with no batch left after folding, at most kGemvMaxRows rows,
// and no C or a C that is a vector over n (added in the epilogue). `args` is filled when used.
struct GemvChoice {
  bool use = false;
  std::string reason;
  GemvArgs args;
};
GemvChoice choose_gemv(const MatmulExec& exec);

// What execute_matmul needs done on the device.
class GemmSteps {
 public:
  virtual ~GemmSteps() = default;
  virtual Result<void> copy(const DeviceTensor& dst, const DeviceTensor& src) = 0;
  virtual Result<void> scale(const DeviceTensor& dst, double beta) = 0;
  // false: no algorithm for this call (only asked with a bias; execute falls back).
  virtual Result<bool> gemm(const BlasCall& call) = 0;
  virtual Result<void> int_gemm(const IntGemmArgs& args) = 0;
};

Result<void> execute_matmul(const MatmulExec& exec, const KernelScratch& scratch, GemmSteps& steps);

}  // namespace splice::cuda
