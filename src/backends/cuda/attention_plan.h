#pragma once
// Host-side planning of an attention launch (plain C++, unit-tested without a GPU): the CPU
// kernel's argument checks and messages, batch broadcasting and KV-head grouping turned into
// the kernels' unit/row addressing (attention_params.h), the kernel choice, the key tile and
// shared memory, and the key splits the scratch allows.

#include <cstddef>

#include "backends/cuda/attention.h"
#include "backends/cuda/attention_params.h"

namespace splice::cuda {

enum class AttnKernel { kSimt, kMma, kDecode };

const char* attn_kernel_name(AttnKernel k);  // "simt", "mma", "decode"

struct AttnPlan {
  AttnParams params;
  AttnKernel kernel = AttnKernel::kSimt;
  int head_dim_bound = 128;  // SIMT: E, Ev <= this (128, 256 or 1024); MMA: E == Ev == this
  int64_t key_tile = 32;     // keys per shared-memory tile (splits are multiples of it)
  size_t smem_bytes = 0;     // dynamic shared memory per block
  int threads = 256;
  bool empty = false;             // no output rows (only lse padding, if any, to write)
  bool lse_pad = false;           // lse has positions >= L to fill with +inf
  size_t split_bytes_wanted = 0;  // scratch that enables the splits the plan would like
  // Why this kernel (a static string): the first rule of the choice that decided it.
  const char* reason = "";
};

inline constexpr int kSimtWarps = 8;      // query rows per CUDA-core block
inline constexpr int kMmaRows = 64;       // query rows per tensor-core block (4 warps x 16)
inline constexpr int kMmaKeys = 64;       // keys per tensor-core tile
inline constexpr int kMaxHeadDim = 1024;  // the CUDA-core kernel's limit on E and Ev
// The decode kernel (attention_decode.cu) takes at most this many query positions and rows
// per unit, head dims up to 256, and splits the keys in multiples of 16, at least 32 a split,
// into enough blocks for kDecodeBlocksPerSm per SM.
inline constexpr int kDecodeMaxQueries = 16;
inline constexpr int kDecodeMaxRows = 32;
inline constexpr int kDecodeMaxHeadDim = 256;
inline constexpr int kDecodeKeyQuantum = 16;
inline constexpr int kDecodeMinSplitKeys = 32;
inline constexpr int kDecodeBlocksPerSm = 2;

// sm_count sizes the splits; scratch.bytes bounds them (partials live in scratch.data).
Result<AttnPlan> plan_attention(const AttentionArgs& args, int sm_count,
                                const KernelScratch& scratch);

}  // namespace splice::cuda
