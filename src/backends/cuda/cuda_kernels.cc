// The CUDA kernel table (cuda_kernels.h) and what its kernel functions share (kernel_glue.h):
// the call context's outputs and copies, device views, and the kernel boundary that reads the
// error word after a checked launch.
#include "backends/cuda/cuda_kernels.h"

#include <algorithm>

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/kernel_glue.h"

namespace splice::cuda {

namespace glue {

Result<DeviceTensor> dev(std::string_view op, const Tensor& t) {
  SPLICE_CHECK_OR_RETURN(!t.is_host(), ErrorKind::kInternal,
                         "{}: a tensor in host memory reached a CUDA kernel", op);
  SPLICE_CHECK_OR_RETURN(t.dim() <= kMaxDims, ErrorKind::kBadInput,
                         "{}: the CUDA backend supports tensors of at most {} dims, got {}", op,
                         kMaxDims, t.dim());
  DeviceTensor d;
  d.data = t.device_data();
  d.dtype = t.dtype();
  d.rank = static_cast<int>(t.dim());
  for (int i = 0; i < d.rank; ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

Result<Tensor> Ctx::fresh(DType dtype, const Shape& sizes) {
  for (int64_t s : sizes)
    SPLICE_CHECK_OR_RETURN(s >= 0, ErrorKind::kShapeMismatch, "{}: negative size in {}", op_,
                           shape_string(sizes));
  auto n = checked_numel(sizes);
  SPLICE_CHECK_OR_RETURN(n.has_value(), ErrorKind::kShapeMismatch,
                         "{}: a tensor of sizes {} is too large", op_, shape_string(sizes));
  SPLICE_ASSIGN_OR_RETURN(
      auto storage,
      allocate_device_storage(static_cast<size_t>(*n) * dtype_size(dtype), kCudaDevice));
  return Tensor(dtype, sizes, contiguous_strides(sizes), 0, std::move(storage));
}

Result<Tensor> Ctx::output(DType dtype, const Shape& sizes) {
  const Tensor* d = call_.destination;
  if (d != nullptr && d->defined() && !d->is_host() && d->dtype() == dtype && d->sizes() == sizes)
    return *d;
  return fresh(dtype, sizes);
}

Result<void> Ctx::copy(const Tensor& dst, const Tensor& src) {
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(op_, dst));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op_, src));
  LaunchContext ctx = session_.launch();
  ctx.error_word = nullptr;  // a plain copy checks nothing (and may then use cudaMemcpy)
  return copy_cast(d, s, ctx);
}

Result<Tensor> Ctx::contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, fresh(t.dtype(), t.sizes()));
  SPLICE_TRY(copy(out, t));
  return out;
}

Result<Outputs> run_cuda_kernel(const KernelCall& call, std::string_view op,
                                std::span<const KernelArg> args, OpKernel impl) {
  SPLICE_ASSIGN_OR_RETURN(CudaSession * session, cuda_session(call.session));
  session->make_current();
  Ctx ctx(call, *session, op);
  auto out = impl(ctx, args);
  // A recorded call cannot wait for the device here: its checks are read when it ends
  // (call_recording.h).
  if (ctx.checked() && !is_recording(session->stream())) {
    // A device-side check of this node failed: report it now (the CPU backend stops at the
    // failing node too), in the CPU kernel's words, prefixed with the op.
    auto failure = session->take_device_failure(op);
    if (!failure.ok()) return failure.error();
  }
  return out;
}

}  // namespace glue

std::span<const backend::KernelEntry> cuda_kernels() {
  static const std::vector<backend::KernelEntry> entries = [] {
    std::vector<backend::KernelEntry> v;
    for (auto table : {glue::view_kernels(), glue::pointwise_kernels(), glue::data_kernels(),
                       glue::shape_kernels(), glue::reduce_kernels(), glue::nn_kernels(),
                       glue::attention_kernels(), glue::sort_kernels()})
      v.insert(v.end(), table.begin(), table.end());
    std::sort(v.begin(), v.end(), [](const backend::KernelEntry& a, const backend::KernelEntry& b) {
      return a.op < b.op;
    });
    return v;
  }();
  return entries;
}

}  // namespace splice::cuda
