// The CUDA backend (cuda_backend.h): registration, device memory and host<->device copies,
// and the model and session contexts. Copies between host and device move contiguous bytes
// with cudaMemcpyAsync on the session's stream (synchronously when there is no session, as for
// weights uploaded at load); a strided side goes through a contiguous temporary and the
// generated copy kernel on the device (or the CPU's strided copy on the host).
#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <utility>

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/call_probe.h"
#include "backends/cuda/call_recording.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/gemv_epilogue.h"
#include "backends/cuda/pointwise_codegen.h"
#include "backends/cuda/pointwise_groups.h"
#include "backends/cuda/pointwise_launch.h"
#include "backends/cuda/window_positions.h"
#include "tensor/convert.h"

namespace splice::cuda {

namespace {

constexpr size_t kMatmulWorkspaceBytes = size_t{32} << 20;  // cuBLASLt's, fixed per session

DeviceTensor device_view(const Tensor& t) {
  DeviceTensor d;
  d.data = t.device_data();
  d.dtype = t.dtype();
  d.rank = static_cast<int>(t.dim());
  for (int i = 0; i < d.rank && i < kMaxDims; ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

class CudaModel final : public backend::ModelContext {
 public:
  explicit CudaModel(int device) : device_(device) {}
  int device() const { return device_; }

 private:
  int device_;
};

// CUDA graphs of a session's stream (call_recording.h) and the positions they read on the
// device (window_positions.h), behind the backend's optional recorder.
class CudaCallRecorder final : public backend::CallRecorder {
 public:
  Result<void> begin_recording(backend::SessionContext& session,
                               std::vector<std::shared_ptr<Storage>>* keep) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return cuda::begin_recording(*s, keep);
  }
  Result<std::unique_ptr<backend::RecordedCall>> end_recording(
      backend::SessionContext& session) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return cuda::end_recording(*s);
  }
  Result<bool> replay(backend::SessionContext& session,
                      const backend::RecordedCall& call) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return cuda::replay(*s, call);
  }
  Result<Tensor> bind_positions(backend::SessionContext& session, const Tensor& source,
                                std::span<const int64_t> offsets, const SymRange& range,
                                std::string_view context) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return cuda::bind_positions(*s, source, offsets, range, context);
  }
  Result<void> copy_at_position(backend::SessionContext& session, const Tensor& dst,
                                const Tensor& src, const backend::WindowPosition& at,
                                std::string_view context) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return cuda::copy_at_position(*s, dst, src, at, context);
  }
};

class CudaBackend final : public backend::Backend {
 public:
  CudaBackend() {
    set_kernels("cuda", cuda_kernels());
    // Pointwise groups run as one generated kernel each (pointwise_groups.h).
    set_pointwise_classes(gpu_pointwise_classes());
    set_pointwise_limits(kMaxPointwiseOperands, kMaxPointwiseConstants);
    // RMSNorm chains (with the residual add before them) run as one kernel each. (They were
    // off from 2026-12-06 13:48 until the kernel took the weight as the runtime passes it,
    // [1, ..., 1, H]: it required [T, H] and refused every program of more than one row.)
    set_fused_rms_norm();
    // A GEMV and the pointwise group reading it run as one kernel (gemv_epilogue.h).
    set_gemv_epilogue(kMaxEpilogueOperands);
    set_matmul_kernels(kGemvMaxRows, "cublaslt");
  }

  std::string_view name() const override { return "cuda"; }
  Device device() const override { return kCudaDevice; }
  std::string identity() const override { return device_identity(); }

  Result<std::shared_ptr<Storage>> allocate(size_t nbytes) const override {
    return allocate_device_storage(nbytes, kCudaDevice);
  }

