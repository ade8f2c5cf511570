// View ops on the CUDA backend: a view only changes sizes, strides and offset, so the CPU
// backend's view kernels (which never touch elements) serve device tensors as they are. The
// exception is view/_unsafe_view/reshape of a layout no view can express, where the CPU kernel
// would copy on the host: here the input is first copied to a contiguous device tensor, which
// every shape can view.
#include <cstdint>

#include "backends/cpu/registry.h"
#include "backends/cpu/view_strides.h"
#include "backends/cuda/kernel_glue.h"

namespace splice::cuda::glue {

namespace {

// The CPU view kernel of this op over device tensors.
Result<Outputs> cpu_view(Ctx& ctx, std::span<const KernelArg> args) {
  const cpu::KernelFn fn = cpu::find_kernel(ctx.op());
  SPLICE_CHECK_OR_RETURN(fn != nullptr, ErrorKind::kInternal, "{}: no view kernel", ctx.op());
  return fn(KernelCall{}, args);
}

// The requested shape with its -1 inferred, or nullopt when it cannot be (then the CPU
// kernel's own check reports it).
std::optional<Shape> resolve_shape(const Shape& requested, int64_t numel) {
  Shape out = requested;
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (unknown >= 0) return std::nullopt;
      unknown = static_cast<int>(i);
    } else if (out[i] < 0) {
      return std::nullopt;
    } else {
      known *= out[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || numel % known != 0) return std::nullopt;
    out[unknown] = numel / known;
  }
  return out;
}

Result<Outputs> reshape(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape requested, a.int_list(1));
  if (!self.is_contiguous()) {
    const auto shape = resolve_shape(requested, self.numel());
    if (!shape || !cpu::view_strides(self.sizes(), self.strides(), *shape)) {
      SPLICE_ASSIGN_OR_RETURN(Tensor dense, ctx.contiguous(self));
      std::vector<KernelArg> copied(args.begin(), args.end());
      copied[0] = dense;
      return cpu_view(ctx, copied);
    }
  }
  return cpu_view(ctx, args);
}

}  // namespace

std::span<const KernelEntry> view_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::view, reshape>(),
      entry<OpId::_unsafe_view, reshape>(),
      entry<OpId::reshape, reshape>(),
      entry<OpId::permute, cpu_view>(),
      entry<OpId::transpose_int, cpu_view>(),
      entry<OpId::t, cpu_view>(),
      entry<OpId::unsqueeze, cpu_view>(),
      entry<OpId::squeeze_dim, cpu_view>(),
      entry<OpId::squeeze_dims, cpu_view>(),
      entry<OpId::squeeze, cpu_view>(),
      entry<OpId::expand, cpu_view>(),
      entry<OpId::slice_Tensor, cpu_view>(),
      entry<OpId::select_int, cpu_view>(),
      entry<OpId::alias, cpu_view>(),
      entry<OpId::detach, cpu_view>(),
      entry<OpId::detach_, cpu_view>(),
      entry<OpId::split_with_sizes, cpu_view>(),
      entry<OpId::split_Tensor, cpu_view>(),
      entry<OpId::unbind_int, cpu_view>(),
      entry<OpId::diagonal, cpu_view>(),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
