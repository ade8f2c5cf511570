// Vectorised float loops (see vec_math.h).
#include "backends/cpu/vec_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace splice::cpu {

namespace {

// Eight lanes: one AVX register, two SSE ones.
using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));
using D4 = double __attribute__((vector_size(32)));
constexpr int kLanes = 8;

// Each public function is compiled for AVX-512, AVX2+FMA and baseline x86-64 with GCC's
// function multi-versioning (an ifunc resolved once, at load); elsewhere it is one version.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define SPLICE_VEC_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SPLICE_VEC_CLONES
#endif

// The lambdas handed to map8 run inside a clone: they must be inlined into it. A lambda left as
// its own function (at -O0) is compiled for baseline x86-64 and takes its F8 argument in memory,
// while an AVX clone passes it in a register: the call would read garbage.
#define SPLICE_VEC_INLINE __attribute__((always_inline))

[[gnu::always_inline]] inline F8 splat(float v) { return F8{} + v; }

[[gnu::always_inline]] inline I8 splat_i(int32_t v) { return I8{} + v; }

[[gnu::always_inline]] inline F8 select(I8 mask, F8 a, F8 b) {
  // A C-style cast between vector types of one size reinterprets the bits.
  return (F8)((mask & (I8)a) | (~mask & (I8)b));
}

// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n ln2 (ln2 in two parts, so r is exact),
// exp(r) on [-ln2/2, ln2/2] by Cephes' expf polynomial. 2^n is applied as 2^(n/2) * 2^(n - n/2):
// n runs from -150 to 128, beyond one normal float exponent, so the results near overflow
// (x up to ln(FLT_MAX)) stay finite and those below the normal range come out as denormals.
[[gnu::always_inline]] inline F8 exp8(F8 x) {
  // ln(FLT_MAX), and the x below which exp(x) rounds to 0.
  const F8 kHi = splat(88.72283935546875f), kLo = splat(-103.97208404541015625f);
  const I8 nan = x != x, overflow = x > kHi, underflow = x < kLo;
  F8 v = select(overflow, kHi, select(underflow, kLo, x));
  // Round to nearest by adding and removing 1.5 * 2^23 (|v / ln2| < 2^22 here).
  const F8 kRound = splat(12582912.0f);
  const F8 n = (v * splat(1.44269504088896341f) + kRound) - kRound;
  v = v - n * splat(0.693359375f);
  v = v - n * splat(-2.12194440e-4f);
  F8 p = splat(1.9875691500E-4f);
  p = p * v + splat(1.3981999507E-3f);
  p = p * v + splat(8.3334519073E-3f);
  p = p * v + splat(4.1665795894E-2f);
  p = p * v + splat(1.6666665459E-1f);
  p = p * v + splat(5.0000001201E-1f);
  p = p * (v * v) + v + splat(1.0f);
  const I8 ni = __builtin_convertvector(n, I8);
  const I8 half = ni >> 1;
  const I8 scale1 = (half + 127) << 23, scale2 = (ni - half + 127) << 23;
  F8 r = (p * (F8)scale1) * (F8)scale2;
  r = select(underflow, F8{}, r);
  r = select(overflow, splat(std::numeric_limits<float>::infinity()), r);
  return select(nan, x, r);
}

// erf(x), within 3 ulp near 0 and 2e-7 absolute elsewhere (PyTorch's own vectorised erf is
// within ~1.5e-7). Two branches, both computed and one picked per lane:
// - |x| < 1: erf(x) = x * P(x^2), P of degree 5 fitted (least squares at Chebyshev nodes, in
//   double) to erf(x) / x on [0, 1], so small arguments keep their relative precision;
// - 1 <= |x|: erf(x) = sign(x) * (1 - exp(-x^2) * Q(1/|x|)), Q of degree 7 fitted to
//   erfc(x) * exp(x^2) on [1, 4]; |x| is clamped to 4, beyond which erf rounds to +-1 in float.
// NaN comes back as NaN; +-inf as +-1.
[[gnu::always_inline]] inline F8 erf8(F8 x) {
  const F8 t = x * x;
  F8 p = splat(-5.654105859845275e-4f);
  p = p * t + splat(4.923277665237955e-3f);
  p = p * t + splat(-2.6716385096654905e-2f);
  p = p * t + splat(1.1280364408033189e-1f);
  p = p * t + splat(-3.7612349784541477e-1f);
  p = p * t + splat(1.1283791273927468f);
  const F8 small = x * p;

  const I8 sign = (I8)x & splat_i(INT32_MIN);
  const F8 a = (F8)((I8)x & ~splat_i(INT32_MIN));
  const F8 ac = select(a > splat(4.0f), splat(4.0f), select(a < splat(1.0f), splat(1.0f), a));
  const F8 u = splat(1.0f) / ac;
  F8 q = splat(-1.8135669147583237e-2f);
  q = q * u + splat(1.220097755426483e-1f);
  q = q * u + splat(-3.567149961619737e-1f);
  q = q * u + splat(5.78234899959734e-1f);
  q = q * u + splat(-5.072547916113188e-1f);
  q = q * u + splat(5.141485684966891e-2f);
  q = q * u + splat(5.576755451705381e-1f);
  q = q * u + splat(3.53974457258207e-4f);
  const F8 large = (F8)((I8)(splat(1.0f) - exp8(-(ac * ac)) * q) | sign);

  const I8 nan = x != x;
  return select(nan, x, select(a < splat(1.0f), small, large));
}

