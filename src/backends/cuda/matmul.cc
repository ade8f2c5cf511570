// MatmulRunner (see matmul.h): the GemmSteps of matmul_exec.h on the GPU — cuBLASLt for float
// GEMMs, with the algorithm and descriptors cached per configuration, and the strided copy,
// scale and integer kernels for the rest.
#include "backends/cuda/matmul.h"

#include <algorithm>
#include <map>
#include <vector>

#include "backends/cuda/cublaslt_library.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/strided_copy.h"

namespace splice::cuda {

namespace {

Error cublas_error(cublasStatus_t status, const char* call) {
  return make_error(ErrorKind::kBackend, "cuBLASLt {} failed: {} ({})", call,
                    cublaslt().GetStatusName(status), cublaslt().GetStatusString(status));
}

#define SPLICE_CUBLAS_CHECK(call)                        \
  do {                                                   \
    const cublasStatus_t splice_cublas_status_ = (call); \
    if (splice_cublas_status_ != CUBLAS_STATUS_SUCCESS)  \
      return cublas_error(splice_cublas_status_, #call); \
  } while (0)

cudaDataType_t blas_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return CUDA_R_16F;
    case DType::kBFloat16:
      return CUDA_R_16BF;
    case DType::kFloat64:
      return CUDA_R_64F;
    default:
      return CUDA_R_32F;
  }
}

uint32_t alignment_of(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  if (v == 0) return 256;
  uint32_t a = 1;
  while (a < 256 && v % (a * 2) == 0) a *= 2;
  return a;
}

// One cached configuration: descriptors and the chosen algorithm (or none found).
struct CachedGemm {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool found = false;

  void destroy() {
    if (desc) cublaslt().MatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {a, b, d})
      if (l) cublaslt().MatrixLayoutDestroy(l);
    desc = nullptr;
    a = b = d = nullptr;
  }
};

Result<cublasLtMatrixLayout_t> make_layout(DType dtype, int64_t rows, int64_t cols, int64_t ld,
                                           int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  SPLICE_CUBLAS_CHECK(cublaslt().MatrixLayoutCreate(
      &layout, blas_type(dtype), static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    cublasStatus_t s = cublaslt().MatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublaslt().MatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof(stride));
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublaslt().MatrixLayoutDestroy(layout);
      return cublas_error(s, "cublasLtMatrixLayoutSetAttribute");
    }
  }
  return layout;
}

}  // namespace

struct MatmulRunner::Impl {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  std::map<std::vector<int64_t>, CachedGemm> cache;
  // The GEMV kernels' split-k arrival counters (gemv.h): zeroed once here, left zeroed by
  // every launch, so no call allocates or clears them.
  DeviceBuffer gemv_counters;
  size_t gemv_launches = 0;
  bool gemv_enabled = true;

  ~Impl() {
    for (auto& [key, entry] : cache) entry.destroy();
    if (handle) cublaslt().Destroy(handle);
  }

  Result<CachedGemm*> configure(const BlasCall& c) {
    const std::vector<int64_t> key = {static_cast<int64_t>(c.dtype),
                                      c.trans_a,
                                      c.trans_b,
                                      c.m,
                                      c.n,
                                      c.k,
                                      c.batch,
                                      c.lda,
                                      c.ldb,
                                      c.ldd,
                                      c.stride_a,
                                      c.stride_b,
                                      c.stride_d,
                                      c.bias != nullptr,
                                      alignment_of(c.a),
                                      alignment_of(c.b),
                                      alignment_of(c.d),
                                      alignment_of(c.bias),
                                      c.beta != 0.0};
    auto it = cache.find(key);
    if (it != cache.end()) return &it->second;
    CachedGemm entry;
    SPLICE_TRY(build(c, entry));
    return &cache.emplace(key, entry).first->second;
  }

  // Fills entry's descriptors and runs the heuristic; on a failure the descriptors made so
  // far are destroyed.
  Result<void> build(const BlasCall& c, CachedGemm& entry) {
    Result<void> r = build_inner(c, entry);
    if (!r.ok()) entry.destroy();
    return r;
  }

