// Vectorised float loops (see vec_math.h).
#include "backends/cpu/vec_math.h"

#include <cstring>
#include <limits>

namespace splice::cpu {

namespace {

// Eight lanes: one AVX register, two SSE ones.
using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));
constexpr int kLanes = 8;

// Each public function is compiled for AVX-512, AVX2+FMA and baseline x86-64 with GCC's
// function multi-versioning (an ifunc resolved once, at load); elsewhere it is one version.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define SPLICE_VEC_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SPLICE_VEC_CLONES
#endif

[[gnu::always_inline]] inline F8 splat(float v) { return F8{} + v; }

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
  map8(x, out, n, [](F8 v) { return exp8(v); });
}

SPLICE_VEC_CLONES void sigmoid_floats(const float* x, float* out, int64_t n) {
  map8(x, out, n, [](F8 v) { return splat(1.0f) / (splat(1.0f) + exp8(-v)); });
}

SPLICE_VEC_CLONES void silu_floats(const float* x, float* out, int64_t n) {
  map8(x, out, n, [](F8 v) { return v / (splat(1.0f) + exp8(-v)); });
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

}  // namespace splice::cpu