[[gnu::always_inline]] inline F8 load(const float* p) {
  F8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, F8 v) { std::memcpy(p, &v, sizeof v); }

// Runs f over [0, n) eight lanes at a time; the tail goes through a padded block.
template <typename F>
[[gnu::always_inline]] inline void map8(const float* x, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(out + i, f(load(x + i)));
  if (i < n) {
    float in[kLanes] = {}, res[kLanes];
    std::memcpy(in, x + i, (n - i) * sizeof(float));
    store(res, f(load(in)));
    std::memcpy(out + i, res, (n - i) * sizeof(float));
  }
}

}  // namespace

SPLICE_VEC_CLONES void exp_floats(const float* x, float* out, int64_t n) {
  map8(x, out, n, [](F8 v) SPLICE_VEC_INLINE { return exp8(v); });
}

SPLICE_VEC_CLONES void sigmoid_floats(const float* x, float* out, int64_t n) {
  map8(x, out, n, [](F8 v) SPLICE_VEC_INLINE { return splat(1.0f) / (splat(1.0f) + exp8(-v)); });
}

SPLICE_VEC_CLONES void silu_floats(const float* x, float* out, int64_t n) {
  map8(x, out, n, [](F8 v) SPLICE_VEC_INLINE { return v / (splat(1.0f) + exp8(-v)); });
}

SPLICE_VEC_CLONES void erf_floats(const float* x, float* out, int64_t n) {
  map8(x, out, n, [](F8 v) SPLICE_VEC_INLINE { return erf8(v); });
}

SPLICE_VEC_CLONES void gelu_floats(const float* x, float* out, int64_t n) {
  // The operation order of PyTorch's gelu: x * 0.5 * (1 + erf(x * sqrt(1/2))).
  map8(x, out, n, [](F8 v) SPLICE_VEC_INLINE {
    return v * splat(0.5f) * (splat(1.0f) + erf8(v * splat(static_cast<float>(M_SQRT1_2))));
  });
}

SPLICE_VEC_CLONES double exp_shifted_sum(const float* x, float shift, float* out, int64_t n) {
  const F8 s = splat(shift);
  F8 acc{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const F8 e = exp8(load(x + i) - s);
    store(out + i, e);
    acc += e;
  }
  // Lanes summed in float (8 partial sums of at most n / 8 terms each), then in double.
  double sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += acc[l];
  for (; i < n; ++i) {
    const float e = exp8(splat(x[i] - shift))[0];
    out[i] = e;
    sum += e;
  }
  return sum;
}

SPLICE_VEC_CLONES float max_floats(const float* x, int64_t n) {
  F8 best = splat(-std::numeric_limits<float>::infinity());
  I8 nan{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const F8 v = load(x + i);
    nan |= v != v;
    best = select(v > best, v, best);
  }
  float m = best[0];
  bool any_nan = false;
  for (int l = 0; l < kLanes; ++l) {
    any_nan = any_nan || nan[l] != 0;
    if (best[l] > m) m = best[l];
  }
  for (; i < n; ++i) {
    any_nan = any_nan || x[i] != x[i];
    if (x[i] > m) m = x[i];
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

SPLICE_VEC_CLONES RowMoments layer_norm_row(const float* x, float* y, int64_t n, const float* w,
                                            const float* b, float eps) {
  // Each F8 is widened into two D4 halves: the sums keep double precision (as the scalar
  // kernel's), four independent lanes apiece so the adds pipeline.
  auto widen = [](F8 v, D4& lo, D4& hi) SPLICE_VEC_INLINE {
    lo = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), D4);
    hi = __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), D4);
  };
  D4 s0{}, s1{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    D4 lo, hi;
    widen(load(x + i), lo, hi);
    s0 += lo;
    s1 += hi;
  }
  double sum = 0;
  for (int l = 0; l < 4; ++l) sum += s0[l] + s1[l];
  for (int64_t j = i; j < n; ++j) sum += x[j];
  const double mean_d = sum / static_cast<double>(n);

  const D4 m4 = D4{} + mean_d;
  D4 q0{}, q1{};
  for (i = 0; i + kLanes <= n; i += kLanes) {
    D4 lo, hi;
    widen(load(x + i), lo, hi);
    lo -= m4;
    hi -= m4;
    q0 += lo * lo;
    q1 += hi * hi;
  }
  double ss = 0;
  for (int l = 0; l < 4; ++l) ss += q0[l] + q1[l];
  for (int64_t j = i; j < n; ++j) {
    const double dev = x[j] - mean_d;
    ss += dev * dev;
  }
  const float mean = static_cast<float>(mean_d);
  const float var = static_cast<float>(ss / static_cast<double>(n));
  const float rstd = 1.0f / std::sqrt(std::max(var, 0.0f) + eps);
  const float shift = -rstd * mean;

  const F8 r8 = splat(rstd), sh8 = splat(shift);
  for (i = 0; i + kLanes <= n; i += kLanes) {
    F8 v = load(x + i) * r8 + sh8;
    if (w) v *= load(w + i);
    if (b) v += load(b + i);
    store(y + i, v);
  }
  for (; i < n; ++i) {
    float v = x[i] * rstd + shift;
    if (w) v *= w[i];
    if (b) v += b[i];
    y[i] = v;
  }
  return {mean, rstd};
}

}  // namespace splice::cpu
