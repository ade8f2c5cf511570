#pragma once
// Float-array loops 8 lanes at a time for the CPU backend's hot spots: exp (softmax, sigmoid,
// SiLU, exp), erf (gelu) and a row's max (softmax). libm's expf is one element per call (~15 cycles
// each); this is a Cephes-style range reduction and degree-6 polynomial (max error ~2 ulp against
// the correctly rounded exp on float32, within what PyTorch's vectorised Sleef expf differs by),
// written with GCC/Clang vector types so it compiles to SSE on any x86-64 and to AVX2/AVX-512 where
// the CPU has them (vec_math.cc builds a clone per instruction set, picked once at load).
//
// Special values as expf: exp(-inf) = 0, exp(+inf) = +inf, exp(NaN) = NaN; finite up to
// ln(FLT_MAX), denormal below float's normal range, 0 below -103.97.

#include <cstdint>

namespace splice::cpu {

// out[i] = exp(x[i]) for i in [0, n). out may be x.
void exp_floats(const float* x, float* out, int64_t n);
// out[i] = 1 / (1 + exp(-x[i])).
void sigmoid_floats(const float* x, float* out, int64_t n);
// out[i] = x[i] / (1 + exp(-x[i])).
void silu_floats(const float* x, float* out, int64_t n);
// out[i] = erf(x[i]): within 2e-7 absolute and 3 ulp near 0 (a polynomial below |x| = 1,
// 1 - exp(-x^2) * polynomial(1/|x|) above); erf(+-inf) = +-1, erf(NaN) = NaN.
void erf_floats(const float* x, float* out, int64_t n);
// out[i] = x[i] * 0.5 * (1 + erf(x[i] * sqrt(1/2))): gelu with approximate='none'.
void gelu_floats(const float* x, float* out, int64_t n);
// out[i] = exp(x[i] - shift), returning the sum of out[0..n): eight float partial sums, one per
// lane, added in double with the tail.
double exp_shifted_sum(const float* x, float shift, float* out, int64_t n);
// The largest of x[0..n) (n >= 1); NaN when any element is NaN (as PyTorch's max).
float max_floats(const float* x, int64_t n);
// layer_norm of one row of n >= 1 floats: the mean and the biased variance in two passes
// summed in double (four lanes at a time), rstd = 1 / sqrt(max(var, 0) + eps), then
// y[j] = (x[j] * rstd - rstd * mean) * w[j] + b[j] in float; w and b may be null. Returns
// {mean, rstd} as floats.
struct RowMoments {
  float mean, rstd;
};
RowMoments layer_norm_row(const float* x, float* y, int64_t n, const float* w, const float* b,
                          float eps);

}  // namespace splice::cpu
