// The CPU backend's view kernels: the shared view computation (backends/common/views.h) over
// host tensors, and a reshape that no view can express copied to contiguous host memory first.
#include "backends/common/views.h"

#include "backends/cpu/args.h"

namespace splice::cpu {

namespace {

// A view op's kernel: the shared computation as it is.
template <Result<backend::Views> (*kView)(std::string_view, std::span<const KernelArg>)>
Result<Outputs> view(std::string_view op, std::span<const KernelArg> args) {
  return kView(op, args);
}

// view/_unsafe_view/reshape: a view when the strides allow one, else a contiguous copy
// (backend::reshape_view says why view copies too).
Result<Outputs> reshape(std::string_view op, std::span<const KernelArg> args) {
  SPLICE_ASSIGN_OR_RETURN(backend::ReshapeView r, backend::reshape_view(op, args));
  if (r.view) return Outputs{*r.view};
  Tensor copy = contiguous_copy(r.self);
  return Outputs{copy.view_as(r.sizes, contiguous_strides(r.sizes), 0)};
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
      // In-place only on autograd metadata (training IR, on lifted constants): an alias here.
      entry<OpId::detach_, view<backend::alias_view>>(),
      entry<OpId::split_with_sizes, view<backend::split_with_sizes_view>>(),
      entry<OpId::split_Tensor, view<backend::split_view>>(),
      entry<OpId::unbind_int, view<backend::unbind_view>>(),
      entry<OpId::diagonal, view<backend::diagonal_view>>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
