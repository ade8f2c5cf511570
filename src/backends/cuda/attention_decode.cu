// The decode attention kernel (flash-decoding; see attention.h): for few query rows per K/V
// matrix (decode, speculative decode) a block takes every row of one unit — all the q heads of
// a KV group — and one split of its keys, so each K/V element is read from global memory once
// per call, by 16-byte loads. K/V tiles go through shared memory; the next tile's loads are
// issued into registers before the current tile is computed, so a block always has a tile in
// flight. Per tile: scores (a thread per (row, key) pair, q in float in shared memory), the
// online softmax in fp32 (a warp per row), and P·V (a thread per (row, 16-byte chunk of V,
// key slice), its accumulator in registers). The key slices reduce through shared memory at the
// end. With several splits each block writes its partials (max, sum, unnormalised output) to
// scratch and counts itself in a per-unit counter; the last block of a unit combines them in
// the same launch and resets the counter to 0, so the launch needs neither a memset nor a
// second kernel, and a CUDA graph can record it.
#include <cuda_runtime.h>

#include <cstring>
#include <limits>

#include "backends/cuda/attention_common.cuh"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/dependent_launch.cuh"
#include "backends/cuda/reduce_primitives.cuh"

namespace splice::cuda {

namespace {

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// The kVec elements of a 16-byte chunk as float.
template <typename T, int kVec>
__device__ __forceinline__ void chunk_to_float(const unsigned char* src, float (&f)[kVec]) {
  T vals[kVec];
  const uint4 raw = *reinterpret_cast<const uint4*>(src);
  memcpy(vals, &raw, sizeof(raw));
#pragma unroll
  for (int i = 0; i < kVec; ++i) f[i] = convert<float>(vals[i]);
}

// Two blocks per SM (at most 128 registers a thread): at one (151 registers, measured with
// Nsight Compute on an H100) a decode step's 256 blocks ran in two waves, each a chain of
// dependent memory round trips with one block's 8 warps to hide them.
template <typename T>
__global__ void __launch_bounds__(kAttnDecodeThreads, 2)
    attention_decode_kernel(AttnParams p, int key_tile) {
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kThreads = kAttnDecodeThreads;
  constexpr int kWarps = kThreads / kWarpSize;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(16) unsigned char attn_decode_smem_raw[];
  __shared__ int attn_decode_last;
  unsigned char* const smem = attn_decode_smem_raw;
  const AttnDecodeSmem lay = attn_decode_smem(p.R, p.E, p.Ev, sizeof(T), key_tile);
  unsigned char* const ks = smem;
  unsigned char* const vs = smem + lay.v;
  float* const qs = reinterpret_cast<float*>(smem + lay.q);
  float* const ss = reinterpret_cast<float*>(smem + lay.s);
  float* const stat = reinterpret_cast<float*>(smem + lay.stat);  // per row: max, sum, corr
  float* const red = reinterpret_cast<float*>(smem + lay.red);

  const int tid = threadIdx.x, warp = tid / kWarpSize, lane = tid % kWarpSize;
  const int64_t unit = blockIdx.x / p.splits, split = blockIdx.x % p.splits;
  int64_t off[kAttnTensors];
  attn_unit_offsets(p, unit, off);
  const unsigned char* const kg =
      reinterpret_cast<const unsigned char*>(static_cast<const T*>(p.k) + off[kAttnK]);
  const unsigned char* const vg =
      reinterpret_cast<const unsigned char*>(static_cast<const T*>(p.v) + off[kAttnV]);
  const int64_t key_begin = split * p.split_keys;
  int64_t key_end = key_begin + p.split_keys;
  const int64_t limit = attn_key_limit(p, 0, p.R);
  if (key_end > limit) key_end = limit;
  const int R = static_cast<int>(p.R), E = static_cast<int>(p.E), Ev = static_cast<int>(p.Ev);
  const int chk = E / kVec, chv = Ev / kVec;
  const int64_t k_row_bytes = p.k_ss * static_cast<int64_t>(sizeof(T));
  const int64_t v_row_bytes = p.v_ss * static_cast<int64_t>(sizeof(T));

  // Tile staging: vector x of a tile is K row x / chk (chunk x % chk) for x < key_tile * chk,
  // then V rows likewise; thread tid moves vectors tid + u * kThreads.
  const int tile_vecs = key_tile * (chk + chv);
  uint4 stage[kAttnDecodeLoads];
  const auto fetch = [&](int64_t j0, int64_t nk) {
#pragma unroll
    for (int u = 0; u < kAttnDecodeLoads; ++u) {
      const int x = tid + u * kThreads;
      if (x >= tile_vecs) break;
      const bool is_k = x < key_tile * chk;
      const int y = is_k ? x : x - key_tile * chk;
      const int ch = is_k ? chk : chv;
      const int64_t row = y / ch;
      if (row >= nk) continue;
      const unsigned char* src =
          (is_k ? kg + (j0 + row) * k_row_bytes : vg + (j0 + row) * v_row_bytes) + (y % ch) * 16;
      stage[u] = *reinterpret_cast<const uint4*>(src);
    }
  };
  const auto store = [&](int64_t nk) {
#pragma unroll
    for (int u = 0; u < kAttnDecodeLoads; ++u) {
      const int x = tid + u * kThreads;
      if (x >= tile_vecs) break;
      const bool is_k = x < key_tile * chk;
      const int y = is_k ? x : x - key_tile * chk;
      const int ch = is_k ? chk : chv;
      const int row = y / ch;
      if (row >= nk) continue;
      unsigned char* dst = (is_k ? ks + row * lay.k_row : vs + row * lay.v_row) + (y % ch) * 16;
      *reinterpret_cast<uint4*>(dst) = stage[u];
    }
  };

  // P·V: thread tid owns chunk pc of row pr's output for keys pks, pks + kslices, ...
  const int pairs = R * chv;
  const int kslices = kThreads / pairs;
  const int pc = tid % chv, pr = (tid / chv) % R, pks = tid / pairs;
  const bool pv_active = pks < kslices;
  float acc[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) acc[i] = 0.0f;
  const float scale = static_cast<float>(p.scale);

  // The split's K and V lines into L2 while the kernel before this one drains
  // (dependent_launch.h); its reads then hit L2.
  const int k_lines = static_cast<int>((E * sizeof(T) + 127) / 128);
  const int v_lines = static_cast<int>((Ev * sizeof(T) + 127) / 128);
  for (int64_t i = tid; i < (key_end - key_begin) * (k_lines + v_lines); i += kThreads) {
    const int64_t row = key_begin + i / (k_lines + v_lines);
    const int line = static_cast<int>(i % (k_lines + v_lines));
    prefetch_l2(line < k_lines ? kg + row * k_row_bytes + line * 128
                               : vg + row * v_row_bytes + (line - k_lines) * 128);
  }
  dependent_start();

  // The first tile's loads go out before q's, so the two memory latencies overlap.
  if (key_begin < key_end) fetch(key_begin, min64(key_tile, key_end - key_begin));
  const T* q = static_cast<const T*>(p.q);
  for (int i = tid; i < R * E; i += kThreads) {
    const AttnRow row = attn_row(p, off, i / E);
    qs[i] = convert<float>(q[row.q + (i % E) * p.q_es]);
  }
  for (int r = tid; r < R; r += kThreads) {
    stat[r * 3] = kNegInf;
    stat[r * 3 + 1] = 0.0f;
    stat[r * 3 + 2] = 1.0f;
  }

  for (int64_t j0 = key_begin; j0 < key_end; j0 += key_tile) {
    const int nk = static_cast<int>(min64(key_tile, key_end - j0));
    store(nk);
    __syncthreads();
    const int64_t jn = j0 + key_tile;
    if (jn < key_end) fetch(jn, min64(key_tile, key_end - jn));

    // Scores of the tile, scaled and masked.
    for (int i = tid; i < R * key_tile; i += kThreads) {
      const int r = i / key_tile, jj = i % key_tile;
      if (jj >= nk) continue;
      const unsigned char* krow = ks + jj * lay.k_row;
      const float* qrow = qs + r * E;
      float dot = 0.0f;
      for (int c = 0; c < chk; ++c) {
        float kf[kVec];
        chunk_to_float<T, kVec>(krow + c * 16, kf);
#pragma unroll
        for (int e = 0; e < kVec; ++e) dot += qrow[c * kVec + e] * kf[e];
      }
      const AttnRow row = attn_row(p, off, r);
      ss[r * key_tile + jj] = attn_masked_score<float>(p, row.mask, row.l, j0 + jj, dot * scale);
    }
    __syncthreads();

    // Online softmax, a warp per row: the tile's max, the correction of what came before, the
    // tile's weights in place of its scores. A hidden key (-inf) weighs 0; a NaN score stays
    // NaN and a +inf one gives exp(inf - inf) = NaN, as PyTorch's softmax does.
    for (int r = warp; r < R; r += kWarps) {
      float* srow = ss + r * key_tile;
      float mx = kNegInf;
      for (int jj = lane; jj < nk; jj += kWarpSize) mx = fmaxf(mx, srow[jj]);
      mx = warp_allreduce(mx, [](float a, float b) { return fmaxf(a, b); });
      const float m_old = stat[r * 3];
      const float m_new = fmaxf(m_old, mx);
      const float corr = m_old == m_new ? 1.0f : expf(m_old - m_new);
      float sum = 0.0f;
      for (int jj = lane; jj < nk; jj += kWarpSize) {
        const float s = srow[jj];
        const float w = s == kNegInf ? 0.0f : expf(s - m_new);
        srow[jj] = w;
        sum += w;
      }
      sum = warp_allreduce(sum, [](float a, float b) { return a + b; });
      // Every lane has read m_old before lane 0 replaces it (the shuffles order the lanes in
      // practice; racecheck wants the warp's own barrier).
      __syncwarp();
      if (lane == 0) {
        stat[r * 3] = m_new;
        stat[r * 3 + 1] = stat[r * 3 + 1] * corr + sum;
        stat[r * 3 + 2] = corr;
      }
    }
    __syncthreads();

    if (pv_active) {
      const float corr = stat[pr * 3 + 2];
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[i] *= corr;
      const float* wrow = ss + pr * key_tile;
      for (int jj = pks; jj < nk; jj += kslices) {
        const float w = wrow[jj];
        float vf[kVec];
        chunk_to_float<T, kVec>(vs + jj * lay.v_row + pc * 16, vf);
#pragma unroll
        for (int i = 0; i < kVec; ++i) acc[i] += w * vf[i];
      }
    }
    __syncthreads();  // the next tile overwrites K, V and the weights
  }

  // Sum the key slices; write the output (one split) or this split's partials.
  if (pv_active) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) red[tid * kVec + i] = acc[i];
  }
  __syncthreads();
  T* out = static_cast<T*>(p.out);
  float* ml = static_cast<float*>(p.partial_ml);
  float* pacc = static_cast<float*>(p.partial_acc);
  for (int i = tid; i < R * Ev; i += kThreads) {
    const int r = i / Ev, e = i % Ev;
    const int base = (r * chv + e / kVec) * kVec + e % kVec;
    float total = 0.0f;
    for (int s = 0; s < kslices; ++s) total += red[s * pairs * kVec + base];
    const float m = stat[r * 3], l = stat[r * 3 + 1];
    if (p.splits == 1) {
      // A row that saw no key: output 0 and logsumexp 0 (the CPU flash kernel's rule).
      const AttnRow row = attn_row(p, off, r);
      const float inv = l == 0.0f ? 0.0f : 1.0f / l;
      out[row.out + e * p.o_es] = convert<T>(total * inv);
      if (e == 0 && p.lse != nullptr) p.lse[row.lse] = l == 0.0f ? 0.0f : m + logf(l);
    } else {
      const int64_t prow = attn_partial_row(p, split, unit, r);
      pacc[prow * Ev + e] = total;
      if (e == 0) {
        ml[prow * 2] = m;
        ml[prow * 2 + 1] = l;
      }
    }
  }
  if (p.splits == 1 || p.counters == nullptr) return;

