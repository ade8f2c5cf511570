// View ops on the CUDA backend: a view only changes sizes, strides and offset, so the view
// computation every backend shares (backends/common/views.h) serves device tensors as they
// are. The exception is view/_unsafe_view/reshape of a layout no view can express, where the
// input is first copied to a contiguous device tensor, which every shape can view.
#include "backends/common/views.h"
#include "backends/cuda/kernel_glue.h"

namespace splice::cuda::glue {

namespace {

// A view op's kernel: the shared computation over the device tensor.
template <Result<backend::Views> (*kView)(std::string_view, std::span<const KernelArg>)>
Result<Outputs> view(Ctx& ctx, std::span<const KernelArg> args) {
  return kView(ctx.op(), args);
}

Result<Outputs> reshape(Ctx& ctx, std::span<const KernelArg> args) {
  SPLICE_ASSIGN_OR_RETURN(backend::ReshapeView r, backend::reshape_view(ctx.op(), args));
  if (r.view) return Outputs{*r.view};
  SPLICE_ASSIGN_OR_RETURN(Tensor dense, ctx.contiguous(r.self));
  return Outputs{dense.view_as(r.sizes, contiguous_strides(r.sizes), dense.offset())};
}

}  // namespace

std::span<const KernelEntry> view_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::view, reshape>(),
      entry<OpId::_unsafe_view, reshape>(),
      entry<OpId::reshape, reshape>(),
      entry<OpId::permute, view<backend::permute_view>>(),
      entry<OpId::transpose_int, view<backend::transpose_view>>(),
      entry<OpId::t, view<backend::t_view>>(),
      entry<OpId::unsqueeze, view<backend::unsqueeze_view>>(),
      entry<OpId::squeeze_dim, view<backend::squeeze_dims_view>>(),
      entry<OpId::squeeze_dims, view<backend::squeeze_dims_view>>(),
      entry<OpId::squeeze, view<backend::squeeze_view>>(),
      entry<OpId::expand, view<backend::expand_view>>(),
      entry<OpId::slice_Tensor, view<backend::slice_view>>(),
      entry<OpId::select_int, view<backend::select_view>>(),
      entry<OpId::alias, view<backend::alias_view>>(),
      entry<OpId::detach, view<backend::alias_view>>(),
      entry<OpId::detach_, view<backend::alias_view>>(),
      entry<OpId::split_with_sizes, view<backend::split_with_sizes_view>>(),
      entry<OpId::split_Tensor, view<backend::split_view>>(),
      entry<OpId::unbind_int, view<backend::unbind_view>>(),
      entry<OpId::diagonal, view<backend::diagonal_view>>(),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
