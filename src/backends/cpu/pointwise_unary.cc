// Unary pointwise ops: neg, abs, relu, float math (sqrt, rsqrt, exp, log, sin, cos, tanh,
// sigmoid, reciprocal, erf, log1p, expm1, log2, sinh, cosh, asin, acos, atan), the float-only
// activations silu and gelu, rounding (floor, ceil, round, round.decimals), bitwise_not and
// logical_not. Float math on integer or bool inputs gives float32 (PyTorch's
// promote-integer-to-float rule) while silu/gelu reject them, as PyTorch's kernels do;
// floor/ceil/round return integer inputs unchanged. 16-bit floats compute in float and round once.
#include <cmath>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "backends/cpu/pointwise_fns.h"
#include "backends/cpu/vec_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

using ir::PointwiseFn;

// The formula of a float function (ir/ops/pointwise/) in the opmath type M.
template <PointwiseFn kFn, typename M>
M apply(M x) {
  return ir::pw::formula<typename ir::pw::struct_of<kFn>::type, ir::kComputeFloat>(x);
}

// The single output of a kernel, moved (an initializer list would copy it).
Outputs single_output(Tensor t) {
  Outputs out;
  out.reserve(1);
  out.push_back(std::move(t));
  return out;
}

// exp, sigmoid, silu and erf (and gelu, below) on float-computed dtypes run the vectorised loops of
// vec_math.h: the same ones a fused pointwise group runs, so a value is the same bits whichever
// route computed it.
using pointwise::FloatArrayFn;
using pointwise::vector_fn;

// out = fn(in) for float32, float16 and bfloat16 (16-bit floats compute in float and round once).
void vector_unary(FloatArrayFn fn, const Tensor& in, const Tensor& out) {
  const auto run = [&](const float* x, float* y) {
    parallel_for(out.numel(), kParallelGrain,
                 [&](int64_t begin, int64_t end) { fn(x + begin, y + begin, end - begin); });
  };
  if (in.dtype() == DType::kFloat32 && same_contiguous(out, in)) {
    run(in.data<float>(), out.data<float>());
    return;
  }
  // A contiguous float copy computed in place, then stored into out's layout and dtype.
  const Tensor tmp = cast_copy(in, DType::kFloat32);
  run(tmp.data<float>(), tmp.data<float>());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>)
      unary_loop<T, float>(out, tmp, [](float x) { return from_opmath<T>(x); });
  });
}

template <PointwiseFn kFn>
Result<Outputs> float_unary(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  // The argument itself, not a copy, when it is a tensor (the common case).
  if (!a.is_tensor(0)) return a.tensor(0).error();
  const Tensor& self = std::get<Tensor>(args[0]);
  // silu has no integer promotion in PyTorch: its kernel is dispatched for floats only.
  KCHECK(kFn != PointwiseFn::kSilu || is_floating(self.dtype()), ErrorKind::kBadInput,
         "not implemented for {} tensors", dtype_name(self.dtype()));
  const DType dtype = is_floating(self.dtype()) ? self.dtype() : DType::kFloat32;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, self.sizes()));
  Tensor converted;
  if (self.dtype() != dtype) converted = to_dtype(self, dtype);
  const Tensor& in = self.dtype() == dtype ? self : converted;
  if constexpr (vector_fn(kFn) != nullptr) {
    if (dtype != DType::kFloat64) {
      vector_unary(vector_fn(kFn), in, out);
      return single_output(std::move(out));
    }
  }
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      unary_loop<T, T>(out, in, [](T x) { return from_opmath<T>(apply<kFn>(to_opmath(x))); });
    }
  });
  return single_output(std::move(out));
}

template <PointwiseFn kFn>
Result<Outputs> same_dtype_unary(std::string_view op, std::span<const KernelArg> args) {
  using F = typename ir::pw::struct_of<kFn>::type;
  Args a(op, args);
  if (!a.is_tensor(0)) return a.tensor(0).error();
  const Tensor& self = std::get<Tensor>(args[0]);
  KCHECK(self.dtype() != DType::kBool || kFn == PointwiseFn::kAbs, ErrorKind::kBadInput,
         "not supported for bool tensors");
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_loop<T, T>(out, self, [](T xs) -> T {
      if constexpr (is_float_v<T>) {
        return from_opmath<T>(ir::pw::formula<F, ir::kComputeFloat>(to_opmath(xs)));
      } else if constexpr (ir::pw::defines<F, ir::pw::class_of<T>()>()) {
        return ir::pw::formula<F, ir::pw::class_of<T>()>(xs);
      } else {
        return xs;  // bool, refused above
      }
    });
  });
  return single_output(std::move(out));
}

// gelu(self, *, approximate='none'): x/2 * (1 + erf(x/sqrt(2))), or the tanh approximation.
Result<Outputs> gelu(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto approximate, a.opt_string(1));
  const std::string mode = approximate.value_or("none");
  KCHECK(mode == "none" || mode == "tanh", ErrorKind::kBadInput,
         "approximate must be 'none' or 'tanh', got '{}'", mode);
  KCHECK(is_floating(self.dtype()), ErrorKind::kBadInput, "not implemented for {} tensors",
         dtype_name(self.dtype()));
  const bool use_tanh = mode == "tanh";
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  if (!use_tanh && self.dtype() != DType::kFloat64) {
    vector_unary(gelu_floats, self, out);
    return Outputs{out};
  }
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      unary_loop<T, T>(out, self, [&](T xs) {
        const auto x = to_opmath(xs);
        return from_opmath<T>(use_tanh ? apply<PointwiseFn::kGeluTanh>(x)
                                       : apply<PointwiseFn::kGelu>(x));
      });
    }
  });
  return Outputs{out};
}

