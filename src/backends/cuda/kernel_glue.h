#pragma once
// What the CUDA backend's kernel functions (cuda_kernels_*.cc) share: the call's context on
// the session (stream, error word, scratch, cuBLASLt runner, outputs from the planned
// destination or the caching allocator), device views of tensors, and the table entry
// template. Arguments are read with the accessors every backend shares (backends/common/
// args.h), so malformed arguments give the same errors on both backends.

#include <span>
#include <string_view>
#include <vector>

#include "backends/common/args.h"
#include "backends/cuda/call_recording.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/device_tensor.h"
#include "backends/kernel_abi.h"

namespace splice::cuda::glue {

using backend::Args;
using backend::KernelArg;
using backend::KernelCall;
using backend::KernelEntry;
using ir::OpId;
using Outputs = std::vector<Tensor>;

// One kernel call on a CUDA session.
class Ctx {
 public:
  Ctx(const KernelCall& call, CudaSession& session, std::string_view op)
      : call_(call), session_(session), op_(op) {}

  std::string_view op() const { return op_; }
  const KernelCall& call() const { return call_; }
  CudaSession& session() { return session_; }
  cudaStream_t stream() const { return session_.stream(); }
  // The session's launch context; `checked` says the launch may record a device-side failure,
  // which the entry then reads before returning (a stream sync) — or, while the call is being
  // recorded as a CUDA graph, when the call ends, under a site that names the op.
  LaunchContext launch(bool checked = false) {
    checked_ = checked_ || checked;
    if (checked) session_.note_checks();
    LaunchContext ctx = session_.launch();
    if (checked && is_recording(session_.stream())) ctx.site = session_.recording_site(op_);
    return ctx;
  }
  bool checked() const { return checked_; }
  Result<KernelScratch> scratch(size_t bytes) { return session_.scratch(bytes); }

  // Output 0: the planned destination when it has this dtype and sizes, else new memory.
  Result<Tensor> output(DType dtype, const Shape& sizes);
  // A new contiguous device tensor (outputs other than 0, temporaries).
  Result<Tensor> fresh(DType dtype, const Shape& sizes);
  // A contiguous device copy of t (dtype kept).
  Result<Tensor> contiguous(const Tensor& t);
  // dst = src converted (src broadcast to dst's shape), on the device.
  Result<void> copy(const Tensor& dst, const Tensor& src);

 private:
  const KernelCall& call_;
  CudaSession& session_;
  std::string_view op_;
  bool checked_ = false;
};

// The device view of a tensor on the GPU (kBadInput naming the op when it has more than
// kMaxDims dims or is on the host).
Result<DeviceTensor> dev(std::string_view op, const Tensor& t);

using OpKernel = Result<Outputs> (*)(Ctx& ctx, std::span<const KernelArg> args);

// The kernel boundary: finds the session, makes its stream current, runs the kernel and reads
// the error word when a launch was checked.
Result<Outputs> run_cuda_kernel(const KernelCall& call, std::string_view op,
                                std::span<const KernelArg> args, OpKernel impl);

template <ir::OpId kOp, OpKernel kImpl>
Result<Outputs> bound(const KernelCall& call, std::span<const KernelArg> args) {
  return run_cuda_kernel(call, ir::op_target(kOp), args, kImpl);
}

template <ir::OpId kOp, OpKernel kImpl>
constexpr KernelEntry entry(uint32_t caps = backend::kNoCaps) {
  return {kOp, &bound<kOp, kImpl>, caps};
}

// Each family's table (cuda_kernels.cc merges them).
std::span<const KernelEntry> view_kernels();       // cuda_kernels_views.cc
std::span<const KernelEntry> pointwise_kernels();  // cuda_kernels_pointwise.cc
std::span<const KernelEntry> data_kernels();       // cuda_kernels_data.cc: cat, writes, index
std::span<const KernelEntry> shape_kernels();      // cuda_kernels_data.cc: flip, pad, repeat
std::span<const KernelEntry> reduce_kernels();     // cuda_kernels_reduce.cc
std::span<const KernelEntry> nn_kernels();         // cuda_kernels_nn.cc: matmul, softmax, norms
std::span<const KernelEntry> attention_kernels();  // cuda_kernels_nn.cc
std::span<const KernelEntry> sort_kernels();       // cuda_kernels_sort.cc: sort, topk

}  // namespace splice::cuda::glue
