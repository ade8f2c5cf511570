// Data-movement ops on the CUDA backend: cat and stack, the slice writes (slice_scatter,
// select_scatter) and index writes (index_put, index_copy) that run in place on their base when
// the plan asks (kWritesInPlace: only the slice or the indexed rows are written), the index
// reads and scatters with device-side bounds checks (a bad index fails the call naming the
// node and the index, nothing written), and the shape-rearranging copies (flip, roll, repeat,
// repeat_interleave, tril/triu, constant_pad_nd). Output shapes and argument errors follow the
// CPU kernels; the launchers check what they are given again.
#include <optional>

#include "backends/common/promotion.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/index_ops.h"
#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/shape_ops.h"
#include "tensor/indexing.h"

namespace splice::cuda::glue {

namespace {

using backend::kWritesInPlace;

// The DeviceTensors of a tensor list.
Result<std::vector<DeviceTensor>> devs(std::string_view op, const std::vector<Tensor>& ts) {
  std::vector<DeviceTensor> out;
  for (const Tensor& t : ts) {
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(op, t));
    out.push_back(d);
  }
  return out;
}

// The tensor a write stores into: its base itself when in place, else a new tensor of its
// shape (the launchers copy self into it first).
Result<Tensor> write_out(Ctx& ctx, const Tensor& self) {
  if (ctx.call().in_place) return self;
  return ctx.output(self.dtype(), self.sizes());
}

Result<Outputs> cat(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, a.tensor_list(0));
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(1));
  SPLICE_CHECK_OR_RETURN(!tensors.empty(), ErrorKind::kBadInput,
                         "{}: expected a non-empty list of tensors", op);
  std::vector<backend::PromotionOperand> ops;
  for (const Tensor& t : tensors)
    ops.push_back({t.dtype(), backend::PromotionOperand::Priority::kDimensioned});
  const DType dtype = backend::result_type(ops);
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors)
    if (!ref && !(t.dim() == 1 && t.size(0) == 0) && t.dim() > 0) ref = &t;
  Shape shape{0};
  if (ref != nullptr) {
    SPLICE_ASSIGN_OR_RETURN(int64_t dim, wrap_dim(op, dim_opt.value_or(0), ref->dim()));
    shape = ref->sizes();
    int64_t total = 0;
    for (const Tensor& t : tensors)
      if (!(t.dim() == 1 && t.size(0) == 0) && t.dim() == ref->dim()) total += t.size(dim);
    shape[dim] = total;
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(dtype, shape));
  SPLICE_ASSIGN_OR_RETURN(auto inputs, devs(op, tensors));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_TRY(cuda::cat(o, inputs, dim_opt.value_or(0), ctx.launch()));
  return Outputs{out};
}

Result<Outputs> stack(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, a.tensor_list(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_CHECK_OR_RETURN(!tensors.empty(), ErrorKind::kBadInput,
                         "{}: stack expects a non-empty TensorList", op);
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, tensors[0].dim() + 1));
  std::vector<backend::PromotionOperand> ops;
  for (const Tensor& t : tensors)
    ops.push_back({t.dtype(), backend::PromotionOperand::Priority::kDimensioned});
  Shape shape = tensors[0].sizes();
  shape.insert(shape.begin() + dim, static_cast<int64_t>(tensors.size()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(backend::result_type(ops), shape));
  SPLICE_ASSIGN_OR_RETURN(auto inputs, devs(op, tensors));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_TRY(cuda::stack(o, inputs, dim, ctx.launch()));
  return Outputs{out};
}

// slice_scatter(self, src, dim=0, start=None, end=None, step=1).
Result<Outputs> slice_scatter(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto start, a.opt_integer(3));
  SPLICE_ASSIGN_OR_RETURN(auto end, a.opt_integer(4));
  SPLICE_ASSIGN_OR_RETURN(int64_t step, a.integer(5));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, write_out(ctx, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, src));
  SPLICE_TRY(cuda::slice_scatter(o, s, v, dim, start, end, step, ctx.launch()));
  return Outputs{out};
}

// select_scatter(self, src, dim, index).
Result<Outputs> select_scatter(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t index, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, write_out(ctx, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, src));
  SPLICE_TRY(cuda::select_scatter(o, s, v, dim, index, ctx.launch()));
  return Outputs{out};
}

Result<std::vector<std::optional<DeviceTensor>>> index_list(
    std::string_view op, const std::vector<std::optional<Tensor>>& indices) {
  std::vector<std::optional<DeviceTensor>> out;
  for (const auto& t : indices) {
    if (!t) {
      out.emplace_back();
      continue;
    }
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(op, *t));
    out.emplace_back(d);
  }
  return out;
}

// index_put(self, indices, values, accumulate=False).
Result<Outputs> index_put(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto indices, a.opt_tensor_list(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor values, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(bool accumulate, a.boolean_or(3, false));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, write_out(ctx, self));
  SPLICE_ASSIGN_OR_RETURN(auto idx, index_list(op, indices));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, values));
  SPLICE_TRY(cuda::index_put(o, s, idx, v, accumulate, ctx.launch(true)));
  return Outputs{out};
}

