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

// The view of `base` that slice_scatter(self, src, dim, start, end, step) writes, after
// checking that src has exactly its shape.
Result<Tensor> slice_destination(std::string_view op, const Args& a, const Tensor& base,
                                 const Tensor& src) {
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto start_opt, a.opt_integer(3));
  SPLICE_ASSIGN_OR_RETURN(auto end_opt, a.opt_integer(4));
  SPLICE_ASSIGN_OR_RETURN(auto step_opt, a.opt_integer(5));
  KCHECK(base.dim() > 0, ErrorKind::kShapeMismatch, "cannot slice a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, wrap_dim(op, dim_opt.value_or(0), base.dim()));
  const int64_t step = step_opt.value_or(1);
  KCHECK(step >= 1, ErrorKind::kBadInput, "slice step must be positive, got {}", step);
  const auto [start, end] = normalize_bounds(start_opt, end_opt, base.size(dim));
  Shape slice_shape = base.sizes();
  slice_shape[dim] = (end - start + step - 1) / step;
  KCHECK(src.sizes() == slice_shape, ErrorKind::kShapeMismatch,
         "src of shape {} does not match the shape {} of the slice [{}:{}:{}] on dim {} of self "
         "{}",
         shape_string(src.sizes()), shape_string(slice_shape), start, end, step, dim,
         shape_string(base.sizes()));
  Shape strides = base.strides();
  strides[dim] *= step;
  // An empty slice may start at the end of the dim: keep its offset inside the base.
  const int64_t first = slice_shape[dim] > 0 ? start : 0;
  return base.view_as(slice_shape, strides, base.offset() + first * base.stride(dim));
}

// The view of `base` that select_scatter(self, src, dim, index) writes.
Result<Tensor> select_destination(std::string_view op, const Args& a, const Tensor& base,
                                  const Tensor& src) {
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t index, a.integer(3));
  KCHECK(base.dim() > 0, ErrorKind::kShapeMismatch, "cannot select from a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, base.dim()));
  SPLICE_ASSIGN_OR_RETURN(index, wrap_index(op, index, dim, base.size(dim)));
  Shape sizes = base.sizes(), strides = base.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  KCHECK(src.sizes() == sizes, ErrorKind::kShapeMismatch,
         "src of shape {} does not match the shape {} of self {} without dim {}",
         shape_string(src.sizes()), shape_string(sizes), shape_string(base.sizes()), dim);
  return base.view_as(sizes, strides, base.offset() + index * base.stride(dim));
}

template <bool kSlice>
Result<Outputs> scatter_write(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  // Check the bounds and shapes before copying self, so a bad write costs nothing.
  SPLICE_TRY(kSlice ? slice_destination(op, a, self, src) : select_destination(op, a, self, src));
  Tensor out = write_base(self);
  SPLICE_ASSIGN_OR_RETURN(Tensor dest, kSlice ? slice_destination(op, a, out, src)
                                              : select_destination(op, a, out, src));
  if (dest.numel() > 0) copy_cast_into(dest, src);
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> scatter_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<"aten.slice_scatter.default", scatter_write<true>>(),
      entry<"aten.select_scatter.default", scatter_write<false>>(),
  };
  return kEntries;
}

}  // namespace splice::cpu

namespace splice::cpu {

Result<Tensor> write_destination(std::string_view target, std::span<const KernelArg> args,
                                 const Tensor& base, const Tensor& src) {
  Args a(target, args);
  if (target == "aten.slice_scatter.default") return slice_destination(target, a, base, src);
  if (target == "aten.select_scatter.default") return select_destination(target, a, base, src);
  return make_error(ErrorKind::kInternal, "{} has no strided destination", target);
}

}  // namespace splice::cpu
