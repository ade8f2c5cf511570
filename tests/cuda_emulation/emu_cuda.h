// Host emulation of the CUDA constructs in splice's .cu kernels: each block's threads run as
// std::threads (so __syncthreads and __shared__ work), blocks one after another.
#pragma once
#include <cuda_runtime_api.h>
#include <algorithm>
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
// Barrier kernels: a barrier per warp for the shuffles, an exchange slot per thread, and the
// block's dynamic shared memory (extern __shared__ arrays, rewritten by prepare_cu.py).
inline std::vector<std::unique_ptr<std::barrier<>>> g_warp_barriers;
inline std::vector<uint64_t> g_shfl_slots;
inline std::vector<unsigned char> g_dynamic_smem;
inline unsigned char* emu_dynamic_smem() { return g_dynamic_smem.data(); }
template <typename T>
T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
  static_assert(sizeof(T) <= 8);
  const unsigned t = threadIdx.x, warp = t / 32, lane = t % 32;
  std::barrier<>& bar = *g_warp_barriers[warp];
  std::memcpy(&g_shfl_slots[t], &v, sizeof(T));
  bar.arrive_and_wait();
  unsigned src = lane ^ static_cast<unsigned>(mask);
  if (src / width != lane / width) src = lane;
  T out;
  std::memcpy(&out, &g_shfl_slots[warp * 32 + src], sizeof(T));
  bar.arrive_and_wait();
  return out;
}
// The warp's own barrier (every lane of the warp reaches it, as the shuffles need).
inline void __syncwarp(unsigned = 0xffffffffu) {
  g_warp_barriers[threadIdx.x / 32]->arrive_and_wait();
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <typename T>
T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <typename T>
T atomicExch(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}
template <typename T>
T __ldcg(const T* p) {
  return *p;
}
// Blocks of a 2-D grid (x fastest), as the hardware numbers them; barrier: every thread of a
// block is a thread (for __syncthreads, __shared__ exchanges and warp shuffles), with `smem`
// bytes of dynamic shared memory.
inline void emu_launch(dim3 grid, unsigned threads, const std::function<void()>& body,
                       bool barrier = false, size_t smem = 0) {
  gridDim.x = grid.x;
  gridDim.y = grid.y;
  blockDim.x = threads;
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      if (!barrier) {
        for (unsigned t = 0; t < threads; ++t) {
          blockIdx.x = bx;
          blockIdx.y = by;
          threadIdx.x = t;
          body();
        }
        continue;
      }
      g_warp_barriers.clear();
      for (unsigned w = 0; w < (threads + 31) / 32; ++w)
        g_warp_barriers.push_back(
            std::make_unique<std::barrier<>>(std::min(32u, threads - w * 32)));
      g_shfl_slots.assign(threads, 0);
      std::barrier<> bar(threads);
      g_barrier = &bar;
      // Poisoned, as a GPU's shared memory is not zeroed.
      g_dynamic_smem.assign(smem, 0xa5);
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, bx, by, t] {
          blockIdx.x = bx;
          blockIdx.y = by;
          threadIdx.x = t;
          body();
          // A thread done with the kernel stops counting at later barriers: a warp whose rows
          // ran out leaves while the other warps of its block still reduce.
          g_barrier->arrive_and_drop();
        });
      for (auto& t : ts) t.join();
    }
}
inline void emu_launch(unsigned blocks, unsigned threads, const std::function<void()>& body,
                       bool barrier = false, size_t smem = 0) {
  emu_launch(dim3(blocks, 1, 1), threads, body, barrier, smem);
}
inline int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }
using std::isfinite;
using std::isinf;
using std::isnan;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
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
