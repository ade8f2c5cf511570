#pragma once
// Float-array loops 8 lanes at a time for the CPU backend's hot spots: exp (softmax, sigmoid,
// SiLU, exp) and a row's max (softmax). libm's expf is one element per call (~15 cycles each); this
// is a Cephes-style range reduction and degree-6 polynomial (max error ~2 ulp against the correctly
// rounded exp on float32, within what PyTorch's vectorised Sleef expf differs by), written with
// GCC/Clang vector types so it compiles to SSE on any x86-64 and to AVX2/AVX-512 where the CPU
// has them (vec_math.cc builds a clone per instruction set, picked once at load).
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
// out[i] = exp(x[i] - shift), returning the sum of out[0..n): eight float partial sums, one per
// lane, added in double with the tail.
double exp_shifted_sum(const float* x, float shift, float* out, int64_t n);
// The largest of x[0..n) (n >= 1); NaN when any element is NaN (as PyTorch's max).
float max_floats(const float* x, int64_t n);

}  // namespace splice::cpu
