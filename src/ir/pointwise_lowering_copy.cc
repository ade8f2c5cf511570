// Lowering of copies, casts and fills to pointwise programs, mirroring the CPU kernels
// (cpu/copy.cc, factories.cc): clone, lift_fresh_copy, contiguous, _to_copy, the
// `to` overloads, type_as and dropout in eval mode are one copy node (a cast when the dtype
// changes, with c10's conversions); copy(self, src) casts src into self's dtype and shape; fill,
// full, zeros, ones, their *_like and new_* forms and scalar_tensor store one constant; arange
// computes start + i * step from the element's index as PyTorch's CPU kernel does (in double for
// floating results or non-integer bounds, in wrapping int64 otherwise). The empty* factories
// need no kernel (their values are unspecified) and are not lowered.
#include <cmath>
#include <limits>

#include "ir/pointwise_lowering_util.h"
#include "tensor/dtype_dispatch.h"

namespace splice::ir::lowering {

namespace {

LoweredPointwise copy_program(int arg, DType from, DType to) {
  Builder build;
  const PointwiseRef x = build.input(arg, from);
  return std::move(build).finish(build.node(PointwiseFn::kCopy, {x}, to));
}

LoweredPointwise fill_program(const Scalar& value, DType dtype) {
  Builder build;
  const PointwiseRef c = build.constant(value, dtype);
  return std::move(build).finish(build.node(PointwiseFn::kCopy, {c}, dtype));
}

// clone / lift_fresh_copy / contiguous (self, ...): a copy in self's dtype.
Result<LoweredPointwise> same_copy(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  return copy_program(0, self.dtype, self.dtype);
}

// A cast of self to the dtype at argument `kDTypeArg` (None: self's dtype).
template <int kDTypeArg, bool kRequired>
Result<LoweredPointwise> cast_to_arg(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(kDTypeArg));
  LCHECK(!kRequired || dtype.has_value(), ErrorKind::kBadInput, "dtype must not be None");
  return copy_program(0, self.dtype, dtype.value_or(self.dtype));
}

// to.other(self, other, ...) / type_as(self, other): other's dtype.
Result<LoweredPointwise> cast_to_other(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(OpArg other, a.tensor(1));
  return copy_program(0, self.dtype, other.dtype);
}

// copy(self, src, non_blocking=False): src broadcast to self's shape, in self's dtype.
Result<LoweredPointwise> copy(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(OpArg src, a.tensor(1));
  return copy_program(1, src.dtype, self.dtype);
}

// dropout(input, p, train): the identity in eval mode (and for p == 0).
Result<LoweredPointwise> dropout(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar p, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(bool train, a.boolean_or(2, false));
  const double pv = p.to_double();
  LCHECK(pv >= 0.0 && pv <= 1.0, ErrorKind::kOutOfRange,
         "dropout probability has to be between 0 and 1, but got {}", pv);
  LCHECK(!train || pv == 0.0, ErrorKind::kUnsupportedOp,
         "dropout in training mode is not supported (p={}); export the model after "
         "model.eval()",
         pv);
  return copy_program(0, input.dtype, input.dtype);
}

// c10::checked_convert's test, as the CPU's fill kernel applies it (cpu/factories.cc).
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
      return v >= lowest && v <= max;
    }
    const int64_t v = value.to_int();
    if constexpr (std::is_same_v<T, int64_t>) return true;
    if constexpr (std::is_same_v<T, uint8_t>) return v >= -255 && v <= 255;
    return static_cast<double>(v) >= lowest && static_cast<double>(v) <= max;
  });
}

// fill.Scalar(self, value): the value in self's dtype, checked like c10's checked_convert.
Result<LoweredPointwise> fill_scalar(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(1));
  LCHECK(fill_value_fits(value, self.dtype), ErrorKind::kOutOfRange,
         "value {} cannot be converted to type {} without overflow", value.to_double(),
         dtype_name(self.dtype));
  return fill_program(value, self.dtype);
}

// fill.Tensor(self, value): a 0-d value tensor (on the device, so the overflow check of the CPU
// kernel, which reads the value, is not made) broadcast into self's shape and dtype.
Result<LoweredPointwise> fill_tensor(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(OpArg value, a.tensor(1));
  LCHECK(value.rank == 0, ErrorKind::kShapeMismatch,
         "fill only supports a 0-dimension value tensor, got one with {} dimensions", value.rank);
  return copy_program(1, value.dtype, self.dtype);
}

DType scalar_default_dtype(const Scalar& s) {
  if (s.is_bool()) return DType::kBool;
  if (s.is_int()) return DType::kInt64;
  return DType::kFloat32;
}

// zeros/ones(size, *, dtype=None, ...): float32 by default.
template <int kValue>
Result<LoweredPointwise> sized_fill(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return fill_program(Scalar(int64_t{kValue}), dtype.value_or(DType::kFloat32));
}

// full(size, fill_value, *, dtype=None, ...): the value's type by default.
Result<LoweredPointwise> full(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  return fill_program(value, dtype.value_or(scalar_default_dtype(value)));
}

