// The CUDA-core attention kernel, the split combiner and the logsumexp padding (see
// attention.h). A block takes 8 query rows of one unit (a warp each) and walks the unit's keys
// (of its split) in tiles of up to 32 staged in shared memory, so the 8 rows — the q heads of a
// KV group — read each K/V element from global memory once. A warp keeps its q row in shared
// memory and its share of the output accumulator in registers (lane e holds elements e,
// e + 32, ...); each lane scores one key of the tile, and the online softmax moves once per
// tile (warp-uniform: the tile's max and sum are all-reduces).
#include <cuda_runtime.h>

#include <limits>

#include "backends/cuda/attention_common.cuh"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/reduce_primitives.cuh"

namespace splice::cuda {

namespace {

template <typename T, typename A, int kMaxE>
__global__ void __launch_bounds__(kSimtWarps * 32)
    attention_simt_kernel(AttnParams p, int64_t key_tile) {
  constexpr int kPerLane = kMaxE / kWarpSize;
  constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  extern __shared__ __align__(16) unsigned char attn_simt_smem_bytes[];
  const AttnSimtSmem lay = attn_simt_smem(p.E, p.Ev, sizeof(T), sizeof(A), key_tile, kSimtWarps);
  T* ks = reinterpret_cast<T*>(attn_simt_smem_bytes);          // key_tile x k_row
  T* vs = reinterpret_cast<T*>(attn_simt_smem_bytes + lay.v);  // key_tile x Ev
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  A* qs = reinterpret_cast<A*>(attn_simt_smem_bytes + lay.q) + warp * p.E;  // this warp's q row
  const int64_t unit = blockIdx.x / p.tiles_per_unit;
  const int64_t tile = blockIdx.x % p.tiles_per_unit;
  const int64_t split = blockIdx.y;
  int64_t off[kAttnTensors];
  attn_unit_offsets(p, unit, off);
  const int64_t row_begin = tile * kSimtWarps;
  const int64_t row_end = row_begin + kSimtWarps < p.R ? row_begin + kSimtWarps : p.R;
  const int64_t r = row_begin + warp;
  const bool valid = r < p.R;
  const AttnRow row = attn_row(p, off, valid ? r : 0);
  const int64_t key_begin = split * p.split_keys;
  int64_t key_end = key_begin + p.split_keys;
  const int64_t limit = attn_key_limit(p, row_begin, row_end);
  if (key_end > limit) key_end = limit;

  const T* q = static_cast<const T*>(p.q);
  const T* k = static_cast<const T*>(p.k) + off[kAttnK];
  const T* v = static_cast<const T*>(p.v) + off[kAttnV];
  for (int64_t e = lane; e < p.E; e += kWarpSize)
    qs[e] = valid ? convert<A>(q[row.q + e * p.q_es]) : A(0);
  A acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) acc[i] = A(0);
  const A scale = static_cast<A>(p.scale);
  A m = kNegInf, sum = A(0);
  // A tile of up to 32 keys at a time: lane j scores key j (its whole dot product, no
  // reduction across lanes), the warp takes the tile's max once, and then each lane adds the
  // weighted V rows into the output elements it owns (e = lane, lane + 32, ...). Serial work
  // per key is one shuffle, not a 5-step all-reduce and a dependent mask load.
  for (int64_t j0 = key_begin; j0 < key_end; j0 += key_tile) {
    const int64_t nk = key_end - j0 < key_tile ? key_end - j0 : key_tile;
    __syncthreads();  // the previous tile is no longer read
    for (int64_t jj = warp; jj < nk; jj += kSimtWarps) {
      const T* krow = k + (j0 + jj) * p.k_ss;
      const T* vrow = v + (j0 + jj) * p.v_ss;
      for (int64_t e = lane; e < p.E; e += kWarpSize) ks[jj * lay.k_row + e] = krow[e * p.k_es];
      for (int64_t e = lane; e < p.Ev; e += kWarpSize) vs[jj * p.Ev + e] = vrow[e * p.v_es];
    }
    __syncthreads();
    if (!valid) continue;
    A s = kNegInf;
    if (lane < nk) {
      const T* krow = ks + lane * lay.k_row;
      // Four partial sums: independent chains the scheduler can overlap.
      A d0 = A(0), d1 = A(0), d2 = A(0), d3 = A(0);
      int64_t e = 0;
      for (; e + 4 <= p.E; e += 4) {
        d0 += qs[e] * convert<A>(krow[e]);
        d1 += qs[e + 1] * convert<A>(krow[e + 1]);
        d2 += qs[e + 2] * convert<A>(krow[e + 2]);
        d3 += qs[e + 3] * convert<A>(krow[e + 3]);
      }
      for (; e < p.E; ++e) d0 += qs[e] * convert<A>(krow[e]);
      s = attn_masked_score<A>(p, row.mask, row.l, j0 + lane, ((d0 + d1) + (d2 + d3)) * scale);
    }
    // NaN scores must reach the sum (PyTorch's softmax gives a NaN row): fmax would drop them.
    const A tile_max = warp_allreduce(s, [](A a, A b) { return a != a || a > b ? a : b; });
    const A m_new = m != m || m > tile_max ? m : tile_max;
    if (m_new == kNegInf) continue;  // every key so far hidden: nothing to add
    // exp(-inf) = 0 while nothing was seen; exp(inf - inf) = NaN for a +inf score, as
    // PyTorch's softmax makes such a row NaN.
    const A corr = exp(m - m_new);
    const A w = s == kNegInf ? A(0) : exp(s - m_new);
    sum = sum * corr + warp_allreduce(w, [](A a, A b) { return a + b; });
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] *= corr;
    for (int64_t jj = 0; jj < nk; ++jj) {
      const A wj = __shfl_sync(0xffffffffu, w, static_cast<int>(jj));
      const T* vrow = vs + jj * p.Ev;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int64_t e = lane + kWarpSize * i;
        if (e < p.Ev) acc[i] += wj * convert<A>(vrow[e]);
      }
    }
    m = m_new;
  }
  if (!valid) return;
  if (p.splits == 1) {
    // A row that saw no key: output 0 and logsumexp 0 (the CPU flash kernel's rule).
    const A inv = sum == A(0) ? A(0) : A(1) / sum;
    T* out = static_cast<T*>(p.out);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int64_t e = lane + kWarpSize * i;
      if (e < p.Ev) out[row.out + e * p.o_es] = convert<T>(acc[i] * inv);
    }
    if (lane == 0 && p.lse != nullptr)
      p.lse[row.lse] = sum == A(0) ? 0.0f : static_cast<float>(m + log(sum));
  } else {
    const int64_t pr = attn_partial_row(p, split, unit, r);
    A* ml = static_cast<A*>(p.partial_ml);
    A* pacc = static_cast<A*>(p.partial_acc);
    if (lane == 0) {
      ml[pr * 2] = m;
      ml[pr * 2 + 1] = sum;
    }
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int64_t e = lane + kWarpSize * i;
      if (e < p.Ev) pacc[pr * p.Ev + e] = acc[i];
    }
  }
}

