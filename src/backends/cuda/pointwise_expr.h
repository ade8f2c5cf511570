#pragma once
// The value type the CUDA backend renders the pointwise formulas with (ir/ops/pointwise/):
// an Expr is CUDA source text, and every operation a formula does to a value (the operators,
// literals, the primitives of ir/ops/pointwise/primitives.h) prints the CUDA spelling of the
// same operation, fully parenthesised, so a formula instantiated with Expr is the expression
// the generated kernel computes. The text keeps the generator's placeholders: {x} {y} {z} {w}
// the operands, {T} the compute type, {f} the float suffix of math functions ("f" for float32),
// {err} the error-word arguments (pointwise_expressions.h fills them).

#include <string>
#include <utility>

namespace splice::cuda::expr {

class Expr {
 public:
  explicit Expr(std::string text) : text_(std::move(text)) {}
  // Literals: the number rounded into the compute type, as static_cast<T> does.
  Expr(int value);     // NOLINT(google-explicit-constructor): V(1) in a formula
  Expr(double value);  // NOLINT(google-explicit-constructor): V(0.5) in a formula
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator==(const Expr& a, const Expr& b);
Expr operator!=(const Expr& a, const Expr& b);
Expr operator<(const Expr& a, const Expr& b);
Expr operator<=(const Expr& a, const Expr& b);
Expr operator>(const Expr& a, const Expr& b);
Expr operator>=(const Expr& a, const Expr& b);
Expr operator&&(const Expr& a, const Expr& b);
Expr operator||(const Expr& a, const Expr& b);
Expr operator!(const Expr& a);

// The primitives (ir/ops/pointwise/primitives.h), found by argument-dependent lookup.
Expr select(const Expr& c, const Expr& a, const Expr& b);
Expr sqrt(const Expr& x);
Expr exp(const Expr& x);
Expr exp2(const Expr& x);
Expr expm1(const Expr& x);
Expr log(const Expr& x);
Expr log2(const Expr& x);
Expr log10(const Expr& x);
Expr log1p(const Expr& x);
Expr sin(const Expr& x);
Expr cos(const Expr& x);
Expr tan(const Expr& x);
Expr asin(const Expr& x);
Expr acos(const Expr& x);
Expr atan(const Expr& x);
Expr sinh(const Expr& x);
Expr cosh(const Expr& x);
Expr tanh(const Expr& x);
Expr asinh(const Expr& x);
Expr acosh(const Expr& x);
Expr atanh(const Expr& x);
Expr erf(const Expr& x);
Expr erfc(const Expr& x);
Expr erfinv(const Expr& x);
Expr floor(const Expr& x);
Expr ceil(const Expr& x);
Expr trunc(const Expr& x);
Expr fabs(const Expr& x);
Expr round_even(const Expr& x);
Expr fmod(const Expr& x, const Expr& y);
Expr pow(const Expr& x, const Expr& y);
Expr atan2(const Expr& x, const Expr& y);
Expr copysign(const Expr& x, const Expr& y);
Expr isnan(const Expr& x);
Expr isinf(const Expr& x);
Expr isfinite(const Expr& x);
Expr quiet_nan(const Expr& x);
Expr div_floor_float(const Expr& x, const Expr& y);
Expr wrap_add(const Expr& x, const Expr& y);
Expr wrap_sub(const Expr& x, const Expr& y);
Expr wrap_mul(const Expr& x, const Expr& y);
Expr wrap_neg(const Expr& x);
Expr wrap_abs(const Expr& x);
Expr int_pow(const Expr& x, const Expr& y);
Expr bit_and(const Expr& x, const Expr& y);
Expr bit_or(const Expr& x, const Expr& y);
Expr bit_xor(const Expr& x, const Expr& y);
Expr bit_not(const Expr& x);
Expr checked_div_trunc(const Expr& x, const Expr& y);
Expr checked_div_floor(const Expr& x, const Expr& y);
Expr checked_remainder(const Expr& x, const Expr& y);
Expr checked_fmod(const Expr& x, const Expr& y);

}  // namespace splice::cuda::expr
