// The generated code's building blocks: the preamble (16-bit float conversions through PTX,
// c10's float→int truncation with the x86 result for NaN and out-of-range values as the CPU
// backend gives, the error-word helpers, integer division with PyTorch's checks, Python's
// remainder, PyTorch's div_floor and powi), one expression per function and compute class, and
// dtype conversion expressions. Each expression mirrors the CPU backend's kernel for the op
// (same operation order, so float results agree to the last bit wherever the math functions
// themselves do; --fmad=false keeps a*b+c from contracting).
#include "backends/cuda/pointwise_expressions.h"

#include <fmt/format.h>

#include <cmath>

#include "backends/cuda/error_word.h"
#include "backends/cuda/pointwise_codegen.h"

namespace splice::cuda {

namespace {

using ir::PointwiseFn;

const char* const kPreamble = R"PREAMBLE(
typedef long long sp_i64;
typedef unsigned long long sp_u64;
struct sp_half { unsigned short x; };
struct sp_bf16 { unsigned short x; };
template <typename T> struct __align__(4 * sizeof(T)) sp_vec4 { T v[4]; };

__device__ __forceinline__ float sp_h2f(sp_half h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x));
  return f;
}
__device__ __forceinline__ sp_half sp_f2h(float f) {
  sp_half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f));
  return h;
}
__device__ __forceinline__ float sp_bf2f(sp_bf16 b) { return __uint_as_float(((unsigned)b.x) << 16); }
__device__ __forceinline__ sp_bf16 sp_f2bf(float f) {
  sp_bf16 b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.x) : "f"(f));
  return b;
}
// c10's float->int64 (and ->uint8, through int64) as x86's cvttsd2si gives it: truncation,
// NaN and out of range -> INT64_MIN.
__device__ __forceinline__ sp_i64 sp_trunc64(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return (sp_i64)(1ull << 63);
  return (sp_i64)d;
}
// c10's float->int8/int16/int32 through a 32-bit cvtt: NaN and out of range -> INT32_MIN.
__device__ __forceinline__ int sp_trunc32(double d) {
  if (!(d > -2147483649.0 && d < 2147483648.0)) return (int)(1u << 31);
  return (int)d;
}

__device__ __forceinline__ void sp_fail(sp_i64* err, sp_i64 site, sp_i64 check, sp_i64 value,
                                        sp_i64 limit, sp_i64 dim, sp_i64 extra) {
  if (err == 0) return;
  if (atomicCAS((sp_u64*)err, 0ull, (sp_u64)check) == 0ull) {
    err[1] = site;
    err[2] = value;
    err[3] = limit;
    err[4] = dim;
    err[5] = extra;
  }
}
__device__ __forceinline__ bool sp_failed(const sp_i64* err) {
  return err != 0 && *(const volatile sp_i64*)err != 0;
}

template <typename T> struct sp_signed { static const bool value = (T)(-1) < (T)0; };

template <typename T>
__device__ __forceinline__ T sp_wrap_neg(T x) { return (T)(0ull - (sp_u64)x); }

template <typename T>
__device__ __forceinline__ T sp_div_trunc(T x, T y, sp_i64* err, sp_i64 site) {
  if (y == 0) { sp_fail(err, site, SP_CHECK_DIV_ZERO, 0, 0, 0, 0); return 0; }
  if (sp_signed<T>::value && y == (T)(-1)) return sp_wrap_neg(x);
  return (T)(x / y);
}
template <typename T>
__device__ __forceinline__ T sp_div_floor(T x, T y, sp_i64* err, sp_i64 site) {
  if (y == 0) { sp_fail(err, site, SP_CHECK_DIV_ZERO, 0, 0, 0, 0); return 0; }
  if (sp_signed<T>::value && y == (T)(-1)) return sp_wrap_neg(x);
  T q = (T)(x / y);
  if ((T)(x % y) != 0 && ((x < 0) != (y < 0))) q = (T)(q - 1);
  return q;
}
template <typename T>
__device__ __forceinline__ T sp_remainder(T x, T y, sp_i64* err, sp_i64 site) {
  if (y == 0) { sp_fail(err, site, SP_CHECK_DIV_ZERO, 0, 0, 0, 0); return 0; }
  if (sp_signed<T>::value && y == (T)(-1)) return 0;
  T r = (T)(x % y);
  if (r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);
  return r;
}
template <typename T>
__device__ __forceinline__ T sp_fmod(T x, T y, sp_i64* err, sp_i64 site) {
  if (y == 0) { sp_fail(err, site, SP_CHECK_DIV_ZERO, 0, 0, 0, 0); return 0; }
  if (sp_signed<T>::value && y == (T)(-1)) return 0;
  return (T)(x % y);
}
template <typename T>
__device__ __forceinline__ T sp_ipow(T base, T exp) {
  if (sp_signed<T>::value && exp < 0) {
    if (base == 1) return 1;
    if (base == (T)(-1)) return (exp % 2 == 0) ? (T)1 : (T)(-1);
    return 0;
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = (T)((sp_u64)result * (sp_u64)base);
    exp = (T)(exp >> 1);
    base = (T)((sp_u64)base * (sp_u64)base);
  }
  return result;
}
template <typename T>
__device__ __forceinline__ T sp_abs_int(T x) { return (sp_signed<T>::value && x < 0) ? sp_wrap_neg(x) : x; }

