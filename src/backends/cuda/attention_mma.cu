// The tensor-core attention kernel for fp16/bf16 (see attention.h), flash-attention-2 style:
// a block of 4 warps takes 64 query rows of one unit (16 per warp, the m of mma.sync
// m16n8k16) and walks the keys of its split in tiles of 64 staged in shared memory. Each warp
// keeps its Q fragments in registers, computes S = Q·Kᵀ for the tile (8 n-tiles of 8 keys), applies
// scale, causal rule and mask, updates the running max and sum of its rows (a row's 64 scores
// are spread over the 4 threads of a quad, reduced with two shuffles), and accumulates
// O += P·V with P taken from the S accumulators (their layout is the A operand's) rounded to
// the input type. Accumulation is fp32 throughout.
//
// Fragment layouts (PTX ISA, mma.m16n8k16 with 16-bit A/B, fp32 C/D; g = lane / 4, t = lane %
// 4): A (16x16, row-major) registers {A[g][2t..2t+1]}, {A[g+8][2t..]}, {A[g][2t+8..]},
// {A[g+8][2t+8..]}; B (16x8, k x n) registers {B[2t..2t+1][g]}, {B[2t+8..2t+9][g]}; C/D
// {C[g][2t]}, {C[g][2t+1]}, {C[g+8][2t]}, {C[g+8][2t+1]}. Shared-memory rows are padded by 8
// elements so that the quad reads of K rows fall in distinct banks.
#include <cuda_runtime.h>

#include <limits>

#include "backends/cuda/attention_common.cuh"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace {

template <typename T>
struct Mma;