  // Count this split in; the unit's last block combines (threadFenceReduction's pattern: every
  // writer fences before the count, the last block fences before it reads).
  __threadfence();
  __syncthreads();
  if (tid == 0) {
    const unsigned done = atomicAdd(p.counters + unit, 1u);
    attn_decode_last = done + 1 == static_cast<unsigned>(p.splits);
    if (attn_decode_last) atomicExch(p.counters + unit, 0u);  // ready for the next launch
  }
  __syncthreads();
  if (!attn_decode_last) return;
  __threadfence();
  // The combine, in parallel: a warp per row reads every split's (max, sum) by lane, takes
  // the row's max and each split's weight exp(m - max) into shared memory (the K/V tiles, q and
  // the scores are free now; the plan keeps R x splits floats within them), then each thread
  // sums one output element over the splits with its loads unrolled, so the L2 round trips
  // overlap instead of following one another split by split. A split that saw no key (sum 0)
  // is left out, marked by the weight -1 (a real weight is >= 0 or NaN); a NaN sum counts.
  float* const wts = reinterpret_cast<float*>(smem);
  const int splits = static_cast<int>(p.splits);
  for (int r = warp; r < R; r += kWarps) {
    float big = kNegInf;
    for (int s = lane; s < splits; s += kWarpSize) {
      const int64_t prow = attn_partial_row(p, s, unit, r);
      if (__ldcg(ml + prow * 2 + 1) != 0.0f) big = fmaxf(big, __ldcg(ml + prow * 2));
    }
    big = warp_allreduce(big, [](float a, float b) { return fmaxf(a, b); });
    float sum = 0.0f;
    for (int s = lane; s < splits; s += kWarpSize) {
      const int64_t prow = attn_partial_row(p, s, unit, r);
      const float l = __ldcg(ml + prow * 2 + 1);
      if (l == 0.0f) {
        wts[r * splits + s] = -1.0f;
        continue;
      }
      const float w = expf(__ldcg(ml + prow * 2) - big);
      wts[r * splits + s] = w;
      sum += l * w;
    }
    sum = warp_allreduce(sum, [](float a, float b) { return a + b; });
    if (lane == 0) {
      stat[r * 3] = big;
      stat[r * 3 + 1] = sum;
    }
  }
  __syncthreads();
  const int64_t split_stride = p.units * p.R * Ev;  // between one split's partials and the next
  for (int i = tid; i < R * Ev; i += kThreads) {
    const int r = i / Ev, e = i % Ev;
    const float* w = wts + r * splits;
    const float* src = pacc + attn_partial_row(p, 0, unit, r) * Ev + e;
    float total = 0.0f;
#pragma unroll 8
    for (int s = 0; s < splits; ++s) {
      const float v = __ldcg(src + s * split_stride);
      if (!(w[s] < 0.0f)) total += v * w[s];
    }
    const float big = stat[r * 3], sum = stat[r * 3 + 1];
    const AttnRow row = attn_row(p, off, r);
    const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
    out[row.out + e * p.o_es] = convert<T>(total * inv);
    if (e == 0 && p.lse != nullptr) p.lse[row.lse] = sum == 0.0f ? 0.0f : big + logf(sum);
  }
}

