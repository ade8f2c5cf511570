// Host emulation of the CUDA built-ins the generated pointwise kernels use (one thread at a
// time: they need no barriers).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include "emu_builtins.h"
#include "tensor/half.h"
struct EmuDim {
  unsigned x = 0, y = 0, z = 0;
};
inline EmuDim blockIdx, threadIdx, blockDim, gridDim;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long cmp,
                                    unsigned long long v) {
  const unsigned long long old = *p;
  if (old == cmp) *p = v;
  return old;
}
inline float erfinvf(float) { return 0; }
inline double erfinv(double) { return 0; }
using std::isfinite;
using std::isinf;
using std::isnan;