// PyTorch's div_floor_floating.
template <typename T>
__device__ __forceinline__ T sp_div_floor_float(T a, T b) {
  if (b == 0) return a / b;
  T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
  T floordiv;
  if (div != 0) {
    floordiv = floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = copysign(T(0), a / b);
  }
  return floordiv;
}
template <typename T>
__device__ __forceinline__ T sp_remainder_float(T x, T y) {
  T r = fmod(x, y);
  if (r != T(0) && ((y < T(0)) != (r < T(0)))) r += y;
  return r;
}
template <typename T>
__device__ __forceinline__ T sp_nan() { return (T)__int_as_float(0x7fc00000); }
template <typename T>
__device__ __forceinline__ T sp_minimum(T x, T y) {
  if (isnan(x) || isnan(y)) return sp_nan<T>();
  return y < x ? y : x;
}
template <typename T>
__device__ __forceinline__ T sp_maximum(T x, T y) {
  if (isnan(x) || isnan(y)) return sp_nan<T>();
  return x < y ? y : x;
}
// std::max / std::min (a NaN first argument stays).
template <typename T>
__device__ __forceinline__ T sp_std_max(T a, T b) { return a < b ? b : a; }
template <typename T>
__device__ __forceinline__ T sp_std_min(T a, T b) { return b < a ? b : a; }
template <typename T>
__device__ __forceinline__ T sp_clamp(T x, T lo, T hi) {
  T r = x < lo ? lo : x;
  return hi < r ? hi : r;
}
template <typename T>
__device__ __forceinline__ T sp_clamp_nan(T x, T lo, T hi) {
  if (isnan(lo) || isnan(hi)) return sp_nan<T>();
  return sp_clamp(x, lo, hi);
}
template <typename T>
__device__ __forceinline__ T sp_logit(T x, T eps) {
  if (eps >= T(0)) {
    const T lo = eps, hi = T(1) - eps;
    x = x < lo ? lo : (x > hi ? hi : x);
  }
  return log(x / (T(1) - x));
}
template <typename T>
__device__ __forceinline__ T sp_lerp(T x, T y, T w) {
  return fabs(w) < T(0.5) ? x + w * (y - x) : y - (y - x) * (T(1) - w);
}
)PREAMBLE";

// Templates per compute class.
struct Templates {
  const char* b = nullptr;  // bool
  const char* i = nullptr;  // integers
  const char* f = nullptr;  // float32, float64
};

