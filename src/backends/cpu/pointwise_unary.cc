// Unary pointwise ops: neg, abs, relu, float math (sqrt, rsqrt, exp, log, sin, cos, tanh,
// sigmoid) and logical_not. Float math on integer or bool inputs gives float32 (PyTorch's
// promote-integer-to-float rule); 16-bit floats compute in float and round once.
#include <cmath>

#include "backends/cpu/args.h"
#include "backends/cpu/cast.h"
#include "backends/cpu/dispatch.h"
#include "backends/cpu/iter.h"

namespace splice::cpu {

namespace {

enum class FloatFn { kSqrt, kRsqrt, kExp, kLog, kSin, kCos, kTanh, kSigmoid };

template <typename M>
M apply(FloatFn fn, M x) {
  switch (fn) {
    case FloatFn::kSqrt:
      return std::sqrt(x);
    case FloatFn::kRsqrt:
      return M(1) / std::sqrt(x);
    case FloatFn::kExp:
      return std::exp(x);
    case FloatFn::kLog:
      return std::log(x);
    case FloatFn::kSin:
      return std::sin(x);
    case FloatFn::kCos:
      return std::cos(x);
    case FloatFn::kTanh:
      return std::tanh(x);
    case FloatFn::kSigmoid:
      return M(1) / (M(1) + std::exp(-x));
  }
  return x;
}

template <FloatFn kFn>
Result<Outputs> float_unary(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  const DType dtype = is_floating(self.dtype()) ? self.dtype() : DType::kFloat32;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, self.sizes()));
  const Tensor in = to_dtype(self, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      unary_loop<T, T>(out, in, [](T x) { return from_opmath<T>(apply(kFn, to_opmath(x))); });
    }
  });
  return Outputs{out};
}

enum class SameFn { kNeg, kAbs, kRelu };

template <SameFn kFn>
Result<Outputs> same_dtype_unary(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  KCHECK(self.dtype() != DType::kBool || kFn == SameFn::kAbs, ErrorKind::kBadInput,
         "not supported for bool tensors");
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_loop<T, T>(out, self, [](T xs) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return xs;
      } else if constexpr (is_int_v<T>) {
        // Wraparound negation (INT_MIN stays INT_MIN, as in PyTorch).
        const T neg = static_cast<T>(0 - static_cast<uint64_t>(xs));
        switch (kFn) {
          case SameFn::kNeg:
            return neg;
          case SameFn::kAbs:
            if constexpr (std::is_signed_v<T>) return xs < 0 ? neg : xs;
            return xs;
          case SameFn::kRelu:
            return xs > 0 ? xs : T(0);
        }
        return xs;
      } else {
        const auto x = to_opmath(xs);
        using M = decltype(x);
        switch (kFn) {
          case SameFn::kNeg:
            return from_opmath<T>(-x);
          case SameFn::kAbs:
            return from_opmath<T>(std::abs(x));
          case SameFn::kRelu:
            return from_opmath<T>(x > M(0) || x != x ? x : M(0));
        }
        return xs;
      }
    });
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
      entry<"aten.neg.default", same_dtype_unary<SameFn::kNeg>>(),
      entry<"aten.abs.default", same_dtype_unary<SameFn::kAbs>>(),
      entry<"aten.relu.default", same_dtype_unary<SameFn::kRelu>>(),
      entry<"aten.sqrt.default", float_unary<FloatFn::kSqrt>>(),
      entry<"aten.rsqrt.default", float_unary<FloatFn::kRsqrt>>(),
      entry<"aten.exp.default", float_unary<FloatFn::kExp>>(),
      entry<"aten.log.default", float_unary<FloatFn::kLog>>(),
      entry<"aten.sin.default", float_unary<FloatFn::kSin>>(),
      entry<"aten.cos.default", float_unary<FloatFn::kCos>>(),
      entry<"aten.tanh.default", float_unary<FloatFn::kTanh>>(),
      entry<"aten.sigmoid.default", float_unary<FloatFn::kSigmoid>>(),
      entry<"aten.logical_not.default", logical_not>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
