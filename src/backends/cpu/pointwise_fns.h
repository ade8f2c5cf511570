#pragma once
// The scalar functions of ir::PointwiseFn over arrays of the compute type, for the program
// interpreter (pointwise_program.cc). Each formula is the CPU kernel's, operation for
// operation (the same order of float operations, the same std:: math functions, integer
// arithmetic wrapping through uint64), so an interpreted node rounds exactly as the op's
// kernel does; the CUDA code generator (backends/cuda/pointwise_expressions.cc) mirrors the
// same kernels.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cpu/vec_math.h"
#include "ir/pointwise.h"

namespace splice::cpu::pointwise {

using ir::PointwiseFn;

// Elements of one tile: the most a function runs over at once.
inline constexpr int64_t kTileElements = 256;
// Functions run over `count` elements, a multiple of this: whole chunks, each a loop of
// constant trip count that the compiler vectorizes even at -O2 (GCC's cheap cost model
// vectorizes no loop that needs a remainder). A short tile (a [2, 8, 1] RMSNorm scale has 16
// elements) computes one chunk, not a whole tile; the interpreter ignores what lies past its
// element count.
inline constexpr int64_t kChunkElements = 32;
static_assert(kTileElements % kChunkElements == 0);

// The count a function runs over for n elements: n rounded up to whole chunks.
constexpr int64_t chunked_count(int64_t n) {
  return (n + kChunkElements - 1) / kChunkElements * kChunkElements;
}

template <typename T>
T wrap_neg(T x) {
  return static_cast<T>(0ull - static_cast<uint64_t>(x));
}

template <typename T>
T ipow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == static_cast<T>(-1)) return exp % 2 == 0 ? T(1) : static_cast<T>(-1);
      return 0;
    }
  }
  T result = 1;
  while (exp) {
    if (exp & 1)
      result = static_cast<T>(static_cast<uint64_t>(result) * static_cast<uint64_t>(base));
    exp = static_cast<T>(exp >> 1);
    base = static_cast<T>(static_cast<uint64_t>(base) * static_cast<uint64_t>(base));
  }
  return result;
}

// PyTorch's div_floor_floating.
template <typename T>
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

template <typename T>
T remainder_float(T x, T y) {
  T r = std::fmod(x, y);
  if (r != T(0) && ((y < T(0)) != (r < T(0)))) r += y;
  return r;
}

template <typename T>
T clamp_plain(T x, T lo, T hi) {
  const T r = x < lo ? lo : x;
  return hi < r ? hi : r;
}