// zeros_like/ones_like(self, *, dtype=None, ...): self's dtype by default.
template <int kValue>
Result<LoweredPointwise> like_fill(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return fill_program(Scalar(int64_t{kValue}), dtype.value_or(self.dtype));
}

// full_like(self, fill_value, *, dtype=None, ...).
Result<LoweredPointwise> full_like(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  return fill_program(value, dtype.value_or(self.dtype));
}

// new_zeros/new_ones(self, size, *, dtype=None, ...) and new_full(self, size, fill_value,
// *, dtype=None, ...): self's dtype by default.
template <int kValue>
Result<LoweredPointwise> new_fill(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  Scalar value(int64_t{kValue});
  size_t dtype_at = 2;
  if constexpr (kValue < 0) {
    SPLICE_ASSIGN_OR_RETURN(value, a.scalar(2));
    dtype_at = 3;
  }
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(dtype_at));
  return fill_program(value, dtype.value_or(self.dtype));
}

// scalar_tensor(s, *, dtype=None, ...): float32 by default.
Result<LoweredPointwise> scalar_tensor(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return fill_program(value, dtype.value_or(DType::kFloat32));
}

Result<LoweredPointwise> arange_program(std::string_view op, const Scalar& start, const Scalar& end,
                                        const Scalar& step, std::optional<DType> dtype_opt) {
  SPLICE_TRY(arange_length(op, start, end, step));
  const bool all_int = !start.is_double() && !end.is_double() && !step.is_double();
  const DType dtype = dtype_opt.value_or(all_int ? DType::kInt64 : DType::kFloat32);
  Builder build;
  PointwiseRef value;
  if (is_floating(dtype) || !all_int) {
    // start + (double)i * step in double (PyTorch's CPU accumulate type), then converted.
    const PointwiseRef i =
        build.node(PointwiseFn::kCopy, {PointwiseRef::linear_index()}, DType::kFloat64);
    const PointwiseRef scaled =
        build.node(PointwiseFn::kMul,
                   {i, build.constant(Scalar(step.to_double()), DType::kFloat64)}, DType::kFloat64);
    value = build.node(PointwiseFn::kAdd,
                       {build.constant(Scalar(start.to_double()), DType::kFloat64), scaled},
                       DType::kFloat64);
  } else {
    // start + i * step in wrapping int64.
    const PointwiseRef scaled = build.node(
        PointwiseFn::kMul,
        {PointwiseRef::linear_index(), build.constant(Scalar(step.to_int()), DType::kInt64)},
        DType::kInt64);
    value =
        build.node(PointwiseFn::kAdd,
                   {build.constant(Scalar(start.to_int()), DType::kInt64), scaled}, DType::kInt64);
  }
  return std::move(build).finish(build.node(PointwiseFn::kCopy, {value}, dtype));
}

// arange(end, *, dtype=None, ...), arange.start(start, end, *, dtype=None, ...),
// arange.start_step(start, end, step=1, *, dtype=None, ...).
template <int kForm>
Result<LoweredPointwise> arange(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  Scalar start(int64_t{0}), end, step(int64_t{1});
  size_t dtype_at = 1;
  if constexpr (kForm == 0) {
    SPLICE_ASSIGN_OR_RETURN(end, a.scalar(0));
  } else {
    SPLICE_ASSIGN_OR_RETURN(start, a.scalar(0));
    SPLICE_ASSIGN_OR_RETURN(end, a.scalar(1));
    dtype_at = 2;
    if constexpr (kForm == 2) {
      SPLICE_ASSIGN_OR_RETURN(step, a.scalar_or(2, Scalar(int64_t{1})));
      dtype_at = 3;
    }
  }
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(dtype_at));
  return arange_program(op, start, end, step, dtype);
}

}  // namespace

std::span<const LoweringEntry> copy_lowerings() {
  static const LoweringEntry kEntries[] = {
      {"aten.clone.default", same_copy},
      {"aten.lift_fresh_copy.default", same_copy},
      {"aten.contiguous.default", same_copy},
      {"aten._to_copy.default", cast_to_arg<1, false>},
      {"aten.to.dtype", cast_to_arg<1, true>},
      {"aten.to.dtype_layout", cast_to_arg<1, false>},
      {"aten.to.device", cast_to_arg<2, true>},
      {"aten.to.other", cast_to_other},
      {"aten.type_as.default", cast_to_other},
      {"aten.copy.default", copy},
      {"aten.dropout.default", dropout},
      {"aten.fill.Scalar", fill_scalar},
      {"aten.fill.Tensor", fill_tensor},
      {"aten.zeros.default", sized_fill<0>},
      {"aten.ones.default", sized_fill<1>},
      {"aten.full.default", full},
      {"aten.zeros_like.default", like_fill<0>},
      {"aten.ones_like.default", like_fill<1>},
      {"aten.full_like.default", full_like},
      {"aten.new_zeros.default", new_fill<0>},
      {"aten.new_ones.default", new_fill<1>},
      {"aten.new_full.default", new_fill<-1>},
      {"aten.scalar_tensor.default", scalar_tensor},
      {"aten.arange.default", arange<0>},
      {"aten.arange.start", arange<1>},
      {"aten.arange.start_step", arange<2>},
  };
  return kEntries;
}

}  // namespace splice::ir::lowering