  Result<void> build_inner(const BlasCall& c, CachedGemm& entry) {
    SPLICE_CHECK_OR_RETURN(c.batch <= INT32_MAX, ErrorKind::kShapeMismatch,
                           "matmul: batch {} exceeds cuBLASLt's limit", c.batch);
    const bool f64 = c.dtype == DType::kFloat64;
    const cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    const cudaDataType_t scale = f64 ? CUDA_R_64F : CUDA_R_32F;
    SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescCreate(&entry.desc, compute, scale));
    const cublasOperation_t ta = c.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = c.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescSetAttribute(entry.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                          &ta, sizeof(ta)));
    SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescSetAttribute(entry.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                          &tb, sizeof(tb)));
    if (c.bias) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      const int32_t bias_type = blas_type(c.dtype);
      SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescSetAttribute(
          entry.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
      SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescSetAttribute(
          entry.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
      SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescSetAttribute(
          entry.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c.bias, sizeof(c.bias)));
    }
    SPLICE_ASSIGN_OR_RETURN(
        entry.a, make_layout(c.dtype, c.trans_a ? c.k : c.m, c.trans_a ? c.m : c.k, c.lda, c.batch,
                             c.stride_a));
    SPLICE_ASSIGN_OR_RETURN(
        entry.b, make_layout(c.dtype, c.trans_b ? c.n : c.k, c.trans_b ? c.k : c.n, c.ldb, c.batch,
                             c.stride_b));
    SPLICE_ASSIGN_OR_RETURN(entry.d, make_layout(c.dtype, c.m, c.n, c.ldd, c.batch, c.stride_d));
    cublasLtMatmulPreference_t pref = nullptr;
    SPLICE_CUBLAS_CHECK(cublaslt().MatmulPreferenceCreate(&pref));
    const uint64_t ws = workspace_bytes;
    // Split-K partial sums in the compute type only (never in a 16-bit output).
    const uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    const uint32_t align_a = alignment_of(c.a), align_b = alignment_of(c.b),
                   align_d = alignment_of(c.d);
    cublasStatus_t s = cublaslt().MatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                  &reduction, sizeof(reduction));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                  &align_a, sizeof(align_a));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                  &align_b, sizeof(align_b));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                  &align_d, sizeof(align_d));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                  &align_d, sizeof(align_d));
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublaslt().MatmulPreferenceDestroy(pref);
      return cublas_error(s, "cublasLtMatmulPreferenceSetAttribute");
    }
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    s = cublaslt().MatmulAlgoGetHeuristic(handle, entry.desc, entry.a, entry.b, entry.d, entry.d,
                                          pref, 1, &result, &returned);
    if (s == CUBLAS_STATUS_SUCCESS && returned == 0) {
      // Nothing with compute-type split-K sums: allow every reduction scheme (PyTorch's default,
      // allow_fp16/bf16_reduced_precision_reduction = True) rather than fail.
      const uint32_t any = CUBLASLT_REDUCTION_SCHEME_MASK;
      s = cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                  &any, sizeof(any));
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublaslt().MatmulAlgoGetHeuristic(handle, entry.desc, entry.a, entry.b, entry.d,
                                              entry.d, pref, 1, &result, &returned);
    }
    cublaslt().MatmulPreferenceDestroy(pref);
    if (s == CUBLAS_STATUS_SUCCESS && returned > 0) {
      entry.algo = result.algo;
      entry.found = true;
      return ok_result();
    }
    if (c.bias) return ok_result();  // found stays false: the caller falls back
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_error(s, "cublasLtMatmulAlgoGetHeuristic");
    return make_error(ErrorKind::kBackend,
                      "cuBLASLt found no algorithm for {} m={} n={} k={} batch={} lda={} ldb={} "
                      "ldd={}",
                      dtype_name(c.dtype), c.m, c.n, c.k, c.batch, c.lda, c.ldb, c.ldd);
  }

  Result<bool> gemm(const BlasCall& c, cudaStream_t stream) {
    SPLICE_ASSIGN_OR_RETURN(CachedGemm * entry, configure(c));
    if (!entry->found) return false;
    if (c.bias) {
      SPLICE_CUBLAS_CHECK(cublaslt().MatmulDescSetAttribute(
          entry->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c.bias, sizeof(c.bias)));
    }
    const float alpha_f = static_cast<float>(c.alpha), beta_f = static_cast<float>(c.beta);
    const bool f64 = c.dtype == DType::kFloat64;
    const void* alpha = f64 ? static_cast<const void*>(&c.alpha) : &alpha_f;
    const void* beta = f64 ? static_cast<const void*>(&c.beta) : &beta_f;
    SPLICE_CUBLAS_CHECK(cublaslt().Matmul(handle, entry->desc, alpha, c.a, entry->a, c.b, entry->b,
                                          beta, c.d, entry->d, c.d, entry->d, &entry->algo,
                                          workspace, workspace_bytes, stream));
    return true;
  }
};

