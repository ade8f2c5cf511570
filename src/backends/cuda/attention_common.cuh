#pragma once
// Device pieces both attention kernels share: element access of the parameter block, the
// mask, the finalisation of a row (normalise, or write the split partials) and the row
// addressing of attention_params.h.

#include <cuda_runtime.h>

#include <limits>

#include "backends/cuda/attention_params.h"
#include "backends/cuda/device_dtype.cuh"

namespace splice::cuda {

// Applies the causal rule and the mask of row (g, l) to key j: -inf when the key is hidden,
// else s plus the float mask.
template <typename A>
__device__ __forceinline__ A attn_masked_score(const AttnParams& p, int64_t mask_row, int64_t l,
                                               int64_t j, A s) {
  if (p.causal && j > l) return -std::numeric_limits<A>::infinity();
  if (p.mask != nullptr) {
    const int64_t off = mask_row + j * p.m_ss;
    if (p.mask_dtype == DType::kBool) {
      if (!static_cast<const bool*>(p.mask)[off]) return -std::numeric_limits<A>::infinity();
    } else {
      s += load_as<A>(p.mask, off, p.mask_dtype);
    }
  }
  return s;
}

// Index of (split, unit, row) among the partials.
__device__ __forceinline__ int64_t attn_partial_row(const AttnParams& p, int64_t split,
                                                    int64_t unit, int64_t r) {
  return (split * p.units + unit) * p.R + r;
}

// The offsets of row r of a unit whose base offsets are `off`.
struct AttnRow {
  int64_t q, mask, out, lse;
  int64_t l;
};

__device__ __forceinline__ AttnRow attn_row(const AttnParams& p, const int64_t (&off)[kAttnTensors],
                                            int64_t r) {
  const int64_t g = r / p.L, l = r % p.L;
  return {off[kAttnQ] + g * p.q_hs + l * p.q_ls, off[kAttnMask] + g * p.m_hs + l * p.m_ls,
          off[kAttnOut] + g * p.o_hs + l * p.o_ls, off[kAttnLse] + g * p.lse_hs + l * p.lse_ls, l};
}

}  // namespace splice::cuda
