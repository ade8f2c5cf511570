// The host half of gemv.h: which kernel reads a product's weight (16-byte rows, 16-byte
// columns or element loads), its row bound, tiles and k splits, and the scratch check before
// the launch.
#include "backends/cuda/gemv.h"

#include <algorithm>

#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

// The kernels' launch (gemv.cu): partials has launch.partial_bytes bytes (null when not split).
cudaError_t gemv_launch(const GemvArgs& args, const GemvLaunch& launch, float* partials,
                        unsigned* counters, cudaStream_t stream);

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const char* gemv_layout_name(GemvLayout layout) {
  switch (layout) {
    case GemvLayout::kRows:
      return "rows";
    case GemvLayout::kCols:
      return "cols";
    case GemvLayout::kStrided:
      return "strided";
  }
  return "strided";
}

GemvLaunch plan_gemv(const GemvArgs& a, int sm_count) {
  GemvLaunch l;
  const int64_t vec = 16 / dtype_size(a.dtype);  // elements per 16-byte load
  // A 16-byte load needs 16-byte aligned addresses at every row it starts: the base, and the
  // strides between rows (a size-1 dim's stride is never used).
  const bool rows_vec = a.w_ks == 1 && a.x_cs == 1 && a.k % vec == 0 &&
                        (a.n == 1 || a.w_ns % vec == 0) && (a.m == 1 || a.x_rs % vec == 0) &&
                        aligned16(a.w) && aligned16(a.x);
  const bool cols_vec =
      a.w_ns == 1 && a.n % vec == 0 && (a.k == 1 || a.w_ks % vec == 0) && aligned16(a.w);
  l.layout = rows_vec ? GemvLayout::kRows : cols_vec ? GemvLayout::kCols : GemvLayout::kStrided;
  l.row_tile = 16;
  if (l.layout != GemvLayout::kStrided) {
    l.row_tile = 1;
    while (l.row_tile < a.m) l.row_tile *= 2;
  }
  // Two blocks per multiprocessor keep every SM streaming (each block has 8 warps of loads in
  // flight); fewer tiles than that means a narrow output and a split k.
  const int64_t target = 2 * std::max(sm_count, 1);
  int64_t min_k = 0;  // k values a split keeps at least, so a block still reads 4 KB or more
  if (l.layout == GemvLayout::kCols) {
    l.rows_per_block = 0;
    l.tile_n = 32 * vec;
    l.tiles = ceil_div(a.n, l.tile_n);
    min_k = 8 * 4;  // 8 warps x 4 loads of 512 bytes
  } else {
    l.rows_per_block = 8;
    while (l.rows_per_block > 1 && ceil_div(a.n, l.rows_per_block) < target) l.rows_per_block /= 2;
    l.tile_n = l.rows_per_block;
    l.tiles = ceil_div(a.n, l.rows_per_block);
    const int64_t lanes = 32 * (8 / l.rows_per_block);          // lanes reading one weight row
    min_k = lanes * (l.layout == GemvLayout::kRows ? vec : 1);  // one load per lane
  }
  l.splits = 1;
  if (l.tiles < target && l.tiles <= kGemvCounters)
    l.splits = std::clamp<int64_t>(std::min(ceil_div(target, l.tiles), a.k / min_k), 1, 64);
  l.k_per_split = ceil_div(ceil_div(a.k, l.splits), vec) * vec;
  l.splits = std::max<int64_t>(1, ceil_div(a.k, l.k_per_split));
  if (l.splits > 1) {
    l.partial_bytes = scratch_round(static_cast<size_t>(l.splits * a.m * a.n) * sizeof(float));
    l.counters = l.tiles;
  }
  return l;
}

Result<void> gemv(const GemvArgs& args, const GemvLaunch& launch, const KernelScratch& scratch,
                  unsigned* counters, cudaStream_t stream) {
  SPLICE_CHECK_OR_RETURN(launch.partial_bytes == 0 ||
                             (scratch.data != nullptr && scratch.bytes >= launch.partial_bytes),
                         ErrorKind::kBackend,
                         "gemv: needs {} bytes of scratch for its split-k partial sums, got {}",
                         launch.partial_bytes, scratch.data ? scratch.bytes : 0);
  SPLICE_CHECK_OR_RETURN(launch.counters <= kGemvCounters, ErrorKind::kInternal,
                         "gemv: {} split tiles exceed the {} arrival counters", launch.counters,
                         kGemvCounters);
  float* partials = launch.partial_bytes ? static_cast<float*>(scratch.data) : nullptr;
  SPLICE_CUDA_CHECK(gemv_launch(args, launch, partials, counters, stream));
  return ok_result();
}

}  // namespace splice::cuda
