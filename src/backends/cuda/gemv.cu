// The GEMV / skinny-GEMM kernels of gemv.h. Every block computes one tile of output columns
// (weight rows) for all M rows of x over its split of k, accumulating in float; the tile's
// sums go through shared memory to a common epilogue that either stores them (alpha, bias,
// one rounding) or, when k is split, writes float partials and lets the tile's last block sum
// them in split order.
#include <cuda_runtime.h>

#include "backends/cuda/dependent_launch.cuh"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/gemv.h"

namespace splice::cuda {

namespace {

constexpr int kWarps = kGemvThreads / 32;

struct GemvParams {
  const void* x;
  const void* w;
  void* out;
  const void* bias;
  float* partials;     // [splits, m, n] floats when split
  unsigned* counters;  // one per tile when split
  int64_t m, n, k;
  int64_t x_rs, x_cs, w_ns, w_ks, o_rs, o_cs, bias_s;
  int64_t k_per_split;
  int64_t splits;
  int rows_per_block;
  float alpha, beta;
};

// 16 bytes of the weight, read once: not kept in L1 (the weight is streamed; x stays there).
__device__ __forceinline__ uint4 load_stream16(const void* p) {
#ifdef __CUDA_ARCH__
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
#else
  return *static_cast<const uint4*>(p);
#endif
}

__device__ __forceinline__ uint4 load16(const void* p) { return *static_cast<const uint4*>(p); }

// The V elements of a 16-byte vector as floats.
template <typename T, int V>
__device__ __forceinline__ void unpack(const uint4& raw, float (&f)[V]) {
  const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < V; ++i) f[i] = convert<float, T>(e[i]);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
__device__ __forceinline__ void store_out(const GemvParams& p, int64_t m, int64_t n, float sum) {
  float v = sum * p.alpha;
  if (p.bias) v += p.beta * convert<float, T>(static_cast<const T*>(p.bias)[n * p.bias_s]);
  static_cast<T*>(p.out)[m * p.o_rs + n * p.o_cs] = convert<T, float>(v);
}

// The common epilogue: tile[m][j] holds this block's sums for output column n0 + j. Every
// thread of the block calls it (it synchronises).
template <typename T, int MT, int TILE>
__device__ void finish_tile(const GemvParams& p, float (*tile)[TILE], int64_t n0, int tile_n) {
  const int tid = threadIdx.x;
  const int64_t total = p.m * tile_n;
  if (p.splits == 1) {
    for (int64_t idx = tid; idx < total; idx += kGemvThreads) {
      const int64_t m = idx / tile_n, j = idx % tile_n;
      if (n0 + j < p.n) store_out<T>(p, m, n0 + j, tile[m][j]);
    }
    return;
  }
  float* mine = p.partials + static_cast<int64_t>(blockIdx.y) * p.m * p.n;
  for (int64_t idx = tid; idx < total; idx += kGemvThreads) {
    const int64_t m = idx / tile_n, j = idx % tile_n;
    if (n0 + j < p.n) mine[m * p.n + n0 + j] = tile[m][j];
  }
  // Partials visible device-wide before this block's arrival is counted.
  __threadfence();
  __syncthreads();
  __shared__ int last;
  if (tid == 0) {
    const unsigned arrived = atomicAdd(&p.counters[blockIdx.x], 1u);
    last = arrived == static_cast<unsigned>(p.splits - 1);
    if (last) p.counters[blockIdx.x] = 0;  // every split has arrived: ready for the next launch
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int64_t idx = tid; idx < total; idx += kGemvThreads) {
    const int64_t m = idx / tile_n, j = idx % tile_n;
    if (n0 + j >= p.n) continue;
    float sum = 0.0f;
    // In split order, whichever block came last: the result does not depend on timing. L2
    // reads (__ldcg): the other blocks wrote these from other multiprocessors.
    for (int64_t s = 0; s < p.splits; ++s) sum += __ldcg(p.partials + (s * p.m + m) * p.n + n0 + j);
    store_out<T>(p, m, n0 + j, sum);
  }
}

// kRows (VEC) and kStrided (!VEC): a block holds rows_per_block weight rows; the 8 /
// rows_per_block warps of a row split its k range, lanes stride over k (VEC: 16 bytes each).
template <typename T, int MT, bool VEC>
__global__ void __launch_bounds__(kGemvThreads) gemv_rows_kernel(GemvParams p) {
  constexpr int V = VEC ? 16 / static_cast<int>(sizeof(T)) : 1;
  constexpr int kUnroll = 4;  // independent weight loads in flight per lane
  __shared__ float red[kWarps][MT];
  __shared__ float tile[MT][kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int rpb = p.rows_per_block;
  const int per_row = kWarps / rpb;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * rpb + warp / per_row;
  const int sub = warp % per_row;
  const int64_t k0 = static_cast<int64_t>(blockIdx.y) * p.k_per_split;
  const int64_t k1 = min(p.k, k0 + p.k_per_split);
  const T* x = static_cast<const T*>(p.x);
  // The row's lines into L2 while the kernel before this one drains (dependent_launch.h).
  if (VEC && n < p.n) {
    const char* wrow = static_cast<const char*>(p.w) + n * p.w_ns * sizeof(T);
    for (int64_t b = k0 * sizeof(T) + (sub * 32 + lane) * 128; b < k1 * int64_t{sizeof(T)};
         b += per_row * 32 * 128)
      prefetch_l2(wrow + b);
  }
  dependent_start();
  float acc[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) acc[m] = 0.0f;
  if (n < p.n) {
    const T* wrow = static_cast<const T*>(p.w) + n * p.w_ns;
    const int64_t step = static_cast<int64_t>(per_row) * 32 * V;
    int64_t kk = k0 + static_cast<int64_t>(sub * 32 + lane) * V;
    if constexpr (VEC) {
      for (; kk + (kUnroll - 1) * step < k1; kk += kUnroll * step) {
        uint4 raw[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) raw[u] = load_stream16(wrow + kk + u * step);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          float wf[V];
          unpack<T, V>(raw[u], wf);
#pragma unroll
          for (int m = 0; m < MT; ++m) {
            if (m >= p.m) break;
            float xf[V];
            unpack<T, V>(load16(x + m * p.x_rs + kk + u * step), xf);
#pragma unroll
            for (int i = 0; i < V; ++i) acc[m] = fmaf(xf[i], wf[i], acc[m]);
          }
        }
      }
      for (; kk < k1; kk += step) {
        float wf[V];
        unpack<T, V>(load_stream16(wrow + kk), wf);
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m >= p.m) break;
          float xf[V];
          unpack<T, V>(load16(x + m * p.x_rs + kk), xf);
#pragma unroll
          for (int i = 0; i < V; ++i) acc[m] = fmaf(xf[i], wf[i], acc[m]);
        }
      }
    } else {
      for (; kk < k1; kk += step) {
        const float wf = convert<float, T>(wrow[kk * p.w_ks]);
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m >= p.m) break;
          acc[m] = fmaf(convert<float, T>(x[m * p.x_rs + kk * p.x_cs]), wf, acc[m]);
        }
      }
    }
  }
  // Every thread takes part in the shuffles and barriers (no early return above).