namespace {

class CudaGemmSteps final : public GemmSteps {
 public:
  CudaGemmSteps(MatmulRunner::Impl& impl, cudaStream_t stream) : impl_(impl), stream_(stream) {}
  Result<void> copy(const DeviceTensor& dst, const DeviceTensor& src) override {
    return strided_copy(dst, src, stream_);
  }
  Result<void> scale(const DeviceTensor& dst, double beta) override {
    return scale_in_place(dst, beta, stream_);
  }
  Result<bool> gemm(const BlasCall& call) override { return impl_.gemm(call, stream_); }
  Result<void> int_gemm(const IntGemmArgs& args) override {
    return splice::cuda::int_gemm(args, stream_);
  }

 private:
  MatmulRunner::Impl& impl_;
  cudaStream_t stream_;
};

}  // namespace

std::string_view matmul_kind_name(MatmulKind kind) {
  switch (kind) {
    case MatmulKind::kMm:
      return "mm";
    case MatmulKind::kBmm:
      return "bmm";
    case MatmulKind::kMatmul:
      return "matmul";
    case MatmulKind::kLinear:
      return "linear";
    case MatmulKind::kAddmm:
      return "addmm";
    case MatmulKind::kBaddbmm:
      return "baddbmm";
  }
  return "matmul";
}

MatmulRunner::MatmulRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MatmulRunner::~MatmulRunner() = default;

Result<std::unique_ptr<MatmulRunner>> MatmulRunner::create(void* workspace,
                                                           size_t workspace_bytes) {
  SPLICE_ASSIGN_OR_RETURN(const CublasLtLibrary* lt, open_cublaslt());
  auto impl = std::make_unique<Impl>();
  SPLICE_CUBLAS_CHECK(lt->Create(&impl->handle));
  impl->workspace = workspace;
  impl->workspace_bytes = workspace == nullptr ? 0 : workspace_bytes;
  const size_t counter_bytes = kGemvCounters * sizeof(unsigned);
  SPLICE_ASSIGN_OR_RETURN(impl->gemv_counters,
                          DeviceBuffer::allocate(counter_bytes, "the GEMV arrival counters"));
  SPLICE_CUDA_CHECK(cudaMemset(impl->gemv_counters.data(), 0, counter_bytes));
  return std::unique_ptr<MatmulRunner>(new MatmulRunner(std::move(impl)));
}

Result<void> MatmulRunner::run(const MatmulArgs& args, const KernelScratch& scratch,
                               cudaStream_t stream) {
  SPLICE_ASSIGN_OR_RETURN(MatmulExec exec, describe_matmul(matmul_kind_name(args.kind), args));
  const GemvChoice gemv_choice = choose_gemv(exec);
  if (gemv_choice.use && impl_->gemv_enabled) {
    SPLICE_ASSIGN_OR_RETURN(int sm_count, current_sm_count());
    const GemvLaunch launch = plan_gemv(gemv_choice.args, sm_count);
    SPLICE_TRY(gemv(gemv_choice.args, launch, scratch,
                    static_cast<unsigned*>(impl_->gemv_counters.data()), stream));
    ++impl_->gemv_launches;
    return ok_result();
  }
  CudaGemmSteps steps(*impl_, stream);
  return execute_matmul(exec, scratch, steps);
}

