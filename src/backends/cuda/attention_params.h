#pragma once
// The attention kernels' parameter block and the address arithmetic they share with the host
// planner and its unit test (compiled by nvcc for the kernels and by the host compiler for the
// test, which emulates the kernels' addressing on the CPU).
//
// The work is split into units: one per (batch index, KV head), i.e. per distinct K/V matrix.
// A unit's rows are the query rows that read that K/V: r = g * L + l for the g-th of the G q
// heads sharing the KV head (G = 1 without grouping) and query position l. Blocks take tiles
// of a unit's rows and, when split, a range of its keys.

#include <cstdint>

#include "support/dtype.h"

#if defined(__CUDACC__)
#define SPLICE_HD __host__ __device__ __forceinline__
#else
#define SPLICE_HD inline
#endif

namespace splice::cuda {

inline constexpr int kAttnMaxBatchDims = 6;

// Tensors addressed per unit, in this order.
enum AttnTensor : int { kAttnQ, kAttnK, kAttnV, kAttnMask, kAttnOut, kAttnLse, kAttnTensors };

struct AttnParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* mask = nullptr;  // nullptr: no mask
  void* out = nullptr;
  float* lse = nullptr;  // nullptr: not wanted
  DType dtype = DType::kFloat32;
  DType mask_dtype = DType::kBool;
  bool causal = false;
  double scale = 1.0;

  int64_t L = 0, S = 0, E = 0, Ev = 0;
  int64_t G = 1;      // q heads per unit
  int64_t R = 0;      // rows per unit: G * L
  int64_t units = 0;  // product of the unit batch shape
  int64_t lse_width = 0;

  // The unit batch shape (outermost first): the output batch dims, the head dim (last) divided
  // by G. Per tensor: strides over it, and for the head dim the q-head index c * G is divided
  // by head_div[t] (the KV group for k and v, 1 otherwise) before multiplying by the stride.
  int nb = 0;
  int64_t batch_sizes[kAttnMaxBatchDims] = {};
  int64_t batch_strides[kAttnTensors][kAttnMaxBatchDims] = {};
  int64_t head_div[kAttnTensors] = {1, 1, 1, 1, 1, 1};

  // Within a unit: strides along the q head (g), the query position (l), the key (j) and the
  // head dim (e).
  int64_t q_hs = 0, q_ls = 0, q_es = 1;
  int64_t k_ss = 0, k_es = 1;
  int64_t v_ss = 0, v_es = 1;
  int64_t m_hs = 0, m_ls = 0, m_ss = 0;
  int64_t o_hs = 0, o_ls = 0, o_es = 1;
  int64_t lse_hs = 0, lse_ls = 0;

  // Launch shape: row tiles per unit, key splits (each split_keys keys, a multiple of the
  // kernel's key tile), split partials (when splits > 1): per split and global row
  // (unit * R + r) the running max and sum (partial_ml, 2 values) and the unnormalised
  // output (partial_acc, Ev values), in float (double for float64).
  int64_t rows_per_block = 0;
  int64_t tiles_per_unit = 0;
  int64_t splits = 1;
  int64_t split_keys = 0;
  void* partial_ml = nullptr;
  void* partial_acc = nullptr;
  // The decode kernel's per-unit counters (KernelScratch::counters, 0 at entry and left at 0):
  // with splits > 1 the last block of a unit to finish combines the unit's partials in the
  // same launch. nullptr: a second kernel combines.
  uint32_t* counters = nullptr;
};

// The decode kernel (attention_decode.cu): a block of kAttnDecodeThreads threads per (unit,
// key split) with all R rows of the unit, K/V staged through shared memory in tiles of
// `key_tile` keys by 16-byte loads (at most kAttnDecodeLoads per thread and tile).
inline constexpr int kAttnDecodeThreads = 256;
// 4: a head dim of 64 still gets tiles of 64 keys, with half the staging registers of 8.
inline constexpr int kAttnDecodeLoads = 4;

// Its dynamic shared memory, byte offsets from the start: the K and V tiles (rows padded by 16
// bytes, so the 8 threads of a 16-byte shared-memory phase reading 8 consecutive rows hit
// distinct banks), the q rows in float, the tile's scores (R x key_tile float), per row the
// running max, sum and the tile's correction factor (3 floats), and the accumulators the key
// slices of the P·V product reduce through (a float per element of each thread's 16-byte chunk
// of V).
struct AttnDecodeSmem {
  int64_t k_row = 0, v_row = 0;  // padded row bytes
  int64_t v = 0, q = 0, s = 0, stat = 0, red = 0, total = 0;
};

SPLICE_HD int64_t attn_align16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

SPLICE_HD AttnDecodeSmem attn_decode_smem(int64_t R, int64_t E, int64_t Ev, int64_t elem_size,
                                          int64_t key_tile) {
  AttnDecodeSmem m;
  m.k_row = E * elem_size + 16;
  m.v_row = Ev * elem_size + 16;
  m.v = key_tile * m.k_row;
  m.q = m.v + key_tile * m.v_row;
  m.s = m.q + attn_align16(R * E * 4);
  m.stat = m.s + attn_align16(R * key_tile * 4);
  m.red = m.stat + attn_align16(R * 3 * 4);
  m.total = m.red + kAttnDecodeThreads * (16 / elem_size) * 4;
  return m;
}

// The CUDA-core kernel's dynamic shared memory (attention_simt.cu), byte offsets: the K tile
// with rows padded by one 4-byte word (a lane per key reads the tile down a column: with rows
// of E + pad elements, the 32 lanes' addresses fall in distinct banks), the V tile (a lane per
// element reads along a row: unpadded), then each warp's q row in the accumulation type.
struct AttnSimtSmem {
  int64_t k_row = 0;  // K tile row stride, in elements
  int64_t v = 0, q = 0, total = 0;
};

SPLICE_HD AttnSimtSmem attn_simt_smem(int64_t E, int64_t Ev, int64_t elem_size, int64_t acc_size,
                                      int64_t key_tile, int64_t warps) {
  AttnSimtSmem m;
  m.k_row = E + (elem_size < 4 ? 4 / elem_size : 1);
  m.v = attn_align16(key_tile * m.k_row * elem_size);
  m.q = m.v + attn_align16(key_tile * Ev * elem_size);
  m.total = m.q + warps * E * acc_size;
  return m;
}

// Base element offsets of unit u in each tensor (row r = 0).
SPLICE_HD void attn_unit_offsets(const AttnParams& p, int64_t u, int64_t (&off)[kAttnTensors]) {
  for (int t = 0; t < kAttnTensors; ++t) off[t] = 0;
  for (int d = p.nb - 1; d >= 0; --d) {
    const int64_t c = u % p.batch_sizes[d];
    u /= p.batch_sizes[d];
    for (int t = 0; t < kAttnTensors; ++t) {
      const int64_t idx = d == p.nb - 1 ? (c * p.G) / p.head_div[t] : c;
      off[t] += idx * p.batch_strides[t][d];
    }
  }
}

// The keys unit rows [row_begin, row_end) may see: causal rows see keys <= their position.
SPLICE_HD int64_t attn_key_limit(const AttnParams& p, int64_t row_begin, int64_t row_end) {
  if (!p.causal) return p.S;
  const int64_t last = row_end - 1;
  const int64_t max_l = row_begin / p.L == last / p.L ? last % p.L : p.L - 1;
  return max_l + 1 < p.S ? max_l + 1 : p.S;
}

}  // namespace splice::cuda
