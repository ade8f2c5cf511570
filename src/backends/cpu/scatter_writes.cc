// Functional slice writes: slice_scatter and select_scatter. The result is a new copy of self
// whose slice holds src converted to self's dtype (c10 conversion rules: float→int truncates,
// −1.0 → uint8 255, anything→bool is != 0). Slice bounds follow Python slicing (None start = 0,
// None end = size, negatives add size, clamp into [0, size], end < start is empty); src must
// have exactly the slice's shape (no broadcasting), as eager PyTorch requires.
#include <algorithm>

#include "backends/cpu/args.h"
#include "backends/cpu/cast.h"

namespace splice::cpu {

namespace {

// Python slice bounds of [start, end) on a dim of `size`.
std::pair<int64_t, int64_t> normalize_bounds(std::optional<int64_t> start_opt,
                                             std::optional<int64_t> end_opt, int64_t size) {
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  if (start < 0) start = start < -size ? 0 : start + size;
  if (end < 0) end = end < -size ? 0 : end + size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {start, end};
}

Result<Outputs> slice_scatter(std::string_view op, std::span<const KernelArg> args) {
  // slice_scatter(self, src, dim=0, start=None, end=None, step=1)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto start_opt, a.opt_integer(3));
  SPLICE_ASSIGN_OR_RETURN(auto end_opt, a.opt_integer(4));
  SPLICE_ASSIGN_OR_RETURN(auto step_opt, a.opt_integer(5));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "cannot slice a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, wrap_dim(op, dim_opt.value_or(0), self.dim()));
  const int64_t step = step_opt.value_or(1);
  KCHECK(step >= 1, ErrorKind::kBadInput, "slice step must be positive, got {}", step);
  const auto [start, end] = normalize_bounds(start_opt, end_opt, self.size(dim));
  Shape slice_shape = self.sizes();
  slice_shape[dim] = (end - start + step - 1) / step;
  KCHECK(src.sizes() == slice_shape, ErrorKind::kShapeMismatch,
         "src of shape {} does not match the shape {} of the slice [{}:{}:{}] on dim {} of self "
         "{}",
         shape_string(src.sizes()), shape_string(slice_shape), start, end, step, dim,
         shape_string(self.sizes()));
  Tensor out = self.contiguous_copy();
  if (slice_shape[dim] > 0) {
    Shape strides = out.strides();
    strides[dim] *= step;
    copy_cast_into(out.view_as(slice_shape, strides, start * out.stride(dim)), src);
  }
  return Outputs{out};
}

Result<Outputs> select_scatter(std::string_view op, std::span<const KernelArg> args) {
  // select_scatter(self, src, dim, index)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t index, a.integer(3));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "cannot select from a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const int64_t size = self.size(dim);
  SPLICE_ASSIGN_OR_RETURN(index, wrap_index(op, index, dim, size));
  Shape sizes = self.sizes(), strides;
  sizes.erase(sizes.begin() + dim);
  KCHECK(src.sizes() == sizes, ErrorKind::kShapeMismatch,
         "src of shape {} does not match the shape {} of self {} without dim {}",
         shape_string(src.sizes()), shape_string(sizes), shape_string(self.sizes()), dim);
  Tensor out = self.contiguous_copy();
  strides = out.strides();
  strides.erase(strides.begin() + dim);
  copy_cast_into(out.view_as(sizes, strides, index * out.stride(dim)), src);
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> scatter_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<"aten.slice_scatter.default", slice_scatter>(),
      entry<"aten.select_scatter.default", select_scatter>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