template <>
struct Mma<__half> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  static __device__ __forceinline__ uint32_t pack_bits(__half lo, __half hi) {
    return static_cast<uint32_t>(__half_as_ushort(lo)) |
           (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
  }
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  static __device__ __forceinline__ uint32_t pack_bits(__nv_bfloat16 lo, __nv_bfloat16 hi) {
    return static_cast<uint32_t>(__bfloat16_as_ushort(lo)) |
           (static_cast<uint32_t>(__bfloat16_as_ushort(hi)) << 16);
  }
  static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <typename T>
__device__ __forceinline__ uint32_t load_pair(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

template <typename T, int D>
__global__ void __launch_bounds__(128) attention_mma_kernel(AttnParams p) {
  constexpr int kRows = kMmaRows, kKeys = kMmaKeys;
  constexpr int kStride = D + 8;          // padded shared-memory row, in elements
  constexpr int kSteps = D / 16;          // k-steps of Q·Kᵀ
  constexpr int kScoreTiles = kKeys / 8;  // n-tiles of the scores
  constexpr int kOutTiles = D / 8;        // n-tiles of the output
  constexpr int kVectors = D / 8;         // 16-byte vectors per row
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  extern __shared__ __align__(16) unsigned char attn_mma_smem[];
  T* qs = reinterpret_cast<T*>(attn_mma_smem);  // kRows x kStride
  T* ks = qs + kRows * kStride;                 // kKeys x kStride
  T* vs = ks + kKeys * kStride;                 // kKeys x kStride

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, t = lane & 3;
  const int64_t unit = blockIdx.x / p.tiles_per_unit;
  const int64_t tile = blockIdx.x % p.tiles_per_unit;
  const int64_t split = blockIdx.y;
  int64_t off[kAttnTensors];
  attn_unit_offsets(p, unit, off);
  const int64_t row_begin = tile * kRows;
  const int64_t row_end = row_begin + kRows < p.R ? row_begin + kRows : p.R;
  const int64_t key_begin = split * p.split_keys;
  int64_t key_end = key_begin + p.split_keys;
  const int64_t limit = attn_key_limit(p, row_begin, row_end);
  if (key_end > limit) key_end = limit;
  const T* q = static_cast<const T*>(p.q);
  const T* k = static_cast<const T*>(p.k) + off[kAttnK];
  const T* v = static_cast<const T*>(p.v) + off[kAttnV];

  // Q tile into shared memory (zeros past the unit's rows), then into A fragments.
  for (int idx = threadIdx.x; idx < kRows * kVectors; idx += blockDim.x) {
    const int rr = idx / kVectors, c8 = (idx % kVectors) * 8;
    const int64_t r = row_begin + rr;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (r < p.R) val = *reinterpret_cast<const uint4*>(q + attn_row(p, off, r).q + c8);
    *reinterpret_cast<uint4*>(qs + rr * kStride + c8) = val;
  }
  __syncthreads();
  uint32_t qf[kSteps][4];
  const int ra = warp * 16 + g;  // this thread's rows in the tile: ra and ra + 8
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int c = s * 16 + 2 * t;
    qf[s][0] = load_pair(qs + ra * kStride + c);
    qf[s][1] = load_pair(qs + (ra + 8) * kStride + c);
    qf[s][2] = load_pair(qs + ra * kStride + c + 8);
    qf[s][3] = load_pair(qs + (ra + 8) * kStride + c + 8);
  }
  bool valid[2];
  AttnRow rows[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t r = row_begin + ra + 8 * h;
    valid[h] = r < p.R;
    rows[h] = attn_row(p, off, valid[h] ? r : 0);
  }
  float row_max[2] = {kNegInf, kNegInf}, row_sum[2] = {0.0f, 0.0f};
  float o[kOutTiles][4];
#pragma unroll
  for (int n = 0; n < kOutTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  const float scale = static_cast<float>(p.scale);

  for (int64_t j0 = key_begin; j0 < key_end; j0 += kKeys) {
    __syncthreads();  // every warp is done with the previous K/V tile
    for (int idx = threadIdx.x; idx < kKeys * kVectors; idx += blockDim.x) {
      const int jj = idx / kVectors, c8 = (idx % kVectors) * 8;
      const int64_t j = j0 + jj;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
      if (j < key_end) {  // keys past the range are zeros (their weight is 0: no NaN from 0·x)
        kv = *reinterpret_cast<const uint4*>(k + j * p.k_ss + c8);
        vv = *reinterpret_cast<const uint4*>(v + j * p.v_ss + c8);
      }
      *reinterpret_cast<uint4*>(ks + jj * kStride + c8) = kv;
      *reinterpret_cast<uint4*>(vs + jj * kStride + c8) = vv;
    }
    __syncthreads();

    float sc[kScoreTiles][4];
#pragma unroll
    for (int n = 0; n < kScoreTiles; ++n) {
      sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0f;
      const T* krow = ks + (n * 8 + g) * kStride + 2 * t;
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
        Mma<T>::run(sc[n], qf[s], load_pair(krow + s * 16), load_pair(krow + s * 16 + 8));
    }
    // Scale, hide, and each row's maximum over the tile.
    float tile_max[2] = {kNegInf, kNegInf};
#pragma unroll
    for (int n = 0; n < kScoreTiles; ++n) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int h = c >> 1;
        const int64_t j = j0 + n * 8 + 2 * t + (c & 1);
        float s = kNegInf;
        if (valid[h] && j < key_end)
          s = attn_masked_score<float>(p, rows[h].mask, rows[h].l, j, sc[n][c] * scale);
        sc[n][c] = s;
        tile_max[h] = fmaxf(tile_max[h], s);  // a NaN score is not a maximum; it propagates via exp
      }
    }
    float base[2], corr[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
      tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
      const float new_max = fmaxf(row_max[h], tile_max[h]);
      base[h] = new_max == kNegInf ? 0.0f : new_max;  // no visible key yet: weights stay 0
      corr[h] = expf(row_max[h] - base[h]);
      row_max[h] = new_max;
    }
    float tile_sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int n = 0; n < kScoreTiles; ++n) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const float w = expf(sc[n][c] - base[c >> 1]);
        sc[n][c] = w;
        tile_sum[c >> 1] += w;
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tile_sum[h] += __shfl_xor_sync(0xffffffffu, tile_sum[h], 1);
      tile_sum[h] += __shfl_xor_sync(0xffffffffu, tile_sum[h], 2);
      row_sum[h] = row_sum[h] * corr[h] + tile_sum[h];
    }
#pragma unroll
    for (int n = 0; n < kOutTiles; ++n) {
      o[n][0] *= corr[0];
      o[n][1] *= corr[0];
      o[n][2] *= corr[1];
      o[n][3] *= corr[1];
    }
    // O += P·V, P from the score accumulators (16 keys per k-step).