Templates templates(PointwiseFn fn) {
  switch (fn) {
    case PointwiseFn::kCopy:
      return {"{x}", "{x}", "{x}"};
    case PointwiseFn::kAdd:
      return {"({x} || {y})", "({T})((sp_u64){x} + (sp_u64){y})", "({x} + {y})"};
    case PointwiseFn::kAddScaled:
      return {"({x} || ({z} && {y}))", "({T})((sp_u64){x} + (sp_u64){z} * (sp_u64){y})",
              "({x} + {z} * {y})"};
    case PointwiseFn::kSub:
      return {nullptr, "({T})((sp_u64){x} - (sp_u64){y})", "({x} - {y})"};
    case PointwiseFn::kMul:
      return {"({x} && {y})", "({T})((sp_u64){x} * (sp_u64){y})", "({x} * {y})"};
    case PointwiseFn::kDiv:
      return {nullptr, nullptr, "({x} / {y})"};
    case PointwiseFn::kDivTrunc:
      return {nullptr, "sp_div_trunc<{T}>({x}, {y}, {err})", "trunc{f}({x} / {y})"};
    case PointwiseFn::kDivFloor:
      return {nullptr, "sp_div_floor<{T}>({x}, {y}, {err})", "sp_div_floor_float<{T}>({x}, {y})"};
    case PointwiseFn::kRemainder:
      return {nullptr, "sp_remainder<{T}>({x}, {y}, {err})", "sp_remainder_float<{T}>({x}, {y})"};
    case PointwiseFn::kFmod:
      return {nullptr, "sp_fmod<{T}>({x}, {y}, {err})", "fmod{f}({x}, {y})"};
    case PointwiseFn::kPow:
      return {nullptr, "sp_ipow<{T}>({x}, {y})", "pow{f}({x}, {y})"};
    case PointwiseFn::kAtan2:
      return {nullptr, nullptr, "atan2{f}({x}, {y})"};
    case PointwiseFn::kBitwiseAnd:
      return {"({x} && {y})", "({T})({x} & {y})", nullptr};
    case PointwiseFn::kBitwiseOr:
      return {"({x} || {y})", "({T})({x} | {y})", nullptr};
    case PointwiseFn::kBitwiseXor:
      return {"({x} != {y})", "({T})({x} ^ {y})", nullptr};
    case PointwiseFn::kBitwiseNot:
      return {"(!{x})", "({T})(~{x})", nullptr};
    case PointwiseFn::kEq:
      return {"({x} == {y})", "({x} == {y})", "({x} == {y})"};
    case PointwiseFn::kNe:
      return {"({x} != {y})", "({x} != {y})", "({x} != {y})"};
    case PointwiseFn::kLt:
      return {"({x} < {y})", "({x} < {y})", "({x} < {y})"};
    case PointwiseFn::kLe:
      return {"({x} <= {y})", "({x} <= {y})", "({x} <= {y})"};
    case PointwiseFn::kGt:
      return {"({x} > {y})", "({x} > {y})", "({x} > {y})"};
    case PointwiseFn::kGe:
      return {"({x} >= {y})", "({x} >= {y})", "({x} >= {y})"};
    case PointwiseFn::kLogicalAnd:
      return {"({x} && {y})", nullptr, nullptr};
    case PointwiseFn::kLogicalOr:
      return {"({x} || {y})", nullptr, nullptr};
    case PointwiseFn::kLogicalXor:
      return {"({x} != {y})", nullptr, nullptr};
    case PointwiseFn::kLogicalNot:
      return {"(!{x})", nullptr, nullptr};
    case PointwiseFn::kMinimum:
      return {"({x} && {y})", "({y} < {x} ? {y} : {x})", "sp_minimum<{T}>({x}, {y})"};
    case PointwiseFn::kMaximum:
      return {"({x} || {y})", "({x} < {y} ? {y} : {x})", "sp_maximum<{T}>({x}, {y})"};
    case PointwiseFn::kClamp:
      return {nullptr, "sp_clamp<{T}>({x}, {y}, {z})", "sp_clamp_nan<{T}>({x}, {y}, {z})"};
    case PointwiseFn::kClampMin:
      return {nullptr, "({x} < {y} ? {y} : {x})", "({x} < {y} ? {y} : {x})"};
    case PointwiseFn::kClampMax:
      return {nullptr, "({y} < {x} ? {y} : {x})", "({y} < {x} ? {y} : {x})"};
    case PointwiseFn::kHardtanh:
      return {nullptr, "sp_clamp<{T}>({x}, {y}, {z})", "sp_clamp<{T}>({x}, {y}, {z})"};
    case PointwiseFn::kWhere:
      return {"({x} ? {y} : {z})", "({x} ? {y} : {z})", "({x} ? {y} : {z})"};
    case PointwiseFn::kNeg:
      return {nullptr, "sp_wrap_neg<{T}>({x})", "(-{x})"};
    case PointwiseFn::kAbs:
      return {"{x}", "sp_abs_int<{T}>({x})", "fabs{f}({x})"};
    case PointwiseFn::kSign:
      return {"{x}", "({T})((({T})0 < {x}) - ({x} < ({T})0))",
              "({T})((({T})0 < {x}) - ({x} < ({T})0))"};
    case PointwiseFn::kSqrt:
      return {nullptr, nullptr, "sqrt{f}({x})"};
    case PointwiseFn::kRsqrt:
      return {nullptr, nullptr, "(({T})1 / sqrt{f}({x}))"};
    case PointwiseFn::kExp:
      return {nullptr, nullptr, "exp{f}({x})"};
    case PointwiseFn::kExp2:
      return {nullptr, nullptr, "exp2{f}({x})"};
    case PointwiseFn::kExpm1:
      return {nullptr, nullptr, "expm1{f}({x})"};
    case PointwiseFn::kLog:
      return {nullptr, nullptr, "log{f}({x})"};
    case PointwiseFn::kLog2:
      return {nullptr, nullptr, "log2{f}({x})"};
    case PointwiseFn::kLog10:
      return {nullptr, nullptr, "log10{f}({x})"};
    case PointwiseFn::kLog1p:
      return {nullptr, nullptr, "log1p{f}({x})"};
    case PointwiseFn::kSin:
      return {nullptr, nullptr, "sin{f}({x})"};
    case PointwiseFn::kCos:
      return {nullptr, nullptr, "cos{f}({x})"};
    case PointwiseFn::kTan:
      return {nullptr, nullptr, "tan{f}({x})"};
    case PointwiseFn::kAsin:
      return {nullptr, nullptr, "asin{f}({x})"};
    case PointwiseFn::kAcos:
      return {nullptr, nullptr, "acos{f}({x})"};
    case PointwiseFn::kAtan:
      return {nullptr, nullptr, "atan{f}({x})"};
    case PointwiseFn::kSinh:
      return {nullptr, nullptr, "sinh{f}({x})"};
    case PointwiseFn::kCosh:
      return {nullptr, nullptr, "cosh{f}({x})"};
    case PointwiseFn::kTanh:
      return {nullptr, nullptr, "tanh{f}({x})"};
    case PointwiseFn::kAsinh:
      return {nullptr, nullptr, "asinh{f}({x})"};
    case PointwiseFn::kAcosh:
      return {nullptr, nullptr, "acosh{f}({x})"};
    case PointwiseFn::kAtanh:
      return {nullptr, nullptr, "atanh{f}({x})"};
    case PointwiseFn::kErf:
      return {nullptr, nullptr, "erf{f}({x})"};
    case PointwiseFn::kErfc:
      return {nullptr, nullptr, "erfc{f}({x})"};
    case PointwiseFn::kErfinv:
      return {nullptr, nullptr, "erfinv{f}({x})"};
    case PointwiseFn::kSigmoid:
      return {nullptr, nullptr, "(({T})1 / (({T})1 + exp{f}(-{x})))"};
    case PointwiseFn::kLogit:
      return {nullptr, nullptr, "sp_logit<{T}>({x}, {y})"};
    case PointwiseFn::kSilu:
      return {nullptr, nullptr, "({x} / (({T})1 + exp{f}(-{x})))"};
    case PointwiseFn::kGelu:
      return {nullptr, nullptr, "({x} * ({T})0.5 * (({T})1 + erf{f}({x} * {SQRT1_2})))"};
    case PointwiseFn::kGeluTanh:
      return {nullptr, nullptr,
              "(({T})0.5 * {x} * (({T})1 + tanh{f}({GELU_BETA} * ({x} + {GELU_KAPPA} * ({x} * "
              "{x} * {x})))))"};
    case PointwiseFn::kMish:
      return {nullptr, nullptr, "({x} * tanh{f}(log1p{f}(exp{f}({x}))))"};
    case PointwiseFn::kReciprocal:
      return {nullptr, nullptr, "(({T})1 / {x})"};
    case PointwiseFn::kHardsigmoid:
      return {nullptr, nullptr,
              "(sp_std_min<{T}>(sp_std_max<{T}>({x} + ({T})3, ({T})0), ({T})6) / ({T})6)"};
    case PointwiseFn::kHardswish:
      return {nullptr, nullptr,
              "({x} * sp_std_min<{T}>(sp_std_max<{T}>({x} + ({T})3, ({T})0), ({T})6) / ({T})6)"};
    case PointwiseFn::kRelu:
      return {nullptr, "({x} > ({T})0 ? {x} : ({T})0)",
              "(({x} > ({T})0 || {x} != {x}) ? {x} : ({T})0)"};
    case PointwiseFn::kLeakyRelu:
      return {nullptr, nullptr, "({x} > ({T})0 ? {x} : {x} * {y})"};
    case PointwiseFn::kElu:
      return {nullptr, nullptr, "({x} <= ({T})0 ? expm1{f}({x} * {w}) * ({y} * {z}) : {x} * {z})"};
    case PointwiseFn::kSoftplus:
      return {nullptr, nullptr, "({x} * {y} > {z} ? {x} : log1p{f}(exp{f}({x} * {y})) / {y})"};
    case PointwiseFn::kSquare:
      return {nullptr, "({T})((sp_u64){x} * (sp_u64){x})", "({x} * {x})"};
    case PointwiseFn::kFloor:
      return {nullptr, nullptr, "floor{f}({x})"};
    case PointwiseFn::kCeil:
      return {nullptr, nullptr, "ceil{f}({x})"};
    case PointwiseFn::kRound:
      return {nullptr, nullptr, "rint{f}({x})"};
    case PointwiseFn::kTrunc:
      return {nullptr, nullptr, "trunc{f}({x})"};
    case PointwiseFn::kFrac:
      return {nullptr, nullptr, "({x} - trunc{f}({x}))"};
    case PointwiseFn::kRoundScaled:
      return {nullptr, nullptr, "(rint{f}({x} * {y}) / {y})"};
    case PointwiseFn::kRoundScaledNegative:
      return {nullptr, nullptr, "(rint{f}({x} / {y}) * {y})"};
    case PointwiseFn::kIsNan:
      return {"false", "false", "isnan({x})"};
    case PointwiseFn::kIsInf:
      return {"false", "false", "isinf({x})"};
    case PointwiseFn::kIsFinite:
      return {"true", "true", "isfinite({x})"};
    case PointwiseFn::kNanToNum:
      return {nullptr, nullptr,
              "(isnan({x}) ? {y} : (isinf({x}) ? ({x} > ({T})0 ? {z} : {w}) : {x}))"};
    case PointwiseFn::kLerp:
      return {nullptr, nullptr, "sp_lerp<{T}>({x}, {y}, {z})"};
    case PointwiseFn::kAddcmul:
      return {nullptr, "({T})((sp_u64){x} + (sp_u64){w} * (sp_u64){y} * (sp_u64){z})",
              "({x} + {w} * {y} * {z})"};
    case PointwiseFn::kAddcdiv:
      return {nullptr, nullptr, "({x} + {w} * {y} / {z})"};
  }
  return {};
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

}  // namespace

