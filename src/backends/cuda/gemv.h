#pragma once
// splice's own skinny GEMM for decode-shaped products: out[m, n] = alpha · Σ_k x[m, k] ·
// W(n, k) (+ beta · bias[n]) for M <= kGemvMaxRows rows of x, in float16, bfloat16 and float32 with
// float32 accumulation (float32 stays float32: no TF32), rounded once into the output.
//
// At M <= 16 a GEMM is a read of the weight: cuBLASLt's kernels reach ~25–70% of the copy
// bandwidth there (issue 35); these read the weight with 16-byte loads, every byte once, and
// spread it over the whole GPU:
//   - kRows: W(n, k) with unit k stride (linear's [N, K] weight, mm's transposed view): a warp
//     streams whole weight rows, lanes over k, and reduces with shuffles; a block holds
//     `rows_per_block` rows, its 8 warps splitting each row's k range when there are few rows;
//   - kCols: W(n, k) with unit n stride (mm's [K, N] weight): each lane owns 16 bytes of
//     consecutive output columns, warps split k;
//   - kStrided: any strides or a pointer not 16-byte aligned: the kRows kernel with element
//     loads (correct, not fast; the fallback for layouts a 16-byte load cannot read).
// Split-K: when the output is too narrow to give every multiprocessor two blocks, each tile's
// k range is split over `splits` blocks; their float partials go to scratch and the last block
// of a tile (an arrival counter) sums them in split order — deterministic, one kernel, no
// host sync — and resets the counter to 0, so the counters (zeroed once when the runner is
// made) are ready for the next launch and a CUDA graph replays without a memset.
//
// The planning half (plan_gemv) is plain C++, tested without a GPU; gemv.cu holds the kernels.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "backends/cuda/kernel_scratch.h"
#include "support/dtype.h"
#include "support/error.h"

namespace splice::cuda {

// The most rows of x the GEMV kernels take; above it a GEMM's tiles reuse the weight and
// cuBLASLt is the better choice.
inline constexpr int64_t kGemvMaxRows = 16;

// One product in element strides. x(m, k) at x[m * x_rs + k * x_cs]; W(n, k) at
// w[n * w_ns + k * w_ks]; out(m, n) at out[m * o_rs + n * o_cs]; bias(n) at bias[n * bias_s].
struct GemvArgs {
  DType dtype = DType::kFloat16;
  int64_t m = 0, n = 0, k = 0;
  const void* x = nullptr;
  int64_t x_rs = 0, x_cs = 1;
  const void* w = nullptr;
  int64_t w_ns = 0, w_ks = 1;
  void* out = nullptr;
  int64_t o_rs = 0, o_cs = 1;
  const void* bias = nullptr;  // same dtype as x, or nullptr
  int64_t bias_s = 1;
  float alpha = 1.0f;
  float beta = 1.0f;  // scales bias
};

enum class GemvLayout { kRows, kCols, kStrided };
const char* gemv_layout_name(GemvLayout layout);  // "rows", "cols", "strided"

// How one product is launched.
struct GemvLaunch {
  GemvLayout layout = GemvLayout::kStrided;
  int row_tile = 16;         // the kernel's compile-time row bound (1, 2, 4, 8 or 16) >= m
  int rows_per_block = 8;    // kRows/kStrided: output columns (weight rows) per block
  int64_t tile_n = 8;        // output columns per tile (rows_per_block, or 32 lanes x 16 B)
  int64_t tiles = 1;         // grid.x
  int64_t splits = 1;        // grid.y: blocks sharing one tile's k range
  int64_t k_per_split = 0;   // k values per split (a multiple of the vector width)
  size_t partial_bytes = 0;  // scratch for the split partials (0 when splits == 1)
  int64_t counters = 0;      // arrival counters used (tiles when split, else 0)
};

inline constexpr int kGemvThreads = 256;        // 8 warps per block
inline constexpr int64_t kGemvCounters = 4096;  // arrival counters the runner keeps

// The launch for `args` on a GPU with `sm_count` multiprocessors. Split only while the tiles
// alone give fewer than two blocks per multiprocessor, each split keeping at least a few KB of
// weight per block; never more than kGemvCounters tiles split.
GemvLaunch plan_gemv(const GemvArgs& args, int sm_count);

// Launches it. scratch: at least launch.partial_bytes; counters: kGemvCounters zeroed ints
// (left zeroed). kBackend when the scratch is too small or a launch fails.
Result<void> gemv(const GemvArgs& args, const GemvLaunch& launch, const KernelScratch& scratch,
                  unsigned* counters, cudaStream_t stream);

}  // namespace splice::cuda