  // The GPU's free memory (cudaMemGetInfo) plus what the caching allocator holds free: a call's
  // tensors live there, not in host memory. Unknown when the query fails (no device).
  std::optional<MemoryLimit> available_memory() const override {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: clear it so the next CUDA call does not see it
      return std::nullopt;
    }
    const size_t cached = cached_bytes();
    return MemoryLimit{static_cast<int64_t>(free + cached),
                       fmt::format("the GPU's free memory (cudaMemGetInfo: {} of {} bytes free, "
                                   "and {} bytes cached by splice)",
                                   free, total, cached)};
  }

  Result<void> copy(const Tensor& dst, const Tensor& src,
                    backend::SessionContext* session) const override {
    SPLICE_CHECK_OR_RETURN(dst.sizes() == src.sizes() && dst.dtype() == src.dtype(),
                           ErrorKind::kInternal, "copy of {}{} into {}{}", dtype_name(src.dtype()),
                           shape_string(src.sizes()), dtype_name(dst.dtype()),
                           shape_string(dst.sizes()));
    if (dst.is_host() && src.is_host()) {
      copy_cast_into(dst, src);
      return ok_result();
    }
    CudaSession* s = nullptr;
    if (session != nullptr) {
      SPLICE_ASSIGN_OR_RETURN(s, cuda_session(session));
      s->make_current();
    }
    const cudaStream_t stream = s != nullptr ? s->stream() : nullptr;
    if (s != nullptr && (dst.is_host() || src.is_host()) && is_recording(stream))
      return make_error(ErrorKind::kBackend,
                        "a copy between the host and the device cannot be part of a CUDA graph");
    SPLICE_TRY(copy_on(dst, src, stream, s));
    // Without a session nobody synchronizes later: finish now.
    if (s == nullptr) SPLICE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return ok_result();
  }

  Result<std::shared_ptr<backend::ModelContext>> open_model(
      const backend::ModelOptions& options) const override {
    if (!device_available())
      return make_error(ErrorKind::kBackend,
                        "the cuda backend needs an NVIDIA GPU and its driver, and this machine has "
                        "no usable CUDA device (plans for --device cuda can still be made here: "
                        "`splice inspect --plan --device cuda`)");
    SPLICE_CUDA_CHECK(cudaSetDevice(0));
    prepare_all(options.pointwise_groups);
    return std::shared_ptr<backend::ModelContext>(std::make_shared<CudaModel>(0));
  }

  Result<std::unique_ptr<backend::SessionContext>> open_session(
      backend::ModelContext& model) const override {
    auto* m = dynamic_cast<CudaModel*>(&model);
    SPLICE_CHECK_OR_RETURN(m != nullptr, ErrorKind::kInternal,
                           "a CUDA session needs a CUDA model context");
    SPLICE_ASSIGN_OR_RETURN(auto session, CudaSession::create(m->device()));
    return std::unique_ptr<backend::SessionContext>(std::move(session));
  }

  Result<void> synchronize(backend::SessionContext& session) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    s->make_current();
    SPLICE_CUDA_CHECK(cudaStreamSynchronize(s->stream()));
    if (!s->checks_unread()) return ok_result();
    return s->take_device_failure("a kernel of this call");
  }

  Result<void> wait_for(backend::SessionContext& session, void* queue) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return s->wait_for(static_cast<cudaStream_t>(queue));
  }

  const backend::CallRecorder* recorder() const override { return &recorder_; }

  Result<void> run_pointwise(backend::SessionContext* session, const ir::PointwiseProgram& program,
                             std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                             const Shape& sizes) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(session));
    return run_pointwise_group(*s, program, inputs, outputs, sizes);
  }

  Result<void> run_rms_norm(backend::SessionContext* session,
                            const backend::RmsNormCall& call) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(session));
    return run_rms_norm_group(*s, call);
  }

  Result<void> run_gemv_epilogue(backend::SessionContext* session,
                                 const backend::GemvEpilogueCall& call) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(session));
    return run_gemv_epilogue_group(*s, call);
  }

  Result<std::unique_ptr<backend::CallProbe>> probe(
      backend::SessionContext& session) const override {
    SPLICE_ASSIGN_OR_RETURN(CudaSession * s, cuda_session(&session));
    return make_call_probe(*s);
  }

 private:
  CudaCallRecorder recorder_;

  // dst = src where at least one side is on the device.
  Result<void> copy_on(const Tensor& dst, const Tensor& src, cudaStream_t stream,
                       CudaSession* s) const {
    const size_t bytes = src.nbytes();
    if (bytes == 0) return ok_result();
    LaunchContext ctx{stream, nullptr, 0, s != nullptr ? &s->workspace() : nullptr};
    if (!dst.is_host() && !src.is_host()) {
      if (dst.is_contiguous() && src.is_contiguous()) {
        SPLICE_CUDA_CHECK(cudaMemcpyAsync(dst.device_data(), src.device_data(), bytes,
                                          cudaMemcpyDefault, stream));
        return ok_result();
      }
      return copy_cast(device_view(dst), device_view(src), ctx);
    }
    if (!dst.is_host()) {  // host -> device
      Tensor host = src;
      if (!src.is_contiguous()) {
        SPLICE_ASSIGN_OR_RETURN(host, src.contiguous_copy());
      }
      if (dst.is_contiguous()) {
        SPLICE_CUDA_CHECK(cudaMemcpyAsync(dst.device_data(), host.raw_data(), bytes,
                                          cudaMemcpyHostToDevice, stream));
        // Pageable host memory: CUDA stages it before returning, so `host` may go now.
        return ok_result();
      }
      SPLICE_ASSIGN_OR_RETURN(auto storage, allocate_device_storage(bytes, kCudaDevice));
      Tensor staged(src.dtype(), src.sizes(), contiguous_strides(src.sizes()), 0, storage);
      SPLICE_CUDA_CHECK(cudaMemcpyAsync(staged.device_data(), host.raw_data(), bytes,
                                        cudaMemcpyHostToDevice, stream));
      return copy_cast(device_view(dst), device_view(staged), ctx);
    }
    // device -> host
    Tensor dev = src;
    if (!src.is_contiguous()) {
      SPLICE_ASSIGN_OR_RETURN(auto storage, allocate_device_storage(bytes, kCudaDevice));
      dev = Tensor(src.dtype(), src.sizes(), contiguous_strides(src.sizes()), 0, storage);
      SPLICE_TRY(copy_cast(device_view(dev), device_view(src), ctx));
    }
    if (dst.is_contiguous()) {
      SPLICE_CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), dev.device_data(), bytes,
                                        cudaMemcpyDeviceToHost, stream));
      return ok_result();
    }
    // A strided host destination: land the bytes first, then scatter them on the host.
    SPLICE_ASSIGN_OR_RETURN(Tensor landed, Tensor::empty(src.dtype(), src.sizes()));
    SPLICE_CUDA_CHECK(cudaMemcpyAsync(landed.raw_data(), dev.device_data(), bytes,
                                      cudaMemcpyDeviceToHost, stream));
    SPLICE_CUDA_CHECK(cudaStreamSynchronize(stream));
    copy_cast_into(dst, landed);
    return ok_result();
  }
};

