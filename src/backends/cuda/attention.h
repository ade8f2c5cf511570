#pragma once
// Scaled dot-product attention on the GPU: one fused flash-style kernel family of splice's own
// for every form the CPU backend runs (cpu/attention.cc: scaled_dot_product_attention
// and the _scaled_dot_product_{flash_attention_for_cpu, flash_attention, efficient_attention,
// cudnn_attention} overloads; the glue maps each form's arguments onto AttentionArgs and
// fills the extra outputs of the CUDA forms as the CPU kernel does).
//
// Semantics (the CPU kernel's, which match PyTorch): q (..., L, E), k (..., S, E), v (..., S,
// Ev); the batch dims broadcast; scale defaults to 1/sqrt(E) and multiplies q·kᵀ before the
// mask is added; causal keeps key j <= query i (top-left aligned, also when L != S); a bool
// mask keeps True, a float mask (any float dtype) is added; masks broadcast to (..., L, S).
// Grouped KV heads (gqa): k/v with fewer heads (dim -3) than q, dividing them, serve Hq/Hkv
// consecutive q heads each, without being expanded — a block reads each K/V tile once for
// all the q heads of its group. A fully masked row gives output 0 and logsumexp 0 (the CPU
// flash kernel's rule). Computation in float (double for float64), the output rounded once.
//
// Kernels: fp16/bf16 with E == Ev in {32, 64, 80, 96, 128}, unit stride along E, 16-byte
// aligned rows and at least 16 query rows per KV head use tensor cores (mma.sync m16n8k16,
// fp32 accumulation, P rounded to the input type for P·V as flash attention does): 64 query
// rows per block, K/V tiles of 64 keys in shared memory, online softmax in registers.
// Decode shapes (at most 16 query positions and 32 rows per K/V matrix, fp16/bf16/fp32, head
// dims up to 256 in 16-byte multiples, 16-byte aligned K/V rows) run the decode kernel
// (attention_decode.cu): every q head of a KV group in one block, K/V read once by 16-byte
// loads, keys split over enough blocks to fill the GPU, the splits combined in the same launch
// by each unit's last block (scratch counters). Everything else (fp32, fp64, other head dims
// up to 1024, strided head dims) runs the CUDA-core kernel: a warp per query row, 8 rows per block
// sharing K/V tiles in shared memory. Both split the keys across blocks (flash-decoding) when the
// query rows alone cannot fill the GPU, with partial results in `scratch` combined by a
// second kernel; any scratch size is correct (less scratch, fewer splits), attention_scratch_
// bytes says how much enables every split.
//
// Tolerances against the CPU backend (docs/cuda.md): float32 2e-5 relative + 2e-5 absolute,
// float64 1e-10, float16 2e-3 + 2e-3, bfloat16 1.6e-2 + 1.6e-2 (P·V in the 16-bit type).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernel_scratch.h"
#include "support/error.h"

namespace splice::cuda {

struct AttentionArgs {
  DeviceTensor q, k, v;                // (..., L, E), (..., S, E), (..., S, Ev): one float dtype
  const DeviceTensor* mask = nullptr;  // bool or float, broadcast to batch + (L, S)
  double dropout_p = 0.0;              // must be 0 (inference)
  bool causal = false;
  std::optional<double> scale;  // nullopt: 1 / sqrt(E)
  bool gqa = false;             // enable_gqa (always true for the fused forms)
  DeviceTensor out;             // batch + (L, Ev), q's dtype
  // Optional float32 logsumexp, batch + (W) with W >= L: row i at i, +inf at i >= L (the
  // efficient form's padding); a (..., L, 1) output is passed as its (..., L) view.
  const DeviceTensor* lse = nullptr;
};

Result<void> attention(const AttentionArgs& args, const KernelScratch& scratch,
                       cudaStream_t stream);

// Scratch that lets attention split the keys as much as it would like on this GPU (0 when it
// would not split).
Result<size_t> attention_scratch_bytes(const AttentionArgs& args);

}  // namespace splice::cuda
