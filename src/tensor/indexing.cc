// Python indexing on tensor views (see indexing.h).
#include "tensor/indexing.h"

#include <algorithm>

namespace splice {

Result<int64_t> wrap_dim(std::string_view op, int64_t dim, int64_t rank) {
  const int64_t r = rank == 0 ? 1 : rank;
  SPLICE_CHECK_OR_RETURN(dim >= -r && dim < r, ErrorKind::kOutOfRange,
                         "{}: dim {} is out of range for a tensor of rank {} (expected [{}, {}])",
                         op, dim, rank, -r, r - 1);
  return dim < 0 ? dim + r : dim;
}

Result<int64_t> wrap_index(std::string_view op, int64_t index, int64_t dim, int64_t size) {
  SPLICE_CHECK_OR_RETURN(index >= -size && index < size, ErrorKind::kOutOfRange,
                         "{}: index {} is out of range for dim {} of size {}", op, index, dim,
                         size);
  return index < 0 ? index + size : index;
}

std::pair<int64_t, int64_t> slice_bounds(std::optional<int64_t> start_opt,
                                         std::optional<int64_t> end_opt, int64_t size) {
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  if (start < 0) start = start < -size ? 0 : start + size;
  if (end < 0) end = end < -size ? 0 : end + size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {start, end};
}

Result<Tensor> slice_write_view(std::string_view op, const Tensor& base, const Shape& src_sizes,
                                std::optional<int64_t> dim_opt, std::optional<int64_t> start_opt,
                                std::optional<int64_t> end_opt, std::optional<int64_t> step_opt) {
  SPLICE_CHECK_OR_RETURN(base.dim() > 0, ErrorKind::kShapeMismatch, "{}: cannot slice a 0-d tensor",
                         op);
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, wrap_dim(op, dim_opt.value_or(0), base.dim()));
  const int64_t step = step_opt.value_or(1);
  SPLICE_CHECK_OR_RETURN(step >= 1, ErrorKind::kBadInput, "{}: slice step must be positive, got {}",
                         op, step);
  const auto [start, end] = slice_bounds(start_opt, end_opt, base.size(dim));
  Shape slice_shape = base.sizes();
  slice_shape[dim] = (end - start + step - 1) / step;
  SPLICE_CHECK_OR_RETURN(src_sizes == slice_shape, ErrorKind::kShapeMismatch,
                         "{}: src of shape {} does not match the shape {} of the slice [{}:{}:{}] "
                         "on dim {} of self {}",
                         op, shape_string(src_sizes), shape_string(slice_shape), start, end, step,
                         dim, shape_string(base.sizes()));
  Shape strides = base.strides();
  strides[dim] *= step;
  // An empty slice may start at the end of the dim: keep its offset inside the base.
  const int64_t first = slice_shape[dim] > 0 ? start : 0;
  return base.view_as(slice_shape, strides, base.offset() + first * base.stride(dim));
}

Result<Tensor> select_write_view(std::string_view op, const Tensor& base, const Shape& src_sizes,
                                 int64_t dim, int64_t index) {
  SPLICE_CHECK_OR_RETURN(base.dim() > 0, ErrorKind::kShapeMismatch,
                         "{}: cannot select from a 0-d tensor", op);
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, base.dim()));
  SPLICE_ASSIGN_OR_RETURN(index, wrap_index(op, index, dim, base.size(dim)));
  Shape sizes = base.sizes(), strides = base.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  SPLICE_CHECK_OR_RETURN(
      src_sizes == sizes, ErrorKind::kShapeMismatch,
      "{}: src of shape {} does not match the shape {} of self {} without dim {}", op,
      shape_string(src_sizes), shape_string(sizes), shape_string(base.sizes()), dim);
  return base.view_as(sizes, strides, base.offset() + index * base.stride(dim));
}

}  // namespace splice