// A warp per output row: merges the splits' (max, sum, accumulator) and normalises.
template <typename T, typename A>
__global__ void attention_combine_kernel(AttnParams p) {
  constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  const int warps = blockDim.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const A* ml = static_cast<const A*>(p.partial_ml);
  const A* pacc = static_cast<const A*>(p.partial_acc);
  T* out = static_cast<T*>(p.out);
  const int64_t rows = p.units * p.R;
  for (int64_t gr = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / kWarpSize; gr < rows;
       gr += static_cast<int64_t>(gridDim.x) * warps) {
    const int64_t unit = gr / p.R, r = gr % p.R;
    A big = kNegInf;
    for (int64_t s = 0; s < p.splits; ++s) {
      const int64_t pr = attn_partial_row(p, s, unit, r);
      if (ml[pr * 2 + 1] != A(0)) big = fmax(big, ml[pr * 2]);  // NaN sums count
    }
    A sum = A(0);
    for (int64_t s = 0; s < p.splits; ++s) {
      const int64_t pr = attn_partial_row(p, s, unit, r);
      if (ml[pr * 2 + 1] != A(0)) sum += ml[pr * 2 + 1] * exp(ml[pr * 2] - big);
    }
    int64_t off[kAttnTensors];
    attn_unit_offsets(p, unit, off);
    const AttnRow row = attn_row(p, off, r);
    const A inv = sum == A(0) ? A(0) : A(1) / sum;
    for (int64_t e = lane; e < p.Ev; e += kWarpSize) {
      A acc = A(0);
      for (int64_t s = 0; s < p.splits; ++s) {
        const int64_t pr = attn_partial_row(p, s, unit, r);
        if (ml[pr * 2 + 1] != A(0)) acc += pacc[pr * p.Ev + e] * exp(ml[pr * 2] - big);
      }
      out[row.out + e * p.o_es] = convert<T>(acc * inv);
    }
    if (lane == 0 && p.lse != nullptr)
      p.lse[row.lse] = sum == A(0) ? 0.0f : static_cast<float>(big + log(sum));
  }
}

