#pragma once
// The vocabulary the pointwise formulas (ir/ops/pointwise/*.h) are written in, for native
// scalars: each formula is a function template over a value type V, and everything it does to
// a V is an operator (+ - * / unary -, the comparisons, && || ! on truth values), a literal
// V(1) or V(0.5) (the number rounded into the compute type, as static_cast does) or one of the
// primitives below. The CPU backend instantiates the formulas with these (float, double, the
// integer types, bool); the CUDA backend with an expression type that prints the same
// operations as CUDA source (backends/cuda/pointwise_expr.h implements this same list, each
// primitive by the CUDA function with the same semantics: std::exp by expf/exp, the
// PyTorch-specific helpers by the generated preamble's sp_* functions).
//
// A primitive is a whole library function (std::exp) or an operation a formula cannot spell
// with operators alone: integer arithmetic that wraps (through uint64), a branchy PyTorch helper
// (div_floor_float), integer division that reports a ZeroDivisionError (device only). A new
// formula should compose the existing ones; a new primitive needs both implementations.

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace splice::ir::pw {

// The native value types: an integer, a float (float32, float64) or bool.
template <class T>
concept Native = std::is_arithmetic_v<T>;
template <class T>
concept NativeFloat = std::floating_point<T>;
template <class T>
concept NativeInt = std::integral<T> && !std::same_as<T, bool>;

// c ? a : b. Both sides are evaluated (they are pure), so a formula may use it where C++
// would branch.
template <Native T>
T select(bool c, T a, T b) {
  return c ? a : b;
}

// Float math, std:: semantics.
#define SPLICE_PW_STD1(name, fn) \
  template <NativeFloat T>       \
  T name(T x) {                  \
    return std::fn(x);           \
  }
SPLICE_PW_STD1(sqrt, sqrt)
SPLICE_PW_STD1(exp, exp)
SPLICE_PW_STD1(exp2, exp2)
SPLICE_PW_STD1(expm1, expm1)
SPLICE_PW_STD1(log, log)
SPLICE_PW_STD1(log2, log2)
SPLICE_PW_STD1(log10, log10)
SPLICE_PW_STD1(log1p, log1p)
SPLICE_PW_STD1(sin, sin)
SPLICE_PW_STD1(cos, cos)
SPLICE_PW_STD1(tan, tan)
SPLICE_PW_STD1(asin, asin)
SPLICE_PW_STD1(acos, acos)
SPLICE_PW_STD1(atan, atan)
SPLICE_PW_STD1(sinh, sinh)
SPLICE_PW_STD1(cosh, cosh)
SPLICE_PW_STD1(tanh, tanh)
SPLICE_PW_STD1(asinh, asinh)
SPLICE_PW_STD1(acosh, acosh)
SPLICE_PW_STD1(atanh, atanh)
SPLICE_PW_STD1(erf, erf)
SPLICE_PW_STD1(erfc, erfc)
SPLICE_PW_STD1(floor, floor)
SPLICE_PW_STD1(ceil, ceil)
SPLICE_PW_STD1(trunc, trunc)
SPLICE_PW_STD1(fabs, fabs)
// Round half to even in the default rounding mode (CUDA: rint).
SPLICE_PW_STD1(round_even, nearbyint)
#undef SPLICE_PW_STD1

template <NativeFloat T>
T fmod(T x, T y) {
  return std::fmod(x, y);
}
template <NativeFloat T>
T pow(T x, T y) {
  return std::pow(x, y);
}
template <NativeFloat T>
T atan2(T x, T y) {
  return std::atan2(x, y);
}
template <NativeFloat T>
T copysign(T x, T y) {
  return std::copysign(x, y);
}
template <NativeFloat T>
bool isnan(T x) {
  return std::isnan(x);
}
template <NativeFloat T>
bool isinf(T x) {
  return std::isinf(x);
}
template <NativeFloat T>
bool isfinite(T x) {
  return std::isfinite(x);
}
// A quiet NaN of x's type.
template <NativeFloat T>
T quiet_nan(T) {
  return std::numeric_limits<T>::quiet_NaN();
}

// PyTorch's div_floor_floating: floor(a / b) computed from fmod so that a == div * b + mod.
template <NativeFloat T>
T div_floor_float(T a, T b) {
  if (b == 0) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
  if (div == 0) return std::copysign(T(0), a / b);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}

// Integer arithmetic that wraps around (two's complement through uint64, as PyTorch's).
template <NativeInt T>
T wrap_add(T x, T y) {
  return static_cast<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
template <NativeInt T>
T wrap_sub(T x, T y) {
  return static_cast<T>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
template <NativeInt T>
T wrap_mul(T x, T y) {
  return static_cast<T>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}
template <NativeInt T>
T wrap_neg(T x) {
  return static_cast<T>(0ull - static_cast<uint64_t>(x));
}
// |x| with wraparound (INT_MIN stays); unsigned x unchanged.
template <NativeInt T>
T wrap_abs(T x) {
  if constexpr (std::is_signed_v<T>) return x < 0 ? wrap_neg(x) : x;
  return x;
}
// x ** y by squaring with wraparound; a negative y gives 1 for x == 1, +-1 for x == -1 and 0
// otherwise (PyTorch's powi).
template <NativeInt T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == static_cast<T>(-1)) return exp % 2 == 0 ? T(1) : static_cast<T>(-1);
      return 0;
    }
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = wrap_mul(result, base);
    exp = static_cast<T>(exp >> 1);
    base = wrap_mul(base, base);
  }
  return result;
}
// Bitwise ops in x's type (C++ would widen to int).
template <NativeInt T>
T bit_and(T x, T y) {
  return static_cast<T>(x & y);
}
template <NativeInt T>
T bit_or(T x, T y) {
  return static_cast<T>(x | y);
}
template <NativeInt T>
T bit_xor(T x, T y) {
  return static_cast<T>(x ^ y);
}
template <NativeInt T>
T bit_not(T x) {
  return static_cast<T>(~x);
}

// Integer division that records a ZeroDivisionError for y == 0 (x / -1 wraps): only the
// CUDA backend's single-op kernels compute these (they have the error word); the CPU's
// kernels check the divisor themselves, so the CPU interpreter never runs them (a formula
// using them declares its integer class kernel_only, see functions.h). These native
// definitions exist so that formulas instantiate; they give 0 for y == 0.
template <NativeInt T>
T checked_div_trunc(T x, T y) {
  if (y == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (y == static_cast<T>(-1)) return wrap_neg(x);
  return static_cast<T>(x / y);
}
template <NativeInt T>
T checked_div_floor(T x, T y) {
  if (y == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (y == static_cast<T>(-1)) return wrap_neg(x);
  T q = static_cast<T>(x / y);
  if (static_cast<T>(x % y) != 0 && ((x < 0) != (y < 0))) q = static_cast<T>(q - 1);
  return q;
}
template <NativeInt T>
T checked_remainder(T x, T y) {
  if (y == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (y == static_cast<T>(-1)) return 0;
  T r = static_cast<T>(x % y);
  if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
  return r;
}
template <NativeInt T>
T checked_fmod(T x, T y) {
  if (y == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (y == static_cast<T>(-1)) return 0;
  return static_cast<T>(x % y);
}

}  // namespace splice::ir::pw
