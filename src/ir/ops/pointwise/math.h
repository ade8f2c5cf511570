#pragma once
// Pointwise functions, float math family: the std:: functions of one float (roots,
// exponentials, logarithms, trigonometry, erf), the roundings and round with decimals. All
// compute in float only (integer inputs are lifted to float by the op's lowering). See
// functions.h for how a function is written.

#include <string_view>

#include "ir/ops/pointwise/compute_class.h"
#include "ir/ops/pointwise/primitives.h"

namespace splice::ir::pw {

#define SPLICE_PW_FLOAT1(Name, text, expr)         \
  struct Name {                                    \
    static constexpr std::string_view name = text; \
    static constexpr int arity = 1;                \
    template <class V>                             \
    static V on_float(V x) {                       \
      return expr;                                 \
    }                                              \
  };
SPLICE_PW_FLOAT1(Sqrt, "sqrt", sqrt(x))
SPLICE_PW_FLOAT1(Rsqrt, "rsqrt", V(1) / sqrt(x))
SPLICE_PW_FLOAT1(Exp, "exp", exp(x))
SPLICE_PW_FLOAT1(Exp2, "exp2", exp2(x))
SPLICE_PW_FLOAT1(Expm1, "expm1", expm1(x))
SPLICE_PW_FLOAT1(Log, "log", log(x))
SPLICE_PW_FLOAT1(Log2, "log2", log2(x))
SPLICE_PW_FLOAT1(Log10, "log10", log10(x))
SPLICE_PW_FLOAT1(Log1p, "log1p", log1p(x))
SPLICE_PW_FLOAT1(Sin, "sin", sin(x))
SPLICE_PW_FLOAT1(Cos, "cos", cos(x))
SPLICE_PW_FLOAT1(Tan, "tan", tan(x))
SPLICE_PW_FLOAT1(Asin, "asin", asin(x))
SPLICE_PW_FLOAT1(Acos, "acos", acos(x))
SPLICE_PW_FLOAT1(Atan, "atan", atan(x))
SPLICE_PW_FLOAT1(Sinh, "sinh", sinh(x))
SPLICE_PW_FLOAT1(Cosh, "cosh", cosh(x))
SPLICE_PW_FLOAT1(Tanh, "tanh", tanh(x))
SPLICE_PW_FLOAT1(Asinh, "asinh", asinh(x))
SPLICE_PW_FLOAT1(Acosh, "acosh", acosh(x))
SPLICE_PW_FLOAT1(Atanh, "atanh", atanh(x))
SPLICE_PW_FLOAT1(Erf, "erf", erf(x))
SPLICE_PW_FLOAT1(Erfc, "erfc", erfc(x))
// Rounding: floor, ceil, round half to even, trunc, frac = x - trunc(x).
SPLICE_PW_FLOAT1(Floor, "floor", floor(x))
SPLICE_PW_FLOAT1(Ceil, "ceil", ceil(x))
SPLICE_PW_FLOAT1(Round, "round", round_even(x))
SPLICE_PW_FLOAT1(Trunc, "trunc", trunc(x))
SPLICE_PW_FLOAT1(Frac, "frac", x - trunc(x))
#undef SPLICE_PW_FLOAT1

// erfinv has no std:: function: only the CUDA backend computes it (erfinvf).
struct Erfinv {
  static constexpr std::string_view name = "erfinv";
  static constexpr int arity = 1;
  static constexpr uint8_t device_only = kComputeFloat;
  template <class V>
  static V on_float(V x) {
    return erfinv(x);
  }
};

// round.decimals with y = 10^decimals: nearbyint(x * y) / y; _negative: decimals < 0 with
// y = 10^-decimals: nearbyint(x / y) * y.
struct RoundScaled {
  static constexpr std::string_view name = "round_scaled";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    return round_even(x * y) / y;
  }
};
struct RoundScaledNegative {
  static constexpr std::string_view name = "round_scaled_negative";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    return round_even(x / y) * y;
  }
};

// logaddexp(x, y) = log(exp(x) + exp(y)) without overflow, as PyTorch's CPU kernel:
// max(x, y) + log1p(exp(-|x - y|)), and x itself where x and y are the same infinity.
struct Logaddexp {
  static constexpr std::string_view name = "logaddexp";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    const V m = select(x < y, y, x);
    return select(isinf(x) && x == y, x, m + log1p(exp(-fabs(x - y))));
  }
};

// The ops defined whole here (functions.h, SPLICE_POINTWISE_OPS).
// clang-format off
#define SPLICE_PW_MATH_OPS(OP)                                                             \
  OP(logaddexp, "aten.logaddexp.default", "(Tensor self, Tensor other) -> Tensor", "", "", \
     kFloatBinary, Logaddexp)
// clang-format on

// clang-format off
#define SPLICE_PW_MATH(X) \
  X(Sqrt) \
  X(Rsqrt) \
  X(Exp) \
  X(Exp2) \
  X(Expm1) \
  X(Log) \
  X(Log2) \
  X(Log10) \
  X(Log1p) \
  X(Sin) \
  X(Cos) \
  X(Tan) \
  X(Asin) \
  X(Acos) \
  X(Atan) \
  X(Sinh) \
  X(Cosh) \
  X(Tanh) \
  X(Asinh) \
  X(Acosh) \
  X(Atanh) \
  X(Erf) \
  X(Erfc) \
  X(Erfinv) \
  X(Floor) \
  X(Ceil) \
  X(Round) \
  X(Trunc) \
  X(Frac) \
  X(RoundScaled) \
  X(RoundScaledNegative) \
  X(Logaddexp)
// clang-format on

}  // namespace splice::ir::pw