__global__ void attention_lse_pad_kernel(AttnParams p) {
  const int64_t width = p.lse_width - p.L;
  const int64_t total = p.units * p.G * width;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t w = p.L + i % width;
    const int64_t g = (i / width) % p.G;
    const int64_t unit = i / (width * p.G);
    int64_t off[kAttnTensors];
    attn_unit_offsets(p, unit, off);
    p.lse[off[kAttnLse] + g * p.lse_hs + w * p.lse_ls] = std::numeric_limits<float>::infinity();
  }
}

template <typename F>
Result<void> dispatch_attention_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat16:
      return f(DeviceTypeTag<__half>{});
    case DType::kBFloat16:
      return f(DeviceTypeTag<__nv_bfloat16>{});
    case DType::kFloat32:
      return f(DeviceTypeTag<float>{});
    case DType::kFloat64:
      return f(DeviceTypeTag<double>{});
    default:
      return Error(ErrorKind::kInternal, "attention: not a float dtype");
  }
}

template <typename T, typename A, int kMaxE>
Result<void> launch_simt(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  const auto kernel = attention_simt_kernel<T, A, kMaxE>;
  if (plan.smem_bytes > (48u << 10))
    SPLICE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(plan.smem_bytes)));
  const dim3 grid(static_cast<unsigned>(p.units * p.tiles_per_unit),
                  static_cast<unsigned>(p.splits));
  kernel<<<grid, plan.threads, plan.smem_bytes, stream>>>(p, plan.key_tile);
  SPLICE_CUDA_CHECK(cudaGetLastError());
  return ok_result();
}

}  // namespace

Result<void> launch_attention_simt(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  SPLICE_CHECK_OR_RETURN(p.units * p.tiles_per_unit <= INT32_MAX && p.splits <= 65535,
                         ErrorKind::kShapeMismatch,
                         "scaled_dot_product_attention: {} row blocks exceed the grid limit",
                         p.units * p.tiles_per_unit);
  return dispatch_attention_dtype(p.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    switch (plan.head_dim_bound) {
      case 128:
        return launch_simt<T, A, 128>(plan, stream);
      case 256:
        return launch_simt<T, A, 256>(plan, stream);
      default:
        return launch_simt<T, A, 1024>(plan, stream);
    }
  });
}

Result<void> launch_attention_combine(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  const int64_t rows = p.units * p.R;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((rows + 7) / 8, 1 << 20));
  return dispatch_attention_dtype(p.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    attention_combine_kernel<T, A><<<blocks, 256, 0, stream>>>(p);
    SPLICE_CUDA_CHECK(cudaGetLastError());
    return ok_result();
  });
}

Result<void> launch_attention_lse_pad(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  const int64_t total = p.units * p.G * (p.lse_width - p.L);
  if (total <= 0) return ok_result();
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 1 << 20));
  attention_lse_pad_kernel<<<blocks, 256, 0, stream>>>(p);
  SPLICE_CUDA_CHECK(cudaGetLastError());
  return ok_result();
}

}  // namespace splice::cuda
