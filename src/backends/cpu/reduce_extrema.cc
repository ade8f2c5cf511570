// Order reductions and the cumulative sum: amax/amin over a dim list, max/min over everything,
// max.dim/min.dim (values and int64 indices), argmax/argmin, and cumsum. A NaN is the extreme
// whenever one is present, and max.dim/argmax report the first maximum (the first NaN if any), as
// PyTorch's CPU kernels do. Reducing over an empty dim is an error (there is no identity). cumsum
// accumulates in PyTorch's CPU accumulate type (double for float/double, float for the 16-bit
// floats, int64 for integers) and rounds each prefix to the output dtype, which is int64 for
// integer and bool inputs unless a dtype is given.
#include <cmath>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "backends/cpu/reduce_plan.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

template <typename T>
bool is_nan_value(T v) {
  if constexpr (is_float_v<T>) {
    return std::isnan(to_opmath(v));
  } else {
    return false;
  }
}

// Whether v replaces the running maximum (or minimum) cur: v is NaN, or strictly beyond cur
// (so the first of equal values wins); a NaN cur is never replaced.
template <bool kMax, typename T>
bool replaces(T v, T cur) {
  if (is_nan_value(cur)) return false;
  if (is_nan_value(v)) return true;
  return kMax ? to_opmath(v) > to_opmath(cur) : to_opmath(v) < to_opmath(cur);
}

// amax/amin(self, int[1] dim=[], bool keepdim=False); dim=[] reduces every dim.
// max.default/min.default(self) are the same over every dim.
template <bool kMax>
Result<Outputs> amax_amin(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  std::optional<std::vector<int64_t>> dims;
  if (!a.is_none(1)) {
    SPLICE_ASSIGN_OR_RETURN(dims, a.int_list(1));
  }
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(2, false));
  KCHECK(dims || self.numel() != 0, ErrorKind::kShapeMismatch,
         "expected reduction dim to be specified for an empty input (sizes {})",
         shape_string(self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduce(op, self, dims, keepdim));
  for (int64_t d = 0; d < self.dim(); ++d) {
    KCHECK(!plan.reduced[d] || self.size(d) != 0, ErrorKind::kShapeMismatch,
           "expected reduction dim {} to have non-zero size (sizes {})", d,
           shape_string(self.sizes()));
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), plan.out_shape));
  std::vector<char> seen(static_cast<size_t>(out.numel()), 0);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pin = self.data<T>();
    T* po = out.data<T>();
    for_each_offset<2>(self.sizes(), {self.strides().data(), plan.acc_strides.data()},
                       [&](const std::array<int64_t, 2>& o) {
                         const T v = pin[o[0]];
                         if (!seen[o[1]] || replaces<kMax>(v, po[o[1]])) po[o[1]] = v;
                         seen[o[1]] = 1;
                       });
  });
  return Outputs{out};
}

// The output shape of a reduction over one (wrapped) dim.
Shape reduced_shape(const Tensor& self, int64_t dim, bool keepdim) {
  Shape shape = self.sizes();
  if (shape.empty()) return shape;
  if (keepdim)
    shape[dim] = 1;
  else
    shape.erase(shape.begin() + dim);
  return shape;
}

// Index of the first maximum (minimum when !kMax; the first NaN if any) along one lane.
template <bool kMax = true, typename T>
int64_t lane_argmax(const T* base, int64_t size, int64_t stride) {
  int64_t best = 0;
  for (int64_t i = 1; i < size; ++i) {
    if (is_nan_value(base[best * stride])) break;
    if (replaces<kMax>(base[i * stride], base[best * stride])) best = i;
  }
  return best;
}

// max.dim/min.dim(self, int dim, bool keepdim=False) -> (values, indices).
template <bool kMax>
Result<Outputs> max_dim(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(2, false));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  KCHECK(lane_size(self, dim) != 0, ErrorKind::kShapeMismatch,
         "expected reduction dim {} to have non-zero size (sizes {})", dim,
         shape_string(self.sizes()));
  const Shape shape = reduced_shape(self, dim, keepdim);
  SPLICE_ASSIGN_OR_RETURN(Tensor values, new_tensor(op, self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(Tensor indices, new_tensor(op, DType::kInt64, shape));
  const int64_t size = lane_size(self, dim), stride = lane_stride(self, dim);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pin = self.data<T>();
    for_each_lane(self, dim, [&](int64_t i, int64_t base) {
      const int64_t best = lane_argmax<kMax>(pin + base, size, stride);
      values.data<T>()[i] = pin[base + best * stride];
      indices.data<int64_t>()[i] = best;
    });
  });
  return Outputs{values, indices};
}