// std::max / std::min (a NaN first argument stays).
template <typename T>
T std_max(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
T std_min(T a, T b) {
  return b < a ? b : a;
}

// Applies a function whose result is the compute type T over `count` elements (chunked_count):
// out[i] = fn(x[i], y[i], z[i], w[i]);
// `out` is never an operand (so the loops vectorize).
// Returns false for a function (or class) it does not implement.
template <typename T>
bool apply(PointwiseFn fn, int64_t count, const T* x, const T* y, const T* z, const T* w,
           T* __restrict out) {
#define SPLICE_PW(expr)                                                 \
  do {                                                                  \
    for (int64_t c = 0; c < count; c += kChunkElements)                 \
      for (int64_t i = c; i < c + kChunkElements; ++i) out[i] = (expr); \
    return true;                                                        \
  } while (0)
  using U = uint64_t;
  if constexpr (std::is_same_v<T, bool>) {
    switch (fn) {
      case PointwiseFn::kCopy:
      case PointwiseFn::kAbs:
      case PointwiseFn::kSign:
        SPLICE_PW(x[i]);
      case PointwiseFn::kAdd:
      case PointwiseFn::kBitwiseOr:
      case PointwiseFn::kMaximum:
        SPLICE_PW(x[i] || y[i]);
      case PointwiseFn::kAddScaled:
        SPLICE_PW(x[i] || (z[i] && y[i]));
      case PointwiseFn::kMul:
      case PointwiseFn::kBitwiseAnd:
      case PointwiseFn::kMinimum:
        SPLICE_PW(x[i] && y[i]);
      case PointwiseFn::kBitwiseXor:
        SPLICE_PW(x[i] != y[i]);
      case PointwiseFn::kBitwiseNot:
        SPLICE_PW(!x[i]);
      case PointwiseFn::kWhere:
        SPLICE_PW(x[i] ? y[i] : z[i]);
      default:
        return false;
    }
  } else if constexpr (std::is_integral_v<T>) {
    switch (fn) {
      case PointwiseFn::kCopy:
        SPLICE_PW(x[i]);
      case PointwiseFn::kAdd:
        SPLICE_PW(static_cast<T>(static_cast<U>(x[i]) + static_cast<U>(y[i])));
      case PointwiseFn::kAddScaled:
        SPLICE_PW(
            static_cast<T>(static_cast<U>(x[i]) + static_cast<U>(z[i]) * static_cast<U>(y[i])));
      case PointwiseFn::kSub:
        SPLICE_PW(static_cast<T>(static_cast<U>(x[i]) - static_cast<U>(y[i])));
      case PointwiseFn::kMul:
        SPLICE_PW(static_cast<T>(static_cast<U>(x[i]) * static_cast<U>(y[i])));
      case PointwiseFn::kPow:
        SPLICE_PW(ipow<T>(x[i], y[i]));
      case PointwiseFn::kBitwiseAnd:
        SPLICE_PW(static_cast<T>(x[i] & y[i]));
      case PointwiseFn::kBitwiseOr:
        SPLICE_PW(static_cast<T>(x[i] | y[i]));
      case PointwiseFn::kBitwiseXor:
        SPLICE_PW(static_cast<T>(x[i] ^ y[i]));
      case PointwiseFn::kBitwiseNot:
        SPLICE_PW(static_cast<T>(~x[i]));
      case PointwiseFn::kMinimum:
      case PointwiseFn::kClampMax:
        SPLICE_PW(y[i] < x[i] ? y[i] : x[i]);
      case PointwiseFn::kMaximum:
      case PointwiseFn::kClampMin:
        SPLICE_PW(x[i] < y[i] ? y[i] : x[i]);
      case PointwiseFn::kClamp:
      case PointwiseFn::kHardtanh:
        SPLICE_PW(clamp_plain<T>(x[i], y[i], z[i]));
      case PointwiseFn::kNeg:
        SPLICE_PW(wrap_neg<T>(x[i]));
      case PointwiseFn::kAbs:
        if constexpr (std::is_signed_v<T>) SPLICE_PW(x[i] < 0 ? wrap_neg<T>(x[i]) : x[i]);
        SPLICE_PW(x[i]);
      case PointwiseFn::kSign:
        SPLICE_PW(static_cast<T>((T(0) < x[i]) - (x[i] < T(0))));
      case PointwiseFn::kRelu:
        SPLICE_PW(x[i] > T(0) ? x[i] : T(0));
      case PointwiseFn::kSquare:
        SPLICE_PW(static_cast<T>(static_cast<U>(x[i]) * static_cast<U>(x[i])));
      case PointwiseFn::kAddcmul:
        SPLICE_PW(
            static_cast<T>(static_cast<U>(x[i]) +
                           static_cast<U>(w[i]) * static_cast<U>(y[i]) * static_cast<U>(z[i])));
      default:
        return false;
    }
  } else {
    if constexpr (std::is_same_v<T, float>) {
      // The functions built on exp or erf take the vectorised loops (vec_math.h): libm's are
      // scalar.
      switch (fn) {
        case PointwiseFn::kExp:
          exp_floats(x, out, count);
          return true;
        case PointwiseFn::kSigmoid:
          sigmoid_floats(x, out, count);
          return true;
        case PointwiseFn::kSilu:
          silu_floats(x, out, count);
          return true;
        case PointwiseFn::kErf:
          erf_floats(x, out, count);
          return true;
        case PointwiseFn::kGelu:
          gelu_floats(x, out, count);
          return true;
        default:
          break;
      }
    }
    const T kNaN = std::numeric_limits<T>::quiet_NaN();
    const T sqrt1_2 = static_cast<T>(M_SQRT1_2);
    const T gelu_beta = static_cast<T>(M_SQRT2 * M_2_SQRTPI * 0.5);
    const T gelu_kappa = static_cast<T>(0.044715);
    switch (fn) {
      case PointwiseFn::kCopy:
        SPLICE_PW(x[i]);
      case PointwiseFn::kAdd:
        SPLICE_PW(x[i] + y[i]);
      case PointwiseFn::kAddScaled:
        SPLICE_PW(x[i] + z[i] * y[i]);
      case PointwiseFn::kSub:
        SPLICE_PW(x[i] - y[i]);
      case PointwiseFn::kMul:
        SPLICE_PW(x[i] * y[i]);
      case PointwiseFn::kDiv:
        SPLICE_PW(x[i] / y[i]);
      case PointwiseFn::kDivTrunc:
        SPLICE_PW(std::trunc(x[i] / y[i]));
      case PointwiseFn::kDivFloor:
        SPLICE_PW(div_floor_float<T>(x[i], y[i]));
      case PointwiseFn::kRemainder:
        SPLICE_PW(remainder_float<T>(x[i], y[i]));
      case PointwiseFn::kFmod:
        SPLICE_PW(std::fmod(x[i], y[i]));
      case PointwiseFn::kPow:
        SPLICE_PW(std::pow(x[i], y[i]));
      case PointwiseFn::kAtan2:
        SPLICE_PW(std::atan2(x[i], y[i]));
      case PointwiseFn::kMinimum:
        SPLICE_PW(std::isnan(x[i]) || std::isnan(y[i]) ? kNaN : (y[i] < x[i] ? y[i] : x[i]));
      case PointwiseFn::kMaximum:
        SPLICE_PW(std::isnan(x[i]) || std::isnan(y[i]) ? kNaN : (x[i] < y[i] ? y[i] : x[i]));
      case PointwiseFn::kClamp:
        SPLICE_PW(std::isnan(y[i]) || std::isnan(z[i]) ? kNaN : clamp_plain<T>(x[i], y[i], z[i]));
      case PointwiseFn::kClampMin:
        SPLICE_PW(x[i] < y[i] ? y[i] : x[i]);
      case PointwiseFn::kClampMax:
        SPLICE_PW(y[i] < x[i] ? y[i] : x[i]);
      case PointwiseFn::kHardtanh:
        SPLICE_PW(clamp_plain<T>(x[i], y[i], z[i]));
      case PointwiseFn::kNeg:
        SPLICE_PW(-x[i]);
      case PointwiseFn::kAbs:
        SPLICE_PW(std::fabs(x[i]));
      case PointwiseFn::kSign:
        SPLICE_PW(static_cast<T>((T(0) < x[i]) - (x[i] < T(0))));
      case PointwiseFn::kSqrt:
        SPLICE_PW(std::sqrt(x[i]));
      case PointwiseFn::kRsqrt:
        SPLICE_PW(T(1) / std::sqrt(x[i]));
      case PointwiseFn::kExp:
        SPLICE_PW(std::exp(x[i]));
      case PointwiseFn::kExp2:
        SPLICE_PW(std::exp2(x[i]));
      case PointwiseFn::kExpm1:
        SPLICE_PW(std::expm1(x[i]));
      case PointwiseFn::kLog:
        SPLICE_PW(std::log(x[i]));
      case PointwiseFn::kLog2:
        SPLICE_PW(std::log2(x[i]));
      case PointwiseFn::kLog10:
        SPLICE_PW(std::log10(x[i]));
      case PointwiseFn::kLog1p:
        SPLICE_PW(std::log1p(x[i]));
      case PointwiseFn::kSin:
        SPLICE_PW(std::sin(x[i]));
      case PointwiseFn::kCos:
        SPLICE_PW(std::cos(x[i]));
      case PointwiseFn::kTan:
        SPLICE_PW(std::tan(x[i]));
      case PointwiseFn::kAsin:
        SPLICE_PW(std::asin(x[i]));
      case PointwiseFn::kAcos:
        SPLICE_PW(std::acos(x[i]));
      case PointwiseFn::kAtan:
        SPLICE_PW(std::atan(x[i]));
      case PointwiseFn::kSinh:
        SPLICE_PW(std::sinh(x[i]));
      case PointwiseFn::kCosh:
        SPLICE_PW(std::cosh(x[i]));
      case PointwiseFn::kTanh:
        SPLICE_PW(std::tanh(x[i]));
      case PointwiseFn::kAsinh:
        SPLICE_PW(std::asinh(x[i]));
      case PointwiseFn::kAcosh:
        SPLICE_PW(std::acosh(x[i]));
      case PointwiseFn::kAtanh:
        SPLICE_PW(std::atanh(x[i]));
      case PointwiseFn::kErf:
        SPLICE_PW(std::erf(x[i]));
      case PointwiseFn::kErfc:
        SPLICE_PW(std::erfc(x[i]));
      case PointwiseFn::kSigmoid:
        SPLICE_PW(T(1) / (T(1) + std::exp(-x[i])));
      case PointwiseFn::kLogit:
        for (int64_t i = 0; i < count; ++i) {
          T v = x[i];
          if (y[i] >= T(0)) {
            const T lo = y[i], hi = T(1) - y[i];
            v = v < lo ? lo : (v > hi ? hi : v);
          }
          out[i] = std::log(v / (T(1) - v));
        }
        return true;
      case PointwiseFn::kSilu:
        SPLICE_PW(x[i] / (T(1) + std::exp(-x[i])));
      case PointwiseFn::kGelu:
        SPLICE_PW(x[i] * T(0.5) * (T(1) + std::erf(x[i] * sqrt1_2)));
      case PointwiseFn::kGeluTanh:
        SPLICE_PW(T(0.5) * x[i] *
                  (T(1) + std::tanh(gelu_beta * (x[i] + gelu_kappa * (x[i] * x[i] * x[i])))));
      case PointwiseFn::kMish:
        SPLICE_PW(x[i] * std::tanh(std::log1p(std::exp(x[i]))));
      case PointwiseFn::kReciprocal:
        SPLICE_PW(T(1) / x[i]);
      case PointwiseFn::kHardsigmoid:
        SPLICE_PW(std_min<T>(std_max<T>(x[i] + T(3), T(0)), T(6)) / T(6));
      case PointwiseFn::kHardswish:
        SPLICE_PW(x[i] * std_min<T>(std_max<T>(x[i] + T(3), T(0)), T(6)) / T(6));
      case PointwiseFn::kRelu:
        SPLICE_PW((x[i] > T(0) || x[i] != x[i]) ? x[i] : T(0));
      case PointwiseFn::kLeakyRelu:
        SPLICE_PW(x[i] > T(0) ? x[i] : x[i] * y[i]);
      case PointwiseFn::kElu:
        SPLICE_PW(x[i] <= T(0) ? std::expm1(x[i] * w[i]) * (y[i] * z[i]) : x[i] * z[i]);
      case PointwiseFn::kSoftplus:
        SPLICE_PW(x[i] * y[i] > z[i] ? x[i] : std::log1p(std::exp(x[i] * y[i])) / y[i]);
      case PointwiseFn::kSquare:
        SPLICE_PW(x[i] * x[i]);
      case PointwiseFn::kFloor:
        SPLICE_PW(std::floor(x[i]));
      case PointwiseFn::kCeil:
        SPLICE_PW(std::ceil(x[i]));
      case PointwiseFn::kRound:
        SPLICE_PW(std::nearbyint(x[i]));
      case PointwiseFn::kTrunc:
        SPLICE_PW(std::trunc(x[i]));
      case PointwiseFn::kFrac:
        SPLICE_PW(x[i] - std::trunc(x[i]));
      case PointwiseFn::kRoundScaled:
        SPLICE_PW(std::nearbyint(x[i] * y[i]) / y[i]);
      case PointwiseFn::kRoundScaledNegative:
        SPLICE_PW(std::nearbyint(x[i] / y[i]) * y[i]);
      case PointwiseFn::kNanToNum:
        SPLICE_PW(std::isnan(x[i]) ? y[i]
                                   : (std::isinf(x[i]) ? (x[i] > T(0) ? z[i] : w[i]) : x[i]));
      case PointwiseFn::kLerp:
        SPLICE_PW(std::fabs(z[i]) < T(0.5) ? x[i] + z[i] * (y[i] - x[i])
                                           : y[i] - (y[i] - x[i]) * (T(1) - z[i]));
      case PointwiseFn::kAddcmul:
        SPLICE_PW(x[i] + w[i] * y[i] * z[i]);
      case PointwiseFn::kAddcdiv:
        SPLICE_PW(x[i] + w[i] * y[i] / z[i]);
      case PointwiseFn::kWhere:
        return false;  // where's condition is bool: apply_where
      default:
        return false;
    }
  }
#undef SPLICE_PW
}

// where(cond, y, z) in the compute type T.
template <typename T>
void apply_where(int64_t count, const bool* c, const T* y, const T* z, T* __restrict out) {
  for (int64_t k = 0; k < count; k += kChunkElements)
    for (int64_t i = k; i < k + kChunkElements; ++i) out[i] = c[i] ? y[i] : z[i];
}

// A function whose result is bool (comparisons, logical ops, classification), computed in T.
template <typename T>
bool apply_predicate(PointwiseFn fn, int64_t count, const T* x, const T* y, bool* __restrict out) {
#define SPLICE_PW(expr)                                                 \
  do {                                                                  \
    for (int64_t c = 0; c < count; c += kChunkElements)                 \
      for (int64_t i = c; i < c + kChunkElements; ++i) out[i] = (expr); \
    return true;                                                        \
  } while (0)
  switch (fn) {
    case PointwiseFn::kEq:
      SPLICE_PW(x[i] == y[i]);
    case PointwiseFn::kNe:
      SPLICE_PW(x[i] != y[i]);
    case PointwiseFn::kLt:
      SPLICE_PW(x[i] < y[i]);
    case PointwiseFn::kLe:
      SPLICE_PW(x[i] <= y[i]);
    case PointwiseFn::kGt:
      SPLICE_PW(x[i] > y[i]);
    case PointwiseFn::kGe:
      SPLICE_PW(x[i] >= y[i]);
    default:
      break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    switch (fn) {
      case PointwiseFn::kLogicalAnd:
        SPLICE_PW(x[i] && y[i]);
      case PointwiseFn::kLogicalOr:
        SPLICE_PW(x[i] || y[i]);
      case PointwiseFn::kLogicalXor:
        SPLICE_PW(x[i] != y[i]);
      case PointwiseFn::kLogicalNot:
        SPLICE_PW(!x[i]);
      default:
        break;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (fn) {
      case PointwiseFn::kIsNan:
        SPLICE_PW(std::isnan(x[i]));
      case PointwiseFn::kIsInf:
        SPLICE_PW(std::isinf(x[i]));
      case PointwiseFn::kIsFinite:
        SPLICE_PW(std::isfinite(x[i]));
      default:
        break;
    }
  } else {
    switch (fn) {
      case PointwiseFn::kIsNan:
      case PointwiseFn::kIsInf:
        SPLICE_PW(false);
      case PointwiseFn::kIsFinite:
        SPLICE_PW(true);
      default:
        break;
    }
  }
  return false;
#undef SPLICE_PW
}

}  // namespace splice::cpu::pointwise
