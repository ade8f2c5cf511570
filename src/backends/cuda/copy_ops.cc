// Copies, fills, cat/stack and the slice writes through one generated copy kernel per
// (source dtype, destination dtype) pair; same-dtype dense copies become cudaMemcpyAsync.
#include "backends/cuda/copy_ops.h"

#include <algorithm>
#include <vector>

#include "backends/common/args.h"
#include "backends/common/promotion.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/indexing.h"
#include "backends/cuda/pointwise_launch.h"
#include "support/checked_math.h"
#include "tensor/indexing.h"

namespace splice::cuda {

namespace {

Shape sizes_of(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

ir::PointwiseProgram copy_program(DType from, DType to) {
  ir::PointwiseProgram p;
  const ir::PointwiseRef x = p.add_input(from);
  p.add_output(p.add_node(ir::PointwiseFn::kCopy, {x}, to, ir::opmath_dtype(to)));
  return p;
}

// A view of t with dim `dim` restricted to [start, start + length) with step `step`.
DeviceTensor narrow(const DeviceTensor& t, int64_t dim, int64_t start, int64_t length,
                    int64_t step = 1) {
  DeviceTensor v = t;
  if (length > 0) {
    v.data = static_cast<char*>(t.data) + start * t.strides[dim] * dtype_size(t.dtype);
  }
  v.sizes[dim] = length;
  v.strides[dim] = t.strides[dim] * step;
  return v;
}

// t without dim `dim`, at index `index` along it.
DeviceTensor select(const DeviceTensor& t, int64_t dim, int64_t index) {
  DeviceTensor v;
  v.dtype = t.dtype;
  v.data = static_cast<char*>(t.data) + index * t.strides[dim] * dtype_size(t.dtype);
  v.rank = t.rank - 1;
  for (int d = 0, k = 0; d < t.rank; ++d) {
    if (d == dim) continue;
    v.sizes[k] = t.sizes[d];
    v.strides[k] = t.strides[d];
    ++k;
  }
  return v;
}

bool same_view(const DeviceTensor& a, const DeviceTensor& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.sizes[d] != b.sizes[d] || (a.sizes[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

Result<void> check_rank(std::string_view op, const DeviceTensor& t) {
  SPLICE_CHECK_OR_RETURN(t.rank <= kMaxDims, ErrorKind::kUnsupportedOp,
                         "{}: {} dims exceed the {} CUDA kernels take", op, t.rank, kMaxDims);
  return ok_result();
}

}  // namespace

Result<void> copy_cast(const DeviceTensor& dst, const DeviceTensor& src, const LaunchContext& ctx) {
  const int64_t n = dst.numel();
  if (n == 0) return ok_result();
  // cudaMemcpyAsync cannot skip its copy once the call has failed (the error word); the
  // generated kernel, dense and vectorised here, can.
  if (ctx.error_word == nullptr && dst.dtype == src.dtype && sizes_of(dst) == sizes_of(src) &&
      is_contiguous(dst) && is_contiguous(src)) {
    if (dst.data != src.data) {
      SPLICE_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, n * dtype_size(dst.dtype),
                                        cudaMemcpyDeviceToDevice, ctx.stream));
    }
    return ok_result();
  }
  const DeviceTensor in[] = {src};
  const DeviceTensor out[] = {dst};
  return launch_pointwise(copy_program(src.dtype, dst.dtype), in, out, ctx);
}

Result<void> copy_at_position(const PointwiseOperand& dst, const PointwiseOperand& src,
                              const LaunchContext& ctx) {
  if (dst.view.numel() == 0) return ok_result();
  SPLICE_CHECK_OR_RETURN(ctx.error_word != nullptr, ErrorKind::kInternal,
                         "a copy at a device position needs an error word");
  const PointwiseOperand in[] = {src};
  const PointwiseOperand out[] = {dst};
  return launch_pointwise(copy_program(src.view.dtype, dst.view.dtype), in, out, ctx);
}

Result<void> fill(const DeviceTensor& dst, const Scalar& value, const LaunchContext& ctx) {
  if (dst.numel() == 0) return ok_result();
  if (ctx.error_word == nullptr && value.to_double() == 0.0 && !value.is_double() &&
      is_contiguous(dst)) {
    // Zero is all-zero bytes in every dtype.
    SPLICE_CUDA_CHECK(
        cudaMemsetAsync(dst.data, 0, dst.numel() * dtype_size(dst.dtype), ctx.stream));
    return ok_result();
  }
  ir::PointwiseProgram p;
  const ir::PointwiseRef c = p.add_constant(value, dst.dtype);
  p.add_output(p.add_node(ir::PointwiseFn::kCopy, {c}, dst.dtype, ir::opmath_dtype(dst.dtype)));
  const DeviceTensor out[] = {dst};
  return launch_pointwise(p, std::span<const DeviceTensor>(), out, ctx);
}

Result<void> cat(const DeviceTensor& out, std::span<const DeviceTensor> inputs, int64_t dim,
                 const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.cat.default";
  KCHECK(!inputs.empty(), ErrorKind::kBadInput, "expected a non-empty list of tensors");
  std::vector<backend::PromotionOperand> ops;
  for (const DeviceTensor& t : inputs)
    ops.push_back({t.dtype, backend::PromotionOperand::Priority::kDimensioned});
  const DType dtype = backend::result_type(ops);
  auto is_legacy_empty = [](const DeviceTensor& t) { return t.rank == 1 && t.sizes[0] == 0; };
  const DeviceTensor* ref = nullptr;
  for (const DeviceTensor& t : inputs) {
    KCHECK(t.rank > 0, ErrorKind::kShapeMismatch,
           "zero-dimensional tensors cannot be concatenated");
    if (!ref && !is_legacy_empty(t)) ref = &t;
  }
  if (!ref) return ok_result();
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, ref->rank));
  Shape shape = sizes_of(*ref);
  int64_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DeviceTensor& t = inputs[i];
    if (is_legacy_empty(t)) continue;
    KCHECK(t.rank == ref->rank, ErrorKind::kShapeMismatch,
           "tensor {} has rank {} but tensor 0 has rank {} (shapes {} and {})", i, t.rank,
           ref->rank, shape_string(sizes_of(t)), shape_string(sizes_of(*ref)));
    for (int d = 0; d < t.rank; ++d) {
      KCHECK(d == dim || t.sizes[d] == shape[d], ErrorKind::kShapeMismatch,
             "sizes of tensors must match except in dim {}: tensor {} has shape {}, expected {} "
             "at dim {}",
             dim, i, shape_string(sizes_of(t)), shape[d], d);
    }
    auto sum = checked_add(total, t.sizes[dim]);
    KCHECK(sum.has_value(), ErrorKind::kShapeMismatch, "concatenated size overflows");
    total = *sum;
  }
  shape[dim] = total;
  KCHECK(out.dtype == dtype && sizes_of(out) == shape, ErrorKind::kShapeMismatch,
         "the output is {}{} but the result is {}{}", dtype_name(out.dtype),
         shape_string(sizes_of(out)), dtype_name(dtype), shape_string(shape));
  int64_t pos = 0;
  for (const DeviceTensor& t : inputs) {
    if (is_legacy_empty(t)) continue;
    SPLICE_TRY(copy_cast(narrow(out, dim, pos, t.sizes[dim]), t, ctx));
    pos += t.sizes[dim];
  }
  return ok_result();
}