// argmax/argmin(self, int? dim=None, bool keepdim=False): dim=None is the index into the
// flattened (row-major) tensor; with keepdim every dim becomes 1.
template <bool kMax>
Result<Outputs> argmax(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(1));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(2, false));
  KCHECK(self.dtype() != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  if (!dim_opt) {
    KCHECK(self.numel() != 0, ErrorKind::kShapeMismatch,
           "expected a reduction dim to be given for an empty input (sizes {})",
           shape_string(self.sizes()));
    const Shape shape = keepdim ? Shape(self.dim(), 1) : Shape{};
    SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kInt64, shape));
    const Tensor flat = contiguous_copy(self);
    dispatch_dtype(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      *out.data<int64_t>() = lane_argmax<kMax>(flat.data<T>(), flat.numel(), 1);
    });
    return Outputs{out};
  }
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, wrap_dim(op, *dim_opt, self.dim()));
  KCHECK(lane_size(self, dim) != 0, ErrorKind::kShapeMismatch,
         "expected reduction dim {} to have non-zero size (sizes {})", dim,
         shape_string(self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out,
                          new_tensor(op, DType::kInt64, reduced_shape(self, dim, keepdim)));
  const int64_t size = lane_size(self, dim), stride = lane_stride(self, dim);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pin = self.data<T>();
    for_each_lane(self, dim, [&](int64_t i, int64_t base) {
      out.data<int64_t>()[i] = lane_argmax<kMax>(pin + base, size, stride);
    });
  });
  return Outputs{out};
}

// at::acc_type<T, /*is_cuda=*/false>: what PyTorch's CPU cumsum adds in.
template <typename T>
using cpu_acc_t = std::conditional_t<
    is_reduced_float_v<T>, float,
    std::conditional_t<std::is_floating_point_v<T>, double,
                       std::conditional_t<std::is_same_v<T, bool>, bool, int64_t>>>;

// cumsum(self, int dim, *, ScalarType? dtype=None).
Result<Outputs> cumsum(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype_arg, a.opt_dtype(2));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const DType dtype = dtype_arg.value_or(is_floating(self.dtype()) ? self.dtype() : DType::kInt64);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, self.sizes()));
  if (out.numel() == 0) return Outputs{out};
  const Tensor in = to_dtype(self, dtype);
  const int64_t size = lane_size(in, dim), in_stride = lane_stride(in, dim);
  const int64_t out_stride = lane_stride(out, dim);
  // out is contiguous with in's sizes, so its lanes are numbered like in's: map lane i to its
  // base offset in out through the lane walker on out itself.
  std::vector<int64_t> out_base(static_cast<size_t>(out.numel() / size));
  for_each_lane(out, dim, [&](int64_t i, int64_t base) { out_base[i] = base; });
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = cpu_acc_t<T>;
    const T* pin = in.data<T>();
    T* po = out.data<T>();
    for_each_lane(in, dim, [&](int64_t i, int64_t base) {
      A acc = A(0);
      for (int64_t j = 0; j < size; ++j) {
        if constexpr (std::is_same_v<A, bool>) {
          acc = acc || pin[base + j * in_stride];
        } else if constexpr (std::is_same_v<A, int64_t>) {
          acc = static_cast<int64_t>(
              static_cast<uint64_t>(acc) +
              static_cast<uint64_t>(static_cast<int64_t>(pin[base + j * in_stride])));
        } else {
          acc += static_cast<A>(to_opmath(pin[base + j * in_stride]));
        }
        po[out_base[i] + j * out_stride] = cast_value<T>(acc);
      }
    });
  });
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> extrema_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::amax, amax_amin<true>>(),  entry<OpId::amin, amax_amin<false>>(),
      entry<OpId::max_dim, max_dim<true>>(), entry<OpId::min_dim, max_dim<false>>(),
      entry<OpId::max, amax_amin<true>>(),   entry<OpId::min, amax_amin<false>>(),
      entry<OpId::argmax, argmax<true>>(),   entry<OpId::argmin, argmax<false>>(),
      entry<OpId::cumsum, cumsum>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