const bool kRegistered = backend::register_backend(std::make_unique<CudaBackend>());

}  // namespace

Result<std::unique_ptr<CudaSession>> CudaSession::create(int device) {
  std::unique_ptr<CudaSession> s(new CudaSession());
  s->device_ = device;
  SPLICE_CUDA_CHECK(cudaSetDevice(device));
  SPLICE_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream_, cudaStreamNonBlocking));
  SPLICE_CUDA_CHECK(cudaEventCreateWithFlags(&s->ready_, cudaEventDisableTiming));
  SPLICE_ASSIGN_OR_RETURN(s->error_word_, ErrorWord::create());
  SPLICE_TRY(s->error_word_.clear(s->stream_));
  // The scratch counters start at 0 once; the kernels that use them leave them at 0.
  SPLICE_ASSIGN_OR_RETURN(s->counters_, DeviceBuffer::allocate(kScratchCounters * sizeof(uint32_t),
                                                               "the kernel scratch counters"));
  SPLICE_CUDA_CHECK(cudaMemsetAsync(s->counters_.data(), 0, s->counters_.size(), s->stream_));
  SPLICE_ASSIGN_OR_RETURN(s->matmul_workspace_,
                          DeviceBuffer::allocate(kMatmulWorkspaceBytes, "the cuBLASLt workspace"));
  SPLICE_ASSIGN_OR_RETURN(
      s->matmul_, MatmulRunner::create(s->matmul_workspace_.data(), s->matmul_workspace_.size()));
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(s->stream_));
  return s;
}

CudaSession::~CudaSession() {
  if (stream_ == nullptr) return;
  (void)cudaStreamSynchronize(stream_);
  matmul_.reset();
  if (ready_ != nullptr) (void)cudaEventDestroy(ready_);
  release_stream(stream_);
  (void)cudaStreamDestroy(stream_);
}

Result<KernelScratch> CudaSession::scratch(size_t bytes) {
  if (bytes == 0) return KernelScratch{};
  if (scratch_.size() < bytes) {
    // Queued kernels may still use the old block.
    SPLICE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    scratch_ = DeviceBuffer();
    SPLICE_ASSIGN_OR_RETURN(scratch_,
                            DeviceBuffer::allocate(scratch_round(bytes), "kernel scratch"));
  }
  return KernelScratch{scratch_.data(), scratch_.size(), static_cast<uint32_t*>(counters_.data()),
                       kScratchCounters};
}

Result<void> CudaSession::take_device_failure(std::string_view context) {
  SPLICE_ASSIGN_OR_RETURN(auto failure, error_word_.read(stream_));
  checks_unread_ = false;
  if (!failure) return ok_result();
  SPLICE_TRY(error_word_.clear(stream_));
  if (failure->site > 0 && static_cast<size_t>(failure->site) <= site_ops_.size())
    return failure_error(*failure, site_ops_[static_cast<size_t>(failure->site) - 1]);
  return failure_error(*failure, context);
}

Result<void> CudaSession::wait_for(cudaStream_t other) {
  if (other == stream_) return ok_result();
  SPLICE_CUDA_CHECK(cudaEventRecord(ready_, other));
  SPLICE_CUDA_CHECK(cudaStreamWaitEvent(stream_, ready_, 0));
  return ok_result();
}

int64_t CudaSession::recording_site(std::string_view op) {
  note_checks();
  auto it = std::find(site_ops_.begin(), site_ops_.end(), op);
  if (it == site_ops_.end()) it = site_ops_.insert(site_ops_.end(), std::string(op));
  return static_cast<int64_t>(it - site_ops_.begin()) + 1;
}

void CudaSession::make_current() const {
  set_current_stream(stream_);
  (void)cudaSetDevice(device_);
}

Result<CudaSession*> cuda_session(backend::SessionContext* session) {
  auto* s = dynamic_cast<CudaSession*>(session);
  SPLICE_CHECK_OR_RETURN(s != nullptr, ErrorKind::kInternal,
                         "a CUDA kernel was called without a CUDA session");
  return s;
}

}  // namespace splice::cuda
