// Tiling ops: repeat (the whole tensor tiled along each dim, leading dims added when repeats
// has more entries than self has dims), repeat_interleave.self_int (each element repeated in
// place along a dim; dim=None flattens first) and repeat_interleave.Tensor (index i repeated
// repeats[i] times; .self_Tensor repeats element i of self repeats[i] times). repeat and
// repeat_interleave.self_int are one strided copy: the source is
// viewed with an extra stride-0 dim next to each tiled dim, the result as the matching split
// of its contiguous dims.
#include "backends/cpu/args.h"
#include "support/checked_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

// repeat(self, SymInt[] repeats).
Result<Outputs> repeat(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape repeats, a.int_list(1));
  const int64_t rank = static_cast<int64_t>(repeats.size());
  KCHECK(rank >= self.dim(), ErrorKind::kShapeMismatch,
         "number of repeat dims ({}) can not be smaller than the tensor's dims ({})", rank,
         self.dim());
  const int64_t lead = rank - self.dim();
  Shape out_shape(rank), src_sizes, src_strides, dst_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    KCHECK(repeats[d] >= 0, ErrorKind::kShapeMismatch, "repeats {} has a negative entry",
           shape_string(repeats));
    const int64_t size = d < lead ? 1 : self.size(d - lead);
    const int64_t stride = d < lead ? 0 : self.stride(d - lead);
    auto n = checked_mul(size, repeats[d]);
    KCHECK(n.has_value(), ErrorKind::kShapeMismatch, "repeating sizes {} by {} overflows",
           shape_string(self.sizes()), shape_string(repeats));
    out_shape[d] = *n;
    // Output dim d is (repeat index, source index): the source ignores the first.
    src_sizes.insert(src_sizes.end(), {repeats[d], size});
    src_strides.insert(src_strides.end(), {0, stride});
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), out_shape));
  if (out.numel() == 0) return Outputs{out};
  const Tensor src = self.view_as(src_sizes, src_strides, self.offset());
  copy_cast_into(out.view_as(src_sizes, contiguous_strides(src_sizes), 0), src);
  return Outputs{out};
}

// repeat_interleave.self_int(self, SymInt repeats, int? dim=None, *, SymInt? output_size=None).
Result<Outputs> repeat_interleave_int(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t repeats, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto output_size, a.opt_integer(3));
  KCHECK(repeats >= 0, ErrorKind::kBadInput, "repeats can not be negative, got {}", repeats);
  Tensor input = self;
  int64_t dim = 0;
  if (!dim_opt) {
    const Tensor flat = contiguous_copy(self);
    input = flat.view_as({flat.numel()}, {1}, 0);
  } else {
    SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, *dim_opt, self.dim()));
    if (self.dim() == 0) {
      // index_select on a 0-d tensor takes one index at most.
      KCHECK(repeats == 1, ErrorKind::kShapeMismatch,
             "a 0-d tensor can only be repeated once along a dim, got repeats={}", repeats);
      return Outputs{contiguous_copy(self)};
    }
  }
  auto n = checked_mul(input.size(dim), repeats);
  KCHECK(n.has_value(), ErrorKind::kShapeMismatch, "repeating size {} by {} overflows",
         input.size(dim), repeats);
  KCHECK(!output_size || *output_size == *n, ErrorKind::kShapeMismatch,
         "output_size {} does not match the required size {}", output_size.value_or(0), *n);
  Shape out_shape = input.sizes();
  out_shape[dim] = *n;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), out_shape));
  if (out.numel() == 0) return Outputs{out};
  // Output dim `dim` is (source index, repeat index): the source ignores the second.
  Shape src_sizes = input.sizes(), src_strides = input.strides();
  src_sizes.insert(src_sizes.begin() + dim + 1, repeats);
  src_strides.insert(src_strides.begin() + dim + 1, 0);
  copy_cast_into(out.view_as(src_sizes, contiguous_strides(src_sizes), 0),
                 input.view_as(src_sizes, src_strides, input.offset()));
  return Outputs{out};
}

// repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None): [0]*r0 + [1]*r1 ...
Result<Outputs> repeat_interleave_tensor(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor repeats, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto output_size, a.opt_integer(1));
  KCHECK(repeats.dim() == 1, ErrorKind::kShapeMismatch,
         "repeat_interleave only accepts a 1-D repeats tensor, got {} dims", repeats.dim());
  KCHECK(repeats.dtype() == DType::kInt64 || repeats.dtype() == DType::kInt32, ErrorKind::kBadInput,
         "repeats has to be an int64 or int32 tensor, got {}", dtype_name(repeats.dtype()));
  const Tensor r = contiguous_copy(to_dtype(repeats, DType::kInt64));
  const int64_t* pr = r.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < r.numel(); ++i) {
    KCHECK(pr[i] >= 0, ErrorKind::kBadInput, "repeats can not be negative, got {} at {}", pr[i], i);
    auto t = checked_add(total, pr[i]);
    KCHECK(t.has_value(), ErrorKind::kShapeMismatch, "the sum of repeats overflows");
    total = *t;
  }
  KCHECK(!output_size || *output_size == total, ErrorKind::kShapeMismatch,
         "output_size {} does not match the required size {}", output_size.value_or(0), total);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, repeats.dtype(), {total}));
  dispatch_dtype(repeats.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    int64_t k = 0;
    for (int64_t i = 0; i < r.numel(); ++i)
      for (int64_t j = 0; j < pr[i]; ++j) po[k++] = static_cast<T>(i);
  });
  return Outputs{out};
}

}  // namespace

// repeat_interleave.self_Tensor(self, Tensor repeats, int? dim=None, *, output_size=None):
// element i of self along dim (of the flattened self when dim is None) repeated repeats[i]
// times; a 0-d or one-element repeats applies to every element, as in PyTorch.
Result<Outputs> repeat_interleave_self_tensor(std::string_view op,
                                              std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor repeats, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto output_size, a.opt_integer(3));
  KCHECK(repeats.dim() <= 1, ErrorKind::kShapeMismatch,
         "repeat_interleave only accepts a 0-D or 1-D repeats tensor, got {} dims", repeats.dim());
  KCHECK(repeats.dtype() == DType::kInt64 || repeats.dtype() == DType::kInt32, ErrorKind::kBadInput,
         "repeats has to be an int64 or int32 tensor, got {}", dtype_name(repeats.dtype()));
  Tensor input = self;
  int64_t dim = 0;
  if (!dim_opt) {
    const Tensor flat = contiguous_copy(self);
    input = flat.view_as({flat.numel()}, {1}, 0);
  } else {
    SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, *dim_opt, self.dim()));
    if (self.dim() == 0) input = self.view_as({1}, {1}, self.offset());
  }
  const int64_t n = input.size(dim);
  const Tensor r = contiguous_copy(to_dtype(repeats, DType::kInt64));
  const bool broadcast = r.numel() == 1;
  KCHECK(broadcast || r.numel() == n, ErrorKind::kShapeMismatch,
         "repeats must have the same size as input along dim {}, but got repeats.size(0) = {} "
         "and input.size({}) = {}",
         dim, r.numel(), dim, n);
  const int64_t* pr = r.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = pr[broadcast ? 0 : i];
    KCHECK(k >= 0, ErrorKind::kBadInput, "repeats can not be negative, got {} at {}", k, i);
    auto t = checked_add(total, k);
    KCHECK(t.has_value(), ErrorKind::kShapeMismatch, "the sum of repeats overflows");
    total = *t;
  }
  KCHECK(!output_size || *output_size == total, ErrorKind::kShapeMismatch,
         "output_size {} does not match the required size {}", output_size.value_or(0), total);
  Shape out_shape = input.sizes();
  out_shape[dim] = total;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), out_shape));
  if (out.numel() == 0) return Outputs{out};
  // Copy slice i of the input into its run of output slices.
  Shape slice_sizes = input.sizes(), in_strides = input.strides(), out_strides = out.strides();
  slice_sizes.erase(slice_sizes.begin() + dim);
  in_strides.erase(in_strides.begin() + dim);
  out_strides.erase(out_strides.begin() + dim);
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor src =
        input.view_as(slice_sizes, in_strides, input.offset() + i * input.stride(dim));
    for (int64_t j = 0; j < pr[broadcast ? 0 : i]; ++j, ++k)
      copy_cast_into(out.view_as(slice_sizes, out_strides, k * out.stride(dim)), src);
  }
  return Outputs{out};
}

std::span<const KernelEntry> repeat_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::repeat, repeat>(),
      entry<OpId::repeat_interleave_self_int, repeat_interleave_int>(),
      entry<OpId::repeat_interleave_Tensor, repeat_interleave_tensor>(),
      entry<OpId::repeat_interleave_self_Tensor, repeat_interleave_self_tensor>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
