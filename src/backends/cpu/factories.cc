// Factory ops: empty*/zeros*/ones*/full*/new_*/scalar_tensor/arange, and the functional fill
// (a new tensor of self's shape and dtype holding the value, checked like c10's
// checked_convert). Results are new contiguous
// tensors (empty_strided/empty_permuted ignore the requested layout: the values are
// unspecified and every later kernel reads through strides). Layout/device/pin_memory/
// memory_format arguments are ignored. dtype inference follows PyTorch: full() takes the fill
// value's type (bool, int64, or the default float32); arange uses int64 when every bound is
// an int, float32 otherwise.
#include <cmath>
#include <limits>

#include "backends/cpu/args.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

DType scalar_default_dtype(const Scalar& s) {
  if (s.is_bool()) return DType::kBool;
  if (s.is_int()) return DType::kInt64;
  return DType::kFloat32;
}

void fill(const Tensor& t, const Scalar& value) {
  const Tensor v = scalar_to_tensor(value, t.dtype());
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T x = *v.data<T>();
    T* p = t.data<T>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = x;
  });
}

// Shared body: sizes from arg 0 or from a tensor's sizes; dtype from an optional argument.
Result<Outputs> make_filled(std::string_view op, const Shape& sizes, DType dtype,
                            std::optional<Scalar> value) {
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, sizes));
  if (value) fill(out, *value);
  return Outputs{out};
}

// empty.memory_format / zeros / ones / empty_permuted / empty_strided:
// (size, [extra int[]], *, dtype, layout, device, pin_memory, ...)
template <int kFill, int kDTypeArg>
Result<Outputs> sized(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Shape sizes, a.int_list(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(kDTypeArg));
  std::optional<Scalar> value;
  if (kFill >= 0) value = Scalar(static_cast<int64_t>(kFill));
  return make_filled(op, sizes, dtype.value_or(DType::kFloat32), value);
}

// empty_like / zeros_like / ones_like: (self, *, dtype, layout, device, pin_memory, mf)
template <int kFill>
Result<Outputs> like(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  std::optional<Scalar> value;
  if (kFill >= 0) value = Scalar(static_cast<int64_t>(kFill));
  return make_filled(op, self.sizes(), dtype.value_or(self.dtype()), value);
}

Result<Outputs> full(std::string_view op, std::span<const KernelArg> args) {
  // full(size, fill_value, *, dtype, layout, device, pin_memory)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Shape sizes, a.int_list(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  return make_filled(op, sizes, dtype.value_or(scalar_default_dtype(value)), value);
}

Result<Outputs> full_like(std::string_view op, std::span<const KernelArg> args) {
  // full_like(self, fill_value, *, dtype, layout, device, pin_memory, memory_format)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  return make_filled(op, self.sizes(), dtype.value_or(self.dtype()), value);
}

// new_empty / new_zeros / new_ones(self, size, *, dtype, layout, device, pin_memory) and
// new_full(self, size, fill_value, *, dtype, ...): sized factories whose dtype defaults to
// self's (not to the fill value's type).
template <int kFill>
Result<Outputs> new_sized(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape sizes, a.int_list(1));
  std::optional<Scalar> value;
  size_t dtype_at = 2;
  if constexpr (kFill == 2) {
    SPLICE_ASSIGN_OR_RETURN(value, a.scalar(2));
    dtype_at = 3;
  } else if constexpr (kFill >= 0) {
    value = Scalar(static_cast<int64_t>(kFill));
  }
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(dtype_at));
  return make_filled(op, sizes, dtype.value_or(self.dtype()), value);
}

Result<Outputs> scalar_tensor(std::string_view op, std::span<const KernelArg> args) {
  // scalar_tensor(s, *, dtype, layout, device, pin_memory): dtype defaults to float32.
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return make_filled(op, {}, dtype.value_or(DType::kFloat32), value);
}

Result<Outputs> arange_impl(std::string_view op, const Scalar& start, const Scalar& end,
                            const Scalar& step, std::optional<DType> dtype_opt) {
  const bool all_int = !start.is_double() && !end.is_double() && !step.is_double();
  const DType dtype = dtype_opt.value_or(all_int ? DType::kInt64 : DType::kFloat32);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  KCHECK(st != 0, ErrorKind::kBadInput, "step must be nonzero");
  KCHECK(std::isfinite(s) && std::isfinite(e), ErrorKind::kBadInput, "unsupported range: {} -> {}",
         s, e);
  KCHECK((st > 0 && e >= s) || (st < 0 && e <= s), ErrorKind::kBadInput,
         "upper bound and larger bound inconsistent with step sign ({} -> {} step {})", s, e, st);
  int64_t n;
  if (all_int) {
    // Exact integer ceil((end - start) / step), as PyTorch computes it for int64 bounds.
    const __int128 span = static_cast<__int128>(end.to_int()) - start.to_int();
    const __int128 stp = step.to_int();
    const __int128 q = (span + stp - (stp > 0 ? 1 : -1)) / stp;
    KCHECK(q >= 0 && q <= (static_cast<__int128>(1) << 40), ErrorKind::kBadInput,
           "arange of {} elements is too large", static_cast<int64_t>(q));
    n = static_cast<int64_t>(q);
  } else {
    const double size = std::ceil((e - s) / st);
    KCHECK(size >= 0 && size <= 1099511627776.0, ErrorKind::kBadInput,
           "arange of {} elements is too large", size);
    n = static_cast<int64_t>(size);
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, {n}));
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    if constexpr (is_float_v<T>) {
      // PyTorch's CPU arange computes start + i * step in double (its accumulate type).
      for (int64_t i = 0; i < n; ++i) p[i] = cast_value<T>(s + static_cast<double>(i) * st);
    } else {
      if (all_int) {
        for (int64_t i = 0; i < n; ++i) {
          const uint64_t v = static_cast<uint64_t>(start.to_int()) +
                             static_cast<uint64_t>(i) * static_cast<uint64_t>(step.to_int());
          p[i] = cast_value<T>(static_cast<int64_t>(v));
        }
      } else {
        for (int64_t i = 0; i < n; ++i) p[i] = cast_value<T>(s + static_cast<double>(i) * st);
      }
    }
  });
  return Outputs{out};
}

