// The generated code's building blocks: the preamble (16-bit float conversions through PTX,
// c10's float→int truncation with the x86 result for NaN and out-of-range values as the CPU
// backend gives, the error-word helpers, integer division with PyTorch's checks, PyTorch's
// div_floor and powi: the primitives of ir/ops/pointwise/primitives.h a CUDA function does not
// provide), each function's expression rendered from its formula (ir/ops/pointwise/, with
// pointwise_expr.h's Expr), and dtype conversion expressions. A formula is the one the CPU
// backend runs (same operation order, so float results agree to the last bit wherever the math
// functions themselves do; --fmad=false keeps a*b+c from contracting).
#include "backends/cuda/pointwise_expressions.h"

#include <fmt/format.h>

#include <type_traits>

#include "backends/cuda/error_word.h"
#include "backends/cuda/pointwise_codegen.h"
#include "backends/cuda/pointwise_expr.h"

namespace splice::cuda {

namespace {

using ir::PointwiseFn;

const char* const kPreamble = R"PREAMBLE(
typedef long long sp_i64;
typedef unsigned long long sp_u64;
struct sp_half { unsigned short x; };
struct sp_bf16 { unsigned short x; };
template <typename T> struct __align__(4 * sizeof(T)) sp_vec4 { T v[4]; };

// Dependent launches (dependent_launch.h): every thread waits for the kernels before this one,
// then lets the next launch, before it touches memory; before that, only L2 prefetches.
__device__ __forceinline__ void sp_dependent_start() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void sp_prefetch_l2(const void* p) {
#ifdef __CUDA_ARCH__
  asm volatile("prefetch.global.L2 [%0];" :: "l"(p));
#endif
}

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
__device__ __forceinline__ T sp_nan() { return (T)__int_as_float(0x7fc00000); }

)PREAMBLE";

// The formula of F for compute class `cls` rendered with Expr operands, or nullopt where F has
// none.
template <class F, uint8_t cls>
std::optional<std::string> render() {
  if constexpr (!ir::pw::defines<F, cls>()) {
    return std::nullopt;
  } else {
    const expr::Expr x("{x}"), y("{y}"), z("{z}"), w("{w}");
    auto result = [&] {
      if constexpr (F::arity == 1)
        return ir::pw::formula<F, cls>(x);
      else if constexpr (F::arity == 2)
        return ir::pw::formula<F, cls>(x, y);
      else if constexpr (F::arity == 3)
        return ir::pw::formula<F, cls>(x, y, z);
      else
        return ir::pw::formula<F, cls>(x, y, z, w);
    }();
    // A constant truth value (isnan of an integer).
    if constexpr (std::is_same_v<decltype(result), bool>)
      return std::string(result ? "true" : "false");
    else
      return result.text();
  }
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
  if (compute == DType::kFloat16 || compute == DType::kBFloat16) return std::nullopt;
  auto rendered = ir::pw::visit(fn, [&]<class F>(ir::pw::Fn<F>) {
    if (compute == DType::kBool) return render<F, ir::kComputeBool>();
    if (is_integral(compute)) return render<F, ir::kComputeInt>();
    return render<F, ir::kComputeFloat>();
  });
  if (!rendered) return std::nullopt;
  std::string s = std::move(*rendered);
  replace_all(s, "{T}", pointwise_storage_type(compute));
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