Result<void> stack(const DeviceTensor& out, std::span<const DeviceTensor> inputs, int64_t dim,
                   const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.stack.default";
  KCHECK(!inputs.empty(), ErrorKind::kBadInput, "expects a non-empty TensorList");
  const Shape shape = sizes_of(inputs[0]);
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, inputs[0].rank + 1));
  std::vector<backend::PromotionOperand> ops;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KCHECK(sizes_of(inputs[i]) == shape, ErrorKind::kShapeMismatch,
           "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
           shape_string(shape), shape_string(sizes_of(inputs[i])), i);
    ops.push_back({inputs[i].dtype, backend::PromotionOperand::Priority::kDimensioned});
  }
  Shape out_shape = shape;
  out_shape.insert(out_shape.begin() + dim, static_cast<int64_t>(inputs.size()));
  KCHECK(out.dtype == backend::result_type(ops) && sizes_of(out) == out_shape,
         ErrorKind::kShapeMismatch, "the output is {}{} but the result is {}{}",
         dtype_name(out.dtype), shape_string(sizes_of(out)), dtype_name(backend::result_type(ops)),
         shape_string(out_shape));
  SPLICE_TRY(check_rank(op, out));
  for (size_t i = 0; i < inputs.size(); ++i)
    SPLICE_TRY(copy_cast(select(out, dim, static_cast<int64_t>(i)), inputs[i], ctx));
  return ok_result();
}