#pragma unroll
    for (int s = 0; s < kKeys / 16; ++s) {
      const uint32_t a[4] = {Mma<T>::pack(sc[2 * s][0], sc[2 * s][1]),
                             Mma<T>::pack(sc[2 * s][2], sc[2 * s][3]),
                             Mma<T>::pack(sc[2 * s + 1][0], sc[2 * s + 1][1]),
                             Mma<T>::pack(sc[2 * s + 1][2], sc[2 * s + 1][3])};
      const T* v0 = vs + (s * 16 + 2 * t) * kStride + g;
#pragma unroll
      for (int n = 0; n < kOutTiles; ++n) {
        const T* vp = v0 + n * 8;
        const uint32_t b0 = Mma<T>::pack_bits(vp[0], vp[kStride]);
        const uint32_t b1 = Mma<T>::pack_bits(vp[8 * kStride], vp[9 * kStride]);
        Mma<T>::run(o[n], a, b0, b1);
      }
    }
  }

  // Rows that saw no key get output 0 and logsumexp 0 (the CPU flash kernel's rule).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (!valid[h]) continue;
    const int64_t r = row_begin + ra + 8 * h;
    if (p.splits == 1) {
      const float inv = row_sum[h] == 0.0f ? 0.0f : 1.0f / row_sum[h];
      T* out = static_cast<T*>(p.out) + rows[h].out;
#pragma unroll
      for (int n = 0; n < kOutTiles; ++n) {
        const int64_t col = n * 8 + 2 * t;
        out[col * p.o_es] = convert<T>(o[n][2 * h] * inv);
        out[(col + 1) * p.o_es] = convert<T>(o[n][2 * h + 1] * inv);
      }
      if (t == 0 && p.lse != nullptr)
        p.lse[rows[h].lse] = row_sum[h] == 0.0f ? 0.0f : row_max[h] + logf(row_sum[h]);
    } else {
      const int64_t pr = attn_partial_row(p, split, unit, r);
      float* ml = static_cast<float*>(p.partial_ml);
      float* acc = static_cast<float*>(p.partial_acc) + pr * p.Ev;
      if (t == 0) {
        ml[pr * 2] = row_max[h];
        ml[pr * 2 + 1] = row_sum[h];
      }
#pragma unroll
      for (int n = 0; n < kOutTiles; ++n) {
        acc[n * 8 + 2 * t] = o[n][2 * h];
        acc[n * 8 + 2 * t + 1] = o[n][2 * h + 1];
      }
    }
  }
}

template <typename T, int D>
Result<void> launch_mma(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  const auto kernel = attention_mma_kernel<T, D>;
  if (plan.smem_bytes > (48u << 10))
    SPLICE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(plan.smem_bytes)));
  const dim3 grid(static_cast<unsigned>(p.units * p.tiles_per_unit),
                  static_cast<unsigned>(p.splits));
  kernel<<<grid, plan.threads, plan.smem_bytes, stream>>>(p);
  SPLICE_CUDA_CHECK(cudaGetLastError());
  return ok_result();
}

template <typename T>
Result<void> launch_for_head_dim(const AttnPlan& plan, cudaStream_t stream) {
  switch (plan.head_dim_bound) {
    case 32:
      return launch_mma<T, 32>(plan, stream);
    case 64:
      return launch_mma<T, 64>(plan, stream);
    case 80:
      return launch_mma<T, 80>(plan, stream);
    case 96:
      return launch_mma<T, 96>(plan, stream);
    case 128:
      return launch_mma<T, 128>(plan, stream);
    default:
      return Error(ErrorKind::kInternal, "attention: no tensor-core kernel for this head dim");
  }
}

}  // namespace

Result<void> launch_attention_mma(const AttnPlan& plan, cudaStream_t stream) {
  const AttnParams& p = plan.params;
  SPLICE_CHECK_OR_RETURN(p.units * p.tiles_per_unit <= INT32_MAX && p.splits <= 65535,
                         ErrorKind::kShapeMismatch,
                         "scaled_dot_product_attention: {} row blocks exceed the grid limit",
                         p.units * p.tiles_per_unit);
  if (p.dtype == DType::kFloat16) return launch_for_head_dim<__half>(plan, stream);
  if (p.dtype == DType::kBFloat16) return launch_for_head_dim<__nv_bfloat16>(plan, stream);
  return Error(ErrorKind::kInternal, "attention: tensor-core kernel needs fp16 or bf16");
}

}  // namespace splice::cuda