// index_copy(self, dim, index, source).
Result<Outputs> index_copy(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor source, a.tensor(3));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, write_out(ctx, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, index));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, source));
  SPLICE_TRY(cuda::index_copy(o, s, dim, i, v, ctx.launch(true)));
  return Outputs{out};
}

// index_add(self, dim, index, source, *, alpha=1): a new tensor.
Result<Outputs> index_add(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor source, a.tensor(3));
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(4, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, index));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, source));
  SPLICE_TRY(cuda::index_add(o, s, dim, i, v, alpha, ctx.launch(true)));
  return Outputs{out};
}

// index.Tensor(self, indices).
Result<Outputs> index_tensor(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto indices, a.opt_tensor_list(1));
  SPLICE_ASSIGN_OR_RETURN(auto idx, index_list(op, indices));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  const LaunchContext launch = ctx.launch(true);
  SPLICE_ASSIGN_OR_RETURN(ResolvedIndex resolved,
                          resolve_indices(op, s, idx, IndexPurpose::kRead, launch));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), resolved.result_shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_TRY(cuda::index_tensor(o, s, resolved, launch));
  return Outputs{out};
}

// index_select(self, dim, index).
Result<Outputs> index_select(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  Shape shape = self.sizes();
  if (self.dim() > 0) {
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(op, dim, self.dim()));
    shape[d] = index.numel();
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, index));
  SPLICE_TRY(cuda::index_select(o, s, dim, i, ctx.launch(true)));
  return Outputs{out};
}

// embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False).
Result<Outputs> embedding(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor weight, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor indices, a.tensor(1));
  SPLICE_CHECK_OR_RETURN(weight.dim() == 2, ErrorKind::kShapeMismatch,
                         "{}: 'weight' must be 2-D, got shape {}", op,
                         shape_string(weight.sizes()));
  Shape shape = indices.sizes();
  shape.push_back(weight.size(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(weight.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor w, dev(op, weight));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, indices));
  SPLICE_TRY(cuda::embedding(o, w, i, ctx.launch(true)));
  return Outputs{out};
}

// gather(self, dim, index, *, sparse_grad=False).
Result<Outputs> gather(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), index.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, index));
  SPLICE_TRY(cuda::gather(o, s, dim, i, ctx.launch(true)));
  return Outputs{out};
}

// scatter.src(self, dim, index, src) / scatter.value(self, dim, index, value).
template <bool kSrc>
Result<Outputs> scatter(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  std::optional<DeviceTensor> src;
  Scalar value;
  if constexpr (kSrc) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(3));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(op, t));
    src = d;
  } else {
    SPLICE_ASSIGN_OR_RETURN(value, a.scalar(3));
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, index));
  SPLICE_TRY(cuda::scatter(o, s, dim, i, src ? &*src : nullptr, value, ctx.launch(true)));
  return Outputs{out};
}

// ---- shape-rearranging copies ---------------------------------------------------------------

// flip(self, dims) / roll(self, shifts, dims=[]) / tril, triu(self, diagonal=0).
template <int kKind>  // 0 flip, 1 roll, 2 tril, 3 triu
Result<Outputs> same_shape(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  if constexpr (kKind == 0) {
    SPLICE_ASSIGN_OR_RETURN(auto dims, a.int_list(1));
    SPLICE_TRY(cuda::flip(o, s, dims, ctx.launch()));
  } else if constexpr (kKind == 1) {
    SPLICE_ASSIGN_OR_RETURN(auto shifts, a.int_list(1));
    SPLICE_ASSIGN_OR_RETURN(auto dims, a.opt_int_list(2));
    const std::vector<int64_t> d = dims.value_or(std::vector<int64_t>{});
    SPLICE_TRY(cuda::roll(o, s, shifts, d, ctx.launch()));
  } else {
    SPLICE_ASSIGN_OR_RETURN(int64_t diagonal, a.integer(1));
    SPLICE_TRY(cuda::tril_triu(o, s, diagonal, kKind == 2, ctx.launch()));
  }
  return Outputs{out};
}

// repeat(self, repeats).
Result<Outputs> repeat(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto repeats, a.int_list(1));
  SPLICE_CHECK_OR_RETURN(
      repeats.size() >= static_cast<size_t>(self.dim()), ErrorKind::kShapeMismatch,
      "{}: number of dimensions of repeat dims can not be smaller than number of dimensions of "
      "tensor",
      op);
  Shape shape(repeats.size());
  const size_t lead = repeats.size() - static_cast<size_t>(self.dim());
  for (size_t d = 0; d < repeats.size(); ++d) {
    SPLICE_CHECK_OR_RETURN(repeats[d] >= 0, ErrorKind::kBadInput,
                           "{}: repeats can not be negative, got {}", op, repeats[d]);
    shape[d] = (d < lead ? 1 : self.size(static_cast<int64_t>(d - lead))) * repeats[d];
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_TRY(cuda::repeat(o, s, repeats, ctx.launch()));
  return Outputs{out};
}