#pragma unroll
  for (int m = 0; m < MT; ++m) acc[m] = warp_sum(acc[m]);
  if (lane == 0) {
#pragma unroll
    for (int m = 0; m < MT; ++m) red[warp][m] = acc[m];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < MT * rpb; idx += kGemvThreads) {
    const int m = idx / rpb, j = idx % rpb;
    float s = 0.0f;
    for (int q = 0; q < per_row; ++q) s += red[j * per_row + q][m];
    tile[m][j] = s;
  }
  __syncthreads();
  finish_tile<T, MT, kWarps>(p, tile, static_cast<int64_t>(blockIdx.x) * rpb, rpb);
}

// kCols: a block holds 32 x 16 bytes of consecutive output columns, each lane 16 bytes of
// them; the 8 warps split the block's k range (warp w takes k = k0 + w, k0 + w + 8, ...).
template <typename T, int MT>
__global__ void __launch_bounds__(kGemvThreads) gemv_cols_kernel(GemvParams p) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));
  constexpr int kTile = 32 * V;
  constexpr int kUnroll = 4;
  __shared__ float red[kWarps][kTile];
  __shared__ float tile[MT][kTile];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t c = n0 + lane * V;  // n % V == 0: a lane's V columns are all in range or none
  const int64_t k0 = static_cast<int64_t>(blockIdx.y) * p.k_per_split;
  const int64_t k1 = min(p.k, k0 + p.k_per_split);
  const T* x = static_cast<const T*>(p.x);
  const T* w = static_cast<const T*>(p.w);
  // The block's 512 bytes of each of its warp's weight rows into L2 (a line per 8 lanes) while
  // the kernel before this one drains (dependent_launch.h).
  if (c < p.n && lane % 8 == 0) {
    for (int64_t kk = k0 + warp; kk < k1; kk += kWarps) prefetch_l2(w + kk * p.w_ks + c);
  }
  dependent_start();
  float acc[MT][V];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < V; ++i) acc[m][i] = 0.0f;
  if (c < p.n) {
    int64_t kk = k0 + warp;
    for (; kk + (kUnroll - 1) * kWarps < k1; kk += kUnroll * kWarps) {
      uint4 raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) raw[u] = load_stream16(w + (kk + u * kWarps) * p.w_ks + c);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        float wf[V];
        unpack<T, V>(raw[u], wf);
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m >= p.m) break;
          const float xf = convert<float, T>(x[m * p.x_rs + (kk + u * kWarps) * p.x_cs]);
