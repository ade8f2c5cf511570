// Host emulation of the CUDA constructs in splice's .cu kernels: each block's threads run as
// std::threads (so __syncthreads and __shared__ work), blocks one after another.
#pragma once
#include <cuda_runtime_api.h>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
#include "tensor/half.h"
struct EmuDim {
  unsigned x = 0, y = 1, z = 1;
};
inline thread_local EmuDim blockIdx, threadIdx;
inline EmuDim blockDim, gridDim;
inline std::barrier<>* g_barrier = nullptr;
inline void __syncthreads() { g_barrier->arrive_and_wait(); }
inline void emu_launch(unsigned blocks, unsigned threads, const std::function<void()>& body,
                       bool barrier = false) {
  gridDim.x = blocks;
  blockDim.x = threads;
  if (!barrier) {
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < threads; ++t) {
        blockIdx.x = b;
        threadIdx.x = t;
        body();
      }
    return;
  }
  for (unsigned b = 0; b < blocks; ++b) {
    std::barrier<> bar(threads);
    g_barrier = &bar;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&, b, t] {
        blockIdx.x = b;
        threadIdx.x = t;
        body();
        // A thread done with the kernel stops counting at later barriers: a warp whose rows
        // ran out leaves while the other warps of its block still reduce.
        g_barrier->arrive_and_drop();
      });
    for (auto& t : ts) t.join();
  }
}
// A warp shuffle among a block's threads (run with real threads): every thread posts its word,
// then reads its partner's. All threads of a warp take part in the same shuffles, as on a GPU.
inline uint32_t g_shfl_words[1024];
inline uint32_t __shfl_xor_sync(unsigned, uint32_t v, int mask, int width = 32) {
  g_shfl_words[threadIdx.x] = v;
  g_barrier->arrive_and_wait();
  const unsigned lane = threadIdx.x % static_cast<unsigned>(width);
  const uint32_t r = g_shfl_words[threadIdx.x - lane + (lane ^ static_cast<unsigned>(mask))];
  g_barrier->arrive_and_wait();
  return r;
}
using std::isnan;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(x)
#define __shared__ static
template <typename T>
T atomicCAS(T* p, T cmp, T v) {
  std::atomic_ref<T> a(*p);
  a.compare_exchange_strong(cmp, v);
  return cmp;
}
template <typename T>
T atomicMax(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <typename T>
T atomicMin(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old > v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
struct __half {
  uint16_t x;
};
struct __nv_bfloat16 {
  uint16_t x;
};
inline float __half2float(__half h) { return splice::half_bits_to_float(h.x); }
inline __half __float2half_rn(float f) { return {splice::float_to_half_bits(f)}; }
inline float __bfloat162float(__nv_bfloat16 h) { return splice::bfloat16_bits_to_float(h.x); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return {splice::float_to_bfloat16_bits(f)}; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
