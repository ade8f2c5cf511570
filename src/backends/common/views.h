#pragma once
// The view ops' computation, shared by every backend's view kernels: a view only changes sizes,
// strides and the offset into its input's storage, so the same code serves a tensor on any
// device (each returns views built with Tensor::view_as; no element is read or written). The
// runtime never writes into views (kernels are functional). Argument positions and errors are
// those of the ATen schema (op_list.inc), the error prefixed with the op's name.
//
// Each *_view function is one op's computation: view(op, args) → the op's outputs, in order
// (a single view, or every piece of split_with_sizes/split/unbind). A backend's kernel table
// binds them to the op ids as its own kernels (cpu/views.cc, cuda/cuda_kernels_views.cc).

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "backends/kernel_abi.h"
#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::backend {

using Views = std::vector<Tensor>;

// Strides for viewing (old sizes, old strides) as new_sizes without copying, or nullopt
// (PyTorch's computeStride: merge runs of dims that are contiguous with each other).
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides,
                                  const Shape& new_sizes);

// view/_unsafe_view/reshape(self, shape): the shape with its -1 inferred (PyTorch's infer_size,
// with its errors) and, when self's strides allow (view_strides), self viewed as that shape.
// Without a view the backend copies self to contiguous memory on its device and views the copy
// as `sizes`. view copies too, unlike PyTorch's: an exported graph's view is legal for the
// memory layouts PyTorch's kernels produced while tracing, and splice's kernels may lay
// results out differently (a matmul or permute result left transposed, say); no caller can
// tell the copy from a view, since nothing writes through views.
struct ReshapeView {
  Tensor self;
  Shape sizes;
  std::optional<Tensor> view;
};
Result<ReshapeView> reshape_view(std::string_view op, std::span<const KernelArg> args);

Result<Views> permute_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> transpose_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> t_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> unsqueeze_view(std::string_view op, std::span<const KernelArg> args);
// squeeze.dim and squeeze.dims: the listed dims of size 1 removed.
Result<Views> squeeze_dims_view(std::string_view op, std::span<const KernelArg> args);
// squeeze(self): every dim of size 1 removed.
Result<Views> squeeze_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> expand_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> slice_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> select_view(std::string_view op, std::span<const KernelArg> args);
// alias, detach and detach_ (in place only on autograd metadata): self itself.
Result<Views> alias_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> split_with_sizes_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> split_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> unbind_view(std::string_view op, std::span<const KernelArg> args);
Result<Views> diagonal_view(std::string_view op, std::span<const KernelArg> args);

}  // namespace splice::backend
