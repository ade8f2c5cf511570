// The CUDA spelling of each operation of the pointwise formulas (see pointwise_expr.h): math
// functions take the {f} suffix (expf for float32, exp for float64), the PyTorch-specific
// helpers call the preamble's sp_* functions (pointwise_expressions.cc), integer arithmetic
// wraps through sp_u64 as the host's through uint64.
#include "backends/cuda/pointwise_expr.h"

#include <fmt/format.h>

#include "backends/cuda/pointwise_expressions.h"

namespace splice::cuda::expr {

namespace {

Expr infix(const Expr& a, const char* op, const Expr& b) {
  return Expr(fmt::format("({} {} {})", a.text(), op, b.text()));
}
Expr call(const char* fn, const Expr& x) { return Expr(fmt::format("{}({})", fn, x.text())); }
Expr call(const char* fn, const Expr& x, const Expr& y) {
  return Expr(fmt::format("{}({}, {})", fn, x.text(), y.text()));
}

}  // namespace

Expr::Expr(int value) : text_(fmt::format("(({{T}}){})", value)) {}
Expr::Expr(double value) : text_(float_literal("{T}", value)) {}

Expr operator+(const Expr& a, const Expr& b) { return infix(a, "+", b); }
Expr operator-(const Expr& a, const Expr& b) { return infix(a, "-", b); }
Expr operator*(const Expr& a, const Expr& b) { return infix(a, "*", b); }
Expr operator/(const Expr& a, const Expr& b) { return infix(a, "/", b); }
Expr operator-(const Expr& a) { return Expr("(-" + a.text() + ")"); }
Expr operator==(const Expr& a, const Expr& b) { return infix(a, "==", b); }
Expr operator!=(const Expr& a, const Expr& b) { return infix(a, "!=", b); }
Expr operator<(const Expr& a, const Expr& b) { return infix(a, "<", b); }
Expr operator<=(const Expr& a, const Expr& b) { return infix(a, "<=", b); }
Expr operator>(const Expr& a, const Expr& b) { return infix(a, ">", b); }
Expr operator>=(const Expr& a, const Expr& b) { return infix(a, ">=", b); }
Expr operator&&(const Expr& a, const Expr& b) { return infix(a, "&&", b); }
Expr operator||(const Expr& a, const Expr& b) { return infix(a, "||", b); }
Expr operator!(const Expr& a) { return Expr("(!" + a.text() + ")"); }

Expr select(const Expr& c, const Expr& a, const Expr& b) {
  return Expr(fmt::format("({} ? {} : {})", c.text(), a.text(), b.text()));
}

#define SPLICE_CUDA_MATH1(name, cuda) \
  Expr name(const Expr& x) { return call(cuda "{f}", x); }
SPLICE_CUDA_MATH1(sqrt, "sqrt")
SPLICE_CUDA_MATH1(exp, "exp")
SPLICE_CUDA_MATH1(exp2, "exp2")
SPLICE_CUDA_MATH1(expm1, "expm1")
SPLICE_CUDA_MATH1(log, "log")
SPLICE_CUDA_MATH1(log2, "log2")
SPLICE_CUDA_MATH1(log10, "log10")
SPLICE_CUDA_MATH1(log1p, "log1p")
SPLICE_CUDA_MATH1(sin, "sin")
SPLICE_CUDA_MATH1(cos, "cos")
SPLICE_CUDA_MATH1(tan, "tan")
SPLICE_CUDA_MATH1(asin, "asin")
SPLICE_CUDA_MATH1(acos, "acos")
SPLICE_CUDA_MATH1(atan, "atan")
SPLICE_CUDA_MATH1(sinh, "sinh")
SPLICE_CUDA_MATH1(cosh, "cosh")
SPLICE_CUDA_MATH1(tanh, "tanh")
SPLICE_CUDA_MATH1(asinh, "asinh")
SPLICE_CUDA_MATH1(acosh, "acosh")
SPLICE_CUDA_MATH1(atanh, "atanh")
SPLICE_CUDA_MATH1(erf, "erf")
SPLICE_CUDA_MATH1(erfc, "erfc")
SPLICE_CUDA_MATH1(erfinv, "erfinv")
SPLICE_CUDA_MATH1(floor, "floor")
SPLICE_CUDA_MATH1(ceil, "ceil")
SPLICE_CUDA_MATH1(trunc, "trunc")
SPLICE_CUDA_MATH1(fabs, "fabs")
SPLICE_CUDA_MATH1(round_even, "rint")
#undef SPLICE_CUDA_MATH1

Expr fmod(const Expr& x, const Expr& y) { return call("fmod{f}", x, y); }
Expr pow(const Expr& x, const Expr& y) { return call("pow{f}", x, y); }
Expr atan2(const Expr& x, const Expr& y) { return call("atan2{f}", x, y); }
Expr copysign(const Expr& x, const Expr& y) { return call("copysign{f}", x, y); }
Expr isnan(const Expr& x) { return call("isnan", x); }
Expr isinf(const Expr& x) { return call("isinf", x); }
Expr isfinite(const Expr& x) { return call("isfinite", x); }
Expr quiet_nan(const Expr&) { return Expr("sp_nan<{T}>()"); }
Expr div_floor_float(const Expr& x, const Expr& y) { return call("sp_div_floor_float<{T}>", x, y); }

namespace {
Expr wrapped(const Expr& x, const char* op, const Expr& y) {
  return Expr(fmt::format("({{T}})((sp_u64){} {} (sp_u64){})", x.text(), op, y.text()));
}
Expr in_type(const Expr& x, const char* op, const Expr& y) {
  return Expr(fmt::format("({{T}})({} {} {})", x.text(), op, y.text()));
}
Expr checked(const char* fn, const Expr& x, const Expr& y) {
  return Expr(fmt::format("{}<{{T}}>({}, {}, {{err}})", fn, x.text(), y.text()));
}
}  // namespace

Expr wrap_add(const Expr& x, const Expr& y) { return wrapped(x, "+", y); }
Expr wrap_sub(const Expr& x, const Expr& y) { return wrapped(x, "-", y); }
Expr wrap_mul(const Expr& x, const Expr& y) { return wrapped(x, "*", y); }
Expr wrap_neg(const Expr& x) { return call("sp_wrap_neg<{T}>", x); }
Expr wrap_abs(const Expr& x) { return call("sp_abs_int<{T}>", x); }
Expr int_pow(const Expr& x, const Expr& y) { return call("sp_ipow<{T}>", x, y); }
Expr bit_and(const Expr& x, const Expr& y) { return in_type(x, "&", y); }
Expr bit_or(const Expr& x, const Expr& y) { return in_type(x, "|", y); }
Expr bit_xor(const Expr& x, const Expr& y) { return in_type(x, "^", y); }
Expr bit_not(const Expr& x) { return Expr(fmt::format("({{T}})(~{})", x.text())); }
Expr checked_div_trunc(const Expr& x, const Expr& y) { return checked("sp_div_trunc", x, y); }
Expr checked_div_floor(const Expr& x, const Expr& y) { return checked("sp_div_floor", x, y); }
Expr checked_remainder(const Expr& x, const Expr& y) { return checked("sp_remainder", x, y); }
Expr checked_fmod(const Expr& x, const Expr& y) { return checked("sp_fmod", x, y); }

}  // namespace splice::cuda::expr