// repeat_interleave.self_int(self, repeats, dim=None, *, output_size=None).
Result<Outputs> repeat_interleave_int(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t repeats, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dim, a.opt_integer(2));
  SPLICE_CHECK_OR_RETURN(repeats >= 0, ErrorKind::kBadInput,
                         "{}: repeats can not be negative, got {}", op, repeats);
  Shape shape;
  if (!dim) {
    shape = {self.numel() * repeats};
  } else {
    shape = self.sizes();
    if (self.dim() == 0) shape = {1};
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(op, *dim, static_cast<int64_t>(shape.size())));
    shape[d] *= repeats;
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_TRY(cuda::repeat_interleave(o, s, repeats, dim, ctx.launch()));
  return Outputs{out};
}

// repeat_interleave.Tensor(repeats, *, output_size=None) and .self_Tensor(self, repeats,
// dim=None, *, output_size=None): the output's length is the repeats' sum, read from the GPU.
template <bool kSelf>
Result<Outputs> repeat_interleave_tensor(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  std::optional<Tensor> self;
  size_t at = 0;
  if constexpr (kSelf) {
    SPLICE_ASSIGN_OR_RETURN(Tensor s, a.tensor(0));
    self = s;
    at = 1;
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor repeats, a.tensor(at));
  std::optional<int64_t> dim;
  if constexpr (kSelf) {
    SPLICE_ASSIGN_OR_RETURN(dim, a.opt_integer(2));
  }
  SPLICE_ASSIGN_OR_RETURN(auto output_size, a.opt_integer(kSelf ? 3 : 1));
  std::optional<DeviceTensor> s;
  if (self) {
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(op, *self));
    s = d;
  }
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor r, dev(op, repeats));
  const LaunchContext launch = ctx.launch(true);
  SPLICE_ASSIGN_OR_RETURN(RepeatInterleavePlan plan,
                          plan_repeat_interleave(s ? &*s : nullptr, r, dim, output_size, launch));
  // A negative count was recorded on the device: report it before allocating by its sum.
  SPLICE_TRY(ctx.session().take_device_failure(op));
  SPLICE_ASSIGN_OR_RETURN(Tensor out,
                          ctx.output(self ? self->dtype() : repeats.dtype(), plan.out_shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_TRY(cuda::repeat_interleave_tensor(o, r, plan, launch));
  return Outputs{out};
}

// constant_pad_nd(self, pad, value=0).
Result<Outputs> constant_pad_nd(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto pads, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar_or(2, Scalar(int64_t{0})));
  SPLICE_CHECK_OR_RETURN(pads.size() % 2 == 0 && pads.size() / 2 <= static_cast<size_t>(self.dim()),
                         ErrorKind::kShapeMismatch,
                         "{}: padding length must be even and at most twice the rank {}, got {}",
                         op, self.dim(), pads.size());
  Shape shape = self.sizes();
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const size_t d = shape.size() - 1 - k;
    shape[d] += pads[2 * k] + pads[2 * k + 1];
    SPLICE_CHECK_OR_RETURN(shape[d] >= 0, ErrorKind::kShapeMismatch,
                           "{}: the padded size of dim {} would be {}", op, d, shape[d]);
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_TRY(cuda::pad(op, o, s, pads, PadMode::kConstant, value, ctx.launch()));
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> data_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::cat, cat>(),
      entry<OpId::stack, stack>(),
      entry<OpId::slice_scatter, slice_scatter>(kWritesInPlace),
      entry<OpId::select_scatter, select_scatter>(kWritesInPlace),
      entry<OpId::index_put, index_put>(kWritesInPlace),
      entry<OpId::index_copy, index_copy>(kWritesInPlace),
      entry<OpId::index_add, index_add>(),
      entry<OpId::index_Tensor, index_tensor>(),
      entry<OpId::index_select, index_select>(),
      entry<OpId::embedding, embedding>(),
      entry<OpId::gather, gather>(),
      entry<OpId::scatter_src, scatter<true>>(),
      entry<OpId::scatter_value, scatter<false>>(),
  };
  return kEntries;
}

std::span<const KernelEntry> shape_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::flip, same_shape<0>>(),
      entry<OpId::roll, same_shape<1>>(),
      entry<OpId::tril, same_shape<2>>(),
      entry<OpId::triu, same_shape<3>>(),
      entry<OpId::repeat, repeat>(),
      entry<OpId::repeat_interleave_self_int, repeat_interleave_int>(),
      entry<OpId::repeat_interleave_Tensor, repeat_interleave_tensor<false>>(),
      entry<OpId::repeat_interleave_self_Tensor, repeat_interleave_tensor<true>>(),
      entry<OpId::constant_pad_nd, constant_pad_nd>(),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
