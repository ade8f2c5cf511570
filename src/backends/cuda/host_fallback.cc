// The host fallback (host_fallback.h): device arguments are copied to host memory (the stream
// is synchronized first), the CPU kernel runs, and its outputs are copied to new device
// tensors.
#include "backends/cuda/host_fallback.h"

#include <cuda_runtime_api.h>

#include <variant>

#include "backends/cpu/registry.h"
#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace glue {

namespace {

Result<Tensor> to_host(Ctx& ctx, const Tensor& t) {
  if (t.is_host()) return t;
  SPLICE_ASSIGN_OR_RETURN(Tensor dense, ctx.contiguous(t));
  SPLICE_ASSIGN_OR_RETURN(Tensor host, Tensor::empty(t.dtype(), t.sizes()));
  if (host.nbytes() > 0)
    SPLICE_CUDA_CHECK(cudaMemcpyAsync(host.raw_data(), dense.device_data(), host.nbytes(),
                                      cudaMemcpyDeviceToHost, ctx.stream()));
  return host;
}

}  // namespace

Result<Outputs> host_fallback(Ctx& ctx, std::span<const KernelArg> args) {
  const cpu::KernelFn fn = cpu::find_kernel(ctx.op());
  SPLICE_CHECK_OR_RETURN(fn != nullptr, ErrorKind::kInternal, "{}: no CPU kernel", ctx.op());
  std::vector<KernelArg> host(args.begin(), args.end());
  for (KernelArg& a : host) {
    if (auto* t = std::get_if<Tensor>(&a)) {
      SPLICE_ASSIGN_OR_RETURN(*t, to_host(ctx, *t));
    } else if (auto* list = std::get_if<std::vector<Tensor>>(&a)) {
      for (Tensor& t : *list) {
        SPLICE_ASSIGN_OR_RETURN(t, to_host(ctx, t));
      }
    } else if (auto* opt = std::get_if<std::vector<std::optional<Tensor>>>(&a)) {
      for (auto& t : *opt) {
        if (!t) continue;
        SPLICE_ASSIGN_OR_RETURN(*t, to_host(ctx, *t));
      }
    }
  }
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  SPLICE_ASSIGN_OR_RETURN(Outputs outs, fn(KernelCall{}, host));
  Outputs result;
  for (const Tensor& t : outs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor dense, t.contiguous_copy());
    SPLICE_ASSIGN_OR_RETURN(Tensor d, result.empty() ? ctx.output(t.dtype(), t.sizes())
                                                     : ctx.fresh(t.dtype(), t.sizes()));
    if (!d.is_contiguous()) {
      SPLICE_ASSIGN_OR_RETURN(d, ctx.fresh(t.dtype(), t.sizes()));
    }
    if (dense.nbytes() > 0)
      SPLICE_CUDA_CHECK(cudaMemcpyAsync(d.device_data(), dense.raw_data(), dense.nbytes(),
                                        cudaMemcpyHostToDevice, ctx.stream()));
    result.push_back(d);
  }
  // The host results go out of scope with this call: wait until they are uploaded.
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return result;
}

}  // namespace glue

std::vector<std::string_view> host_fallback_ops() {
  return {"aten._scaled_dot_product_cudnn_attention.default",
          "aten._scaled_dot_product_efficient_attention.default",
          "aten._scaled_dot_product_flash_attention.default"};
}

}  // namespace splice::cuda