// floor/ceil/round: integers come back unchanged (a copy of the same dtype); bool is rejected
// as in PyTorch; round is half-to-even (nearbyint in the default rounding mode).
template <PointwiseFn kFn>
Result<Outputs> rounding(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  KCHECK(self.dtype() != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  if (!is_floating(self.dtype())) return Outputs{cast_copy(self, self.dtype())};
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      unary_loop<T, T>(out, self, [](T xs) { return from_opmath<T>(apply<kFn>(to_opmath(xs))); });
    }
  });
  return Outputs{out};
}

// round.decimals(self, *, decimals): nearbyint(x * 10^d) / 10^d in the opmath type (for
// d < 0: nearbyint(x / 10^-d) * 10^-d), as PyTorch's CPU kernel; floats only (PyTorch has no
// integer path for this overload, even for decimals=0).
Result<Outputs> round_decimals(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t decimals, a.integer(1));
  KCHECK(is_floating(self.dtype()), ErrorKind::kBadInput, "not implemented for {} tensors",
         dtype_name(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  const bool negative = decimals < 0;
  const double exponent = negative ? -static_cast<double>(decimals) : static_cast<double>(decimals);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using M = opmath_t<T>;
      const M ten_pow = static_cast<M>(std::pow(10.0, exponent));
      unary_loop<T, T>(out, self, [&](T xs) {
        const M x = to_opmath(xs);
        if (decimals == 0) return from_opmath<T>(apply<PointwiseFn::kRound>(x));
        return from_opmath<T>(negative ? ir::pw::RoundScaledNegative::on_float(x, ten_pow)
                                       : ir::pw::RoundScaled::on_float(x, ten_pow));
      });
    }
  });
  return Outputs{out};
}

// bitwise_not: ~x for integers, logical not for bool; floats are rejected.
Result<Outputs> bitwise_not(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  KCHECK(!is_floating(self.dtype()), ErrorKind::kBadInput,
         "bitwise_not is only supported for integer and bool tensors, got {}",
         dtype_name(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      unary_loop<bool, bool>(out, self, [](bool x) { return ir::pw::BitwiseNot::on_bool(x); });
    } else if constexpr (is_int_v<T>) {
      unary_loop<T, T>(out, self, [](T x) { return ir::pw::BitwiseNot::on_int(x); });
    }
  });
  return Outputs{out};
}

Result<Outputs> logical_not(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kBool, self.sizes()));
  const Tensor b = to_dtype(self, DType::kBool);
  unary_loop<bool, bool>(out, b, [](bool x) { return !x; });
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> unary_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::neg, same_dtype_unary<PointwiseFn::kNeg>>(kStoresIntoDestination),
      entry<OpId::abs, same_dtype_unary<PointwiseFn::kAbs>>(kStoresIntoDestination),
      entry<OpId::relu, same_dtype_unary<PointwiseFn::kRelu>>(kStoresIntoDestination),
      entry<OpId::sqrt, float_unary<PointwiseFn::kSqrt>>(kStoresIntoDestination),
      entry<OpId::rsqrt, float_unary<PointwiseFn::kRsqrt>>(kStoresIntoDestination),
      entry<OpId::exp, float_unary<PointwiseFn::kExp>>(kStoresIntoDestination),
      entry<OpId::log, float_unary<PointwiseFn::kLog>>(),
      entry<OpId::sin, float_unary<PointwiseFn::kSin>>(kStoresIntoDestination),
      entry<OpId::cos, float_unary<PointwiseFn::kCos>>(kStoresIntoDestination),
      entry<OpId::tanh, float_unary<PointwiseFn::kTanh>>(kStoresIntoDestination),
      entry<OpId::sigmoid, float_unary<PointwiseFn::kSigmoid>>(kStoresIntoDestination),
      entry<OpId::reciprocal, float_unary<PointwiseFn::kReciprocal>>(kStoresIntoDestination),
      entry<OpId::erf, float_unary<PointwiseFn::kErf>>(),
      entry<OpId::silu, float_unary<PointwiseFn::kSilu>>(kStoresIntoDestination),
      entry<OpId::log1p, float_unary<PointwiseFn::kLog1p>>(),
      entry<OpId::expm1, float_unary<PointwiseFn::kExpm1>>(),
      entry<OpId::log2, float_unary<PointwiseFn::kLog2>>(),
      entry<OpId::sinh, float_unary<PointwiseFn::kSinh>>(),
      entry<OpId::cosh, float_unary<PointwiseFn::kCosh>>(),
      entry<OpId::asin, float_unary<PointwiseFn::kAsin>>(),
      entry<OpId::acos, float_unary<PointwiseFn::kAcos>>(),
      entry<OpId::atan, float_unary<PointwiseFn::kAtan>>(),
      entry<OpId::gelu, gelu>(kStoresIntoDestination),
      entry<OpId::floor, rounding<PointwiseFn::kFloor>>(),
      entry<OpId::ceil, rounding<PointwiseFn::kCeil>>(),
      entry<OpId::round, rounding<PointwiseFn::kRound>>(),
      entry<OpId::round_decimals, round_decimals>(),
      entry<OpId::bitwise_not, bitwise_not>(),
      entry<OpId::logical_not, logical_not>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