Result<Outputs> arange(std::string_view op, std::span<const KernelArg> args) {
  // arange(end, *, dtype, layout, device, pin_memory)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar end, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return arange_impl(op, Scalar(int64_t{0}), end, Scalar(int64_t{1}), dtype);
}

Result<Outputs> arange_start(std::string_view op, std::span<const KernelArg> args) {
  // arange.start(start, end, *, dtype, layout, device, pin_memory)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar start, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar end, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  return arange_impl(op, start, end, Scalar(int64_t{1}), dtype);
}

Result<Outputs> arange_start_step(std::string_view op, std::span<const KernelArg> args) {
  // arange.start_step(start, end, step=1, *, dtype, layout, device, pin_memory)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar start, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar end, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(Scalar step, a.scalar_or(2, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(3));
  return arange_impl(op, start, end, step, dtype);
}

// Whether c10::checked_convert accepts `value` for `dtype` (Tensor.fill_ raises "value cannot
// be converted to type ... without overflow" otherwise): a float target takes inf/NaN but no
// finite value (float or int) beyond its max (65504 for half); a negative int may wrap into
// uint8 down to -255; bool takes 0 or 1.
bool fill_value_fits(const Scalar& value, DType dtype) {
  if (value.is_bool() || dtype == DType::kFloat64) return true;
  return dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using L = std::numeric_limits<std::conditional_t<is_reduced_float_v<T>, float, T>>;
    double lowest = static_cast<double>(L::lowest()), max = static_cast<double>(L::max());
    if constexpr (std::is_same_v<T, Half>) {
      lowest = -65504.0;
      max = 65504.0;
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      max = 3.3895313892515355e38;
      lowest = -max;
    }
    if (value.is_double()) {
      const double v = value.to_double();
      if (is_float_v<T> && (std::isinf(v) || std::isnan(v))) return true;
      return v >= lowest && v <= max;  // NaN into an integer fails here too
    }
    const int64_t v = value.to_int();
    if constexpr (std::is_same_v<T, int64_t>) return true;
    if constexpr (std::is_same_v<T, uint8_t>) return v >= -255 && v <= 255;
    return static_cast<double>(v) >= lowest && static_cast<double>(v) <= max;
  });
}

// fill.Scalar(self, value) / fill.Tensor(self, value): value (a 0-d tensor is read as its
// Python number, like value.item()) converted to self's dtype, in self's shape.
template <bool kTensorValue>
Result<Outputs> fill_like(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  Scalar value;
  if constexpr (kTensorValue) {
    SPLICE_ASSIGN_OR_RETURN(Tensor v, a.tensor(1));
    KCHECK(v.dim() == 0, ErrorKind::kShapeMismatch,
           "fill only supports a 0-dimension value tensor, got one with {} dimensions", v.dim());
    if (is_floating(v.dtype()))
      value = Scalar(item_as_double(v));
    else if (v.dtype() == DType::kBool)
      value = Scalar(item_as_double(v) != 0.0);
    else
      value = Scalar(*to_dtype(v, DType::kInt64).data<int64_t>());
  } else {
    SPLICE_ASSIGN_OR_RETURN(value, a.scalar(1));
  }
  KCHECK(fill_value_fits(value, self.dtype()), ErrorKind::kOutOfRange,
         "value {} cannot be converted to type {} without overflow", value.to_double(),
         dtype_name(self.dtype()));
  return make_filled(op, self.sizes(), self.dtype(), value);
}

}  // namespace

std::span<const KernelEntry> factory_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::empty_memory_format, sized<-1, 1>>(),
      entry<OpId::empty_permuted, sized<-1, 2>>(),
      entry<OpId::empty_strided, sized<-1, 2>>(),
      entry<OpId::zeros, sized<0, 1>>(),
      entry<OpId::ones, sized<1, 1>>(),
      entry<OpId::full, full>(),
      entry<OpId::empty_like, like<-1>>(),
      entry<OpId::zeros_like, like<0>>(),
      entry<OpId::ones_like, like<1>>(),
      entry<OpId::full_like, full_like>(),
      entry<OpId::new_empty, new_sized<-1>>(),
      entry<OpId::new_zeros, new_sized<0>>(),
      entry<OpId::new_ones, new_sized<1>>(),
      entry<OpId::new_full, new_sized<2>>(),  // 2: the fill value is an argument
      entry<OpId::scalar_tensor, scalar_tensor>(),
      entry<OpId::fill_Scalar, fill_like<false>>(),
      entry<OpId::fill_Tensor, fill_like<true>>(),
      entry<OpId::arange, arange>(),
      entry<OpId::arange_start, arange_start>(),
      entry<OpId::arange_start_step, arange_start_step>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