Result<void> slice_scatter(const DeviceTensor& out, const DeviceTensor& self,
                           const DeviceTensor& src, int64_t dim, std::optional<int64_t> start_opt,
                           std::optional<int64_t> end_opt, int64_t step, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.slice_scatter.default";
  KCHECK(self.rank > 0, ErrorKind::kShapeMismatch, "cannot slice a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  KCHECK(step >= 1, ErrorKind::kBadInput, "slice step must be positive, got {}", step);
  // Python slice bounds, as cpu/scatter_writes.cc normalises them.
  const int64_t size = self.sizes[dim];
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  if (start < 0) start = start < -size ? 0 : start + size;
  if (end < 0) end = end < -size ? 0 : end + size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape slice_shape = sizes_of(self);
  slice_shape[dim] = (end - start + step - 1) / step;
  KCHECK(sizes_of(src) == slice_shape, ErrorKind::kShapeMismatch,
         "src of shape {} does not match the shape {} of the slice [{}:{}:{}] on dim {} of self "
         "{}",
         shape_string(sizes_of(src)), shape_string(slice_shape), start, end, step, dim,
         shape_string(sizes_of(self)));
  KCHECK(out.dtype == self.dtype && sizes_of(out) == sizes_of(self), ErrorKind::kShapeMismatch,
         "the output is {}{} but self is {}{}", dtype_name(out.dtype), shape_string(sizes_of(out)),
         dtype_name(self.dtype), shape_string(sizes_of(self)));
  if (!same_view(out, self)) SPLICE_TRY(copy_cast(out, self, ctx));
  if (slice_shape[dim] == 0) return ok_result();
  return copy_cast(narrow(out, dim, start, slice_shape[dim], step), src, ctx);
}

Result<void> select_scatter(const DeviceTensor& out, const DeviceTensor& self,
                            const DeviceTensor& src, int64_t dim, int64_t index,
                            const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.select_scatter.default";
  KCHECK(self.rank > 0, ErrorKind::kShapeMismatch, "cannot select from a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  SPLICE_ASSIGN_OR_RETURN(index, wrap_index(op, index, dim, self.sizes[dim]));
  Shape sizes = sizes_of(self);
  sizes.erase(sizes.begin() + dim);
  KCHECK(sizes_of(src) == sizes, ErrorKind::kShapeMismatch,
         "src of shape {} does not match the shape {} of self {} without dim {}",
         shape_string(sizes_of(src)), shape_string(sizes), shape_string(sizes_of(self)), dim);
  KCHECK(out.dtype == self.dtype && sizes_of(out) == sizes_of(self), ErrorKind::kShapeMismatch,
         "the output is {}{} but self is {}{}", dtype_name(out.dtype), shape_string(sizes_of(out)),
         dtype_name(self.dtype), shape_string(sizes_of(self)));
  if (!same_view(out, self)) SPLICE_TRY(copy_cast(out, self, ctx));
  return copy_cast(select(out, dim, index), src, ctx);
}

Result<void> slice_write_at_position(const DeviceTensor& base, const DeviceTensor& src, int64_t dim,
                                     const int64_t* position, const LaunchContext& ctx) {
  constexpr std::string_view op = "slice write at a device position";
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, base.rank));
  KCHECK(src.rank == base.rank, ErrorKind::kShapeMismatch,
         "src of rank {} written into a base of rank {}", src.rank, base.rank);
  for (int d = 0; d < base.rank; ++d) {
    KCHECK(d == dim || src.sizes[d] == base.sizes[d], ErrorKind::kShapeMismatch,
           "src of shape {} does not fit base {} outside dim {}", shape_string(sizes_of(src)),
           shape_string(sizes_of(base)), dim);
  }
  KCHECK(src.sizes[dim] <= base.sizes[dim], ErrorKind::kShapeMismatch,
         "src of {} entries on dim {} cannot fit a base of {}", src.sizes[dim], dim,
         base.sizes[dim]);
  KCHECK(ctx.error_word != nullptr, ErrorKind::kInternal,
         "a write at a device position needs an error word");
  if (src.numel() == 0) return ok_result();
  DevicePosition pos;
  pos.position = position;
  pos.dim = dim;
  pos.dim_size = base.sizes[dim];
  pos.stride = base.strides[dim];
  pos.extent = src.sizes[dim];
  DeviceTensor window = base;
  window.sizes[dim] = src.sizes[dim];
  return copy_at_position({window, &pos}, {src, nullptr}, ctx);
}

}  // namespace splice::cuda
