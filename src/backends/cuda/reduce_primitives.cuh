#pragma once
// Warp- and block-level reduction building blocks shared by the reduction, normalisation,
// softmax, scan and attention kernels. They work on any trivially copyable accumulator whose
// size is a multiple of 4 bytes (a struct of a value and an index, a Welford triple), moved
// across lanes word by word, and any associative `combine`.
//
// Every lane of the warp must call the warp functions (full mask); block functions must be
// reached by every thread of the block (they contain __syncthreads).

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace splice::cuda {

inline constexpr int kWarpSize = 32;

// __shfl_down_sync / __shfl_xor_sync for any 4-byte-multiple trivially copyable type.
template <typename T>
__device__ __forceinline__ T shfl_down_any(T v, int delta, int width = kWarpSize) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0,
                "shuffled accumulators must be trivially copyable and 4-byte multiples");
  constexpr int kWords = sizeof(T) / 4;
  uint32_t words[kWords];
  memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_down_sync(0xffffffffu, words[i], delta, width);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

template <typename T>
__device__ __forceinline__ T shfl_xor_any(T v, int mask, int width = kWarpSize) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0,
                "shuffled accumulators must be trivially copyable and 4-byte multiples");
  constexpr int kWords = sizeof(T) / 4;
  uint32_t words[kWords];
  memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_xor_sync(0xffffffffu, words[i], mask, width);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

template <typename T>
__device__ __forceinline__ T shfl_any(T v, int src_lane, int width = kWarpSize) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0,
                "shuffled accumulators must be trivially copyable and 4-byte multiples");
  constexpr int kWords = sizeof(T) / 4;
  uint32_t words[kWords];
  memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_sync(0xffffffffu, words[i], src_lane, width);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

template <typename T>
__device__ __forceinline__ T shfl_up_any(T v, int delta, int width = kWarpSize) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0,
                "shuffled accumulators must be trivially copyable and 4-byte multiples");
  constexpr int kWords = sizeof(T) / 4;
  uint32_t words[kWords];
  memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_up_sync(0xffffffffu, words[i], delta, width);
  T out;
  memcpy(&out, words, sizeof(T));
  return out;
}

// Inclusive scan of v over the warp (lane i gets v_0 + ... + v_i under `combine`).
template <typename T, typename Combine>
__device__ __forceinline__ T warp_inclusive_scan(T v, Combine combine) {
  const int lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const T up = shfl_up_any(v, offset);
    if (lane >= offset) v = combine(up, v);
  }
  return v;
}

// Reduces v over each aligned segment of `width` lanes (a power of two <= 32); the segment's
// first lane holds the result (other lanes hold partial values).
template <typename T, typename Combine>
__device__ __forceinline__ T segment_reduce(T v, int width, Combine combine) {
  for (int offset = width / 2; offset > 0; offset /= 2)
    v = combine(v, shfl_down_any(v, offset, width));
  return v;
}

// Reduces v over the whole warp; every lane gets the result (butterfly).
template <typename T, typename Combine>
__device__ __forceinline__ T warp_allreduce(T v, Combine combine) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask /= 2) v = combine(v, shfl_xor_any(v, mask));
  return v;
}

// Reduces v over all threads of a 1-D block (blockDim.x a multiple of 32, at most 1024);
// every thread gets the result. `smem` holds at least 32 T. The leading barrier lets callers
// reuse smem between calls.
template <typename T, typename Combine>
__device__ __forceinline__ T block_allreduce(T v, T* smem, Combine combine) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  v = warp_allreduce(v, combine);
  __syncthreads();  // smem may still be read by a previous call
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  T r = smem[0];
  for (int w = 1; w < warps; ++w) r = combine(r, smem[w]);
  return r;
}

}  // namespace splice::cuda