const std::string& pointwise_preamble() {
  static const std::string preamble =
      fmt::format("#define SP_CHECK_DIV_ZERO {}\n",
                  static_cast<int64_t>(DeviceCheck::kIntegerDivisionByZero)) +
      kPreamble;
  return preamble;
}

std::string float_literal(const char* type, double value) {
  return fmt::format("(({}){:a})", type, value);
}

std::optional<std::string> pointwise_expression(PointwiseFn fn, DType compute) {
  const Templates t = templates(fn);
  const char* tpl = compute == DType::kBool ? t.b : is_integral(compute) ? t.i : t.f;
  if (tpl == nullptr || compute == DType::kFloat16 || compute == DType::kBFloat16) {
    return std::nullopt;
  }
  const char* type = pointwise_storage_type(compute);
  std::string s = tpl;
  // GELU's constants as the CPU kernel rounds them into the compute type.
  replace_all(s, "{SQRT1_2}", float_literal(type, M_SQRT1_2));
  replace_all(s, "{GELU_BETA}", float_literal(type, M_SQRT2 * M_2_SQRTPI * 0.5));
  replace_all(s, "{GELU_KAPPA}", float_literal(type, 0.044715));
  replace_all(s, "{T}", type);
  replace_all(s, "{f}", compute == DType::kFloat32 ? "f" : "");
  replace_all(s, "{err}", "p.err, p.site");
  return s;
}

std::string convert_expression(DType from, DType to, const std::string& expr) {
  if (from == to) return expr;
  if (from == DType::kFloat16)
    return convert_expression(DType::kFloat32, to, "sp_h2f(" + expr + ")");
  if (from == DType::kBFloat16)
    return convert_expression(DType::kFloat32, to, "sp_bf2f(" + expr + ")");
  if (to == DType::kFloat16)
    return "sp_f2h(" + convert_expression(from, DType::kFloat32, expr) + ")";
  if (to == DType::kBFloat16)
    return "sp_f2bf(" + convert_expression(from, DType::kFloat32, expr) + ")";
  if (to == DType::kBool) return "((" + expr + ") != 0)";
  const char* type = pointwise_storage_type(to);
  if (is_floating(to)) return fmt::format("(({})({}))", type, expr);
  // To an integer type.
  if (is_floating(from)) {
    const char* trunc = to == DType::kInt64 || to == DType::kUInt8 ? "sp_trunc64" : "sp_trunc32";
    return fmt::format("(({}){}((double)({})))", type, trunc, expr);
  }
  return fmt::format("(({})({}))", type, expr);  // integer or bool → integer: modular
}

}  // namespace splice::cuda