Result<size_t> MatmulRunner::scratch_bytes(const MatmulArgs& args) {
  SPLICE_ASSIGN_OR_RETURN(MatmulExec exec, describe_matmul(matmul_kind_name(args.kind), args));
  if (exec.empty || exec.k_zero || !is_floating(exec.dtype)) return size_t{0};
  const GemvChoice gemv_choice = choose_gemv(exec);
  if (gemv_choice.use) {
    SPLICE_ASSIGN_OR_RETURN(int sm_count, current_sm_count());
    // The larger of the two paths' needs: a runner with the GEMV kernels turned off takes
    // cuBLASLt's path.
    return std::max(plan_gemv(gemv_choice.args, sm_count).partial_bytes, exec.plan.scratch_bytes);
  }
  return exec.plan.scratch_bytes;
}

size_t MatmulRunner::cached_algorithms() const { return impl_->cache.size(); }

size_t MatmulRunner::gemv_launches() const { return impl_->gemv_launches; }

void MatmulRunner::set_gemv_enabled(bool enabled) { impl_->gemv_enabled = enabled; }

bool MatmulRunner::gemv_enabled() const { return impl_->gemv_enabled; }

unsigned* MatmulRunner::gemv_counters() const {
  return static_cast<unsigned*>(impl_->gemv_counters.data());
}

void MatmulRunner::count_gemv_launch() { ++impl_->gemv_launches; }

Result<void> MatmulRunner::mm(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& out,
                              const KernelScratch& scratch, cudaStream_t stream) {
  MatmulArgs args;
  args.kind = MatmulKind::kMm;
  args.a = a;
  args.b = b;
  args.out = out;
  return run(args, scratch, stream);
}

Result<void> MatmulRunner::bmm(const DeviceTensor& a, const DeviceTensor& b,
                               const DeviceTensor& out, const KernelScratch& scratch,
                               cudaStream_t stream) {
  MatmulArgs args;
  args.kind = MatmulKind::kBmm;
  args.a = a;
  args.b = b;
  args.out = out;
  return run(args, scratch, stream);
}

Result<void> MatmulRunner::matmul(const DeviceTensor& a, const DeviceTensor& b,
                                  const DeviceTensor& out, const KernelScratch& scratch,
                                  cudaStream_t stream) {
  MatmulArgs args;
  args.kind = MatmulKind::kMatmul;
  args.a = a;
  args.b = b;
  args.out = out;
  return run(args, scratch, stream);
}

Result<void> MatmulRunner::linear(const DeviceTensor& input, const DeviceTensor& weight,
                                  const DeviceTensor* bias, const DeviceTensor& out,
                                  const KernelScratch& scratch, cudaStream_t stream) {
  MatmulArgs args;
  args.kind = MatmulKind::kLinear;
  args.a = input;
  args.b = weight;
  args.c = bias;
  args.out = out;
  return run(args, scratch, stream);
}

Result<void> MatmulRunner::addmm(const DeviceTensor& self, const DeviceTensor& mat1,
                                 const DeviceTensor& mat2, double beta, double alpha,
                                 const DeviceTensor& out, const KernelScratch& scratch,
                                 cudaStream_t stream) {
  MatmulArgs args;
  args.kind = MatmulKind::kAddmm;
  args.a = mat1;
  args.b = mat2;
  args.c = &self;
  args.alpha = alpha;
  args.beta = beta;
  args.out = out;
  return run(args, scratch, stream);
}

Result<void> MatmulRunner::baddbmm(const DeviceTensor& self, const DeviceTensor& batch1,
                                   const DeviceTensor& batch2, double beta, double alpha,
                                   const DeviceTensor& out, const KernelScratch& scratch,
                                   cudaStream_t stream) {
  MatmulArgs args;
  args.kind = MatmulKind::kBaddbmm;
  args.a = batch1;
  args.b = batch2;
  args.c = &self;
  args.alpha = alpha;
  args.beta = beta;
  args.out = out;
  return run(args, scratch, stream);
}

}  // namespace splice::cuda