template <typename T>
Result<void> launch_decode(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  if (plan.smem_bytes > (48u << 10))
    SPLICE_CUDA_CHECK(cudaFuncSetAttribute(
        reinterpret_cast<const void*>(&attention_decode_kernel<T>),
        cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(plan.smem_bytes)));
  const unsigned blocks = static_cast<unsigned>(p.units * p.splits);
  SPLICE_CUDA_CHECK(launch_dependent(attention_decode_kernel<T>, dim3(blocks),
                                     dim3(kAttnDecodeThreads), plan.smem_bytes, stream, p,
                                     static_cast<int>(plan.key_tile)));
  return ok_result();
}

}  // namespace

Result<void> launch_attention_decode(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  SPLICE_CHECK_OR_RETURN(p.units * p.splits <= INT32_MAX, ErrorKind::kShapeMismatch,
                         "scaled_dot_product_attention: {} blocks exceed the grid limit",
                         p.units * p.splits);
  switch (p.dtype) {
    case DType::kFloat16:
      return launch_decode<__half>(plan, stream);
    case DType::kBFloat16:
      return launch_decode<__nv_bfloat16>(plan, stream);
    case DType::kFloat32:
      return launch_decode<float>(plan, stream);
    default:
      return Error(ErrorKind::kInternal,
                   "attention: the decode kernel takes 16- and 32-bit floats");
  }
}

}  // namespace splice::cuda