#pragma unroll
          for (int i = 0; i < V; ++i) acc[m][i] = fmaf(xf, wf[i], acc[m][i]);
        }
      }
    }
    for (; kk < k1; kk += kWarps) {
      float wf[V];
      unpack<T, V>(load_stream16(w + kk * p.w_ks + c), wf);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m >= p.m) break;
        const float xf = convert<float, T>(x[m * p.x_rs + kk * p.x_cs]);
#pragma unroll
        for (int i = 0; i < V; ++i) acc[m][i] = fmaf(xf, wf[i], acc[m][i]);
      }
    }
  }
  // The warps' sums per row of x, in warp order.
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    if (m >= p.m) break;  // uniform over the block
#pragma unroll
    for (int i = 0; i < V; ++i) red[warp][lane * V + i] = acc[m][i];
    __syncthreads();
    for (int j = threadIdx.x; j < kTile; j += kGemvThreads) {
      float s = 0.0f;
      for (int q = 0; q < kWarps; ++q) s += red[q][j];
      tile[m][j] = s;
    }
    __syncthreads();
  }
  finish_tile<T, MT, kTile>(p, tile, n0, kTile);
}

template <typename T, int MT, bool VEC>
cudaError_t launch_rows(dim3 grid, const GemvParams& p, cudaStream_t stream) {
  return launch_dependent(gemv_rows_kernel<T, MT, VEC>, grid, dim3(kGemvThreads), 0, stream, p);
}

template <typename T, int MT>
cudaError_t launch_cols(dim3 grid, const GemvParams& p, cudaStream_t stream) {
  return launch_dependent(gemv_cols_kernel<T, MT>, grid, dim3(kGemvThreads), 0, stream, p);
}

template <typename T, int MT>
cudaError_t launch_tile(GemvLayout layout, dim3 grid, const GemvParams& p, cudaStream_t stream) {
  if (layout == GemvLayout::kRows) return launch_rows<T, MT, true>(grid, p, stream);
  return launch_cols<T, MT>(grid, p, stream);
}

template <typename T>
cudaError_t launch_typed(const GemvLaunch& l, dim3 grid, const GemvParams& p, cudaStream_t stream) {
  if (l.layout == GemvLayout::kStrided) return launch_rows<T, kGemvMaxRows, false>(grid, p, stream);
  switch (l.row_tile) {
    case 1:
      return launch_tile<T, 1>(l.layout, grid, p, stream);
    case 2:
      return launch_tile<T, 2>(l.layout, grid, p, stream);
    case 4:
      return launch_tile<T, 4>(l.layout, grid, p, stream);
    case 8:
      return launch_tile<T, 8>(l.layout, grid, p, stream);
    default:
      return launch_tile<T, kGemvMaxRows>(l.layout, grid, p, stream);
  }
}

}  // namespace

cudaError_t gemv_launch(const GemvArgs& a, const GemvLaunch& l, float* partials, unsigned* counters,
                        cudaStream_t stream) {
  GemvParams p{};
  p.x = a.x;
  p.w = a.w;
  p.out = a.out;
  p.bias = a.bias;
  p.partials = partials;
  p.counters = counters;
  p.m = a.m;
  p.n = a.n;
  p.k = a.k;
  p.x_rs = a.x_rs;
  p.x_cs = a.x_cs;
  p.w_ns = a.w_ns;
  p.w_ks = a.w_ks;
  p.o_rs = a.o_rs;
  p.o_cs = a.o_cs;
  p.bias_s = a.bias_s;
  p.k_per_split = l.k_per_split;
  p.splits = l.splits;
  p.rows_per_block = l.rows_per_block;
  p.alpha = a.alpha;
  p.beta = a.beta;
  const dim3 grid(static_cast<unsigned>(l.tiles), static_cast<unsigned>(l.splits));
  switch (a.dtype) {
    case DType::kFloat16:
      return launch_typed<__half>(l, grid, p, stream);
    case DType::kBFloat16:
      return launch_typed<__nv_bfloat16>(l, grid, p, stream);
    case DType::kFloat32:
      return launch_typed<float>(l, grid, p, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace splice::cuda
