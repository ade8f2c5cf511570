#pragma once
// A GEMV with a pointwise epilogue in one kernel (plan/gemv_epilogue.h): the rows kernel of
// gemv.h — weight rows read by 16-byte loads, split-K partials summed in split order by the
// tile's last block — generated with NVRTC around the epilogue group's compute() function
// (pointwise_codegen.h), so the group's arithmetic is the same code a pointwise group runs.
//
// A block owns `cols_per_block` consecutive epilogue columns j. For each it sums the product's
// columns col[r] + j of every range r the epilogue reads (silu(gate) * up: r = 0 the gate's
// column, r = 1 the up's), each weight row read by 8 / (cols_per_block · ranges) warps; then,
// for every row m of x and every column j, the ranges' sums are rounded to the product's
// dtype (alpha, the bias, one rounding: as a stored product would be), the other inputs are
// read at (m, j), compute() runs and the outputs are stored at (m, j). The product itself is
// never stored.
//
// The planning half (plan_gemv_epilogue, fold_rows) is plain C++, tested without a GPU.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/launch_context.h"
#include "ir/pointwise.h"
#include "support/error.h"

namespace splice::cuda {

// The most operands (regular inputs + outputs) and column ranges one epilogue kernel takes.
inline constexpr int kMaxEpilogueOperands = 16;
inline constexpr int kMaxEpilogueRanges = 4;

// The structure a kernel is generated for (the cache key with the program's structure): the
// epilogue program, which of its inputs are product column ranges (the others are tensors),
// and the dtype of x, the weight and the product.
// With `norm`, x is the input of an RMSNorm the kernel applies as it reads x (plan/norm_fusion.h's
// chain without its residual add): each row's statistics first, then every element normalised,
// cast and multiplied by the norm's weight (GemvEpilogueArgs::norm_weight, x's dtype, or none).
struct GemvNormPrologue {
  DType stat = DType::kFloat32;
  DType cast = DType::kFloat16;
  bool operator==(const GemvNormPrologue&) const = default;
};
struct GemvEpilogueShape {
  ir::PointwiseProgram program;
  std::vector<bool> is_range;  // per program input
  DType dtype = DType::kFloat16;
  std::optional<GemvNormPrologue> norm;
};

// The kernel source; kUnsupportedOp for an epilogue the kernel does not take (too many
// operands or ranges, a function without a CUDA expression).
Result<std::string> generate_gemv_epilogue_source(const GemvEpilogueShape& shape);

// Names of the kernels in that source, by row tile (1, 2, 4, 8, 16 rows of x).
const char* gemv_epilogue_kernel_name(int row_tile);

// A tensor operand of the epilogue as (row, column) strides over the iteration space
// [rows, width], its leading dims folded into rows: nullopt when they do not fold (strides that
// no single row stride describes).
struct RowOperand {
  const void* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};
std::optional<RowOperand> fold_rows(const DeviceTensor& t);

// One launch: the product's GEMV arguments (gemv.h: x, the weight as W(n, k), bias, alpha,
// beta; its n is the product's width), the column where each range starts, the epilogue's
// width, and its operands in program order (ranges skipped) then its outputs.
struct GemvEpilogueArgs {
  GemvArgs gemv;
  const void* norm_weight = nullptr;  // the prologue's weight ([k], 16-byte aligned), or none
  float norm_eps = 0.0f;
  std::vector<int64_t> columns;  // per range, in program-input order
  int64_t width = 0;
  std::vector<RowOperand> inputs;
  std::vector<RowOperand> outputs;
};

struct GemvEpilogueLaunch {
  int row_tile = 1;
  int cols_per_block = 1;
  int64_t tiles = 1;
  // grid.x: one block per tile when k is split; otherwise at most kGemvEpilogueBlocksPerSm per
  // multiprocessor, each looping over tiles `blocks` apart, so the prologue (the norm's row
  // statistics, x staged in shared memory) is paid once per block, not once per tile.
  int64_t blocks = 1;
  int64_t splits = 1;
  int64_t k_per_split = 0;
  size_t partial_bytes = 0;
};

// Blocks per multiprocessor of a GEMV epilogue kernel whose tiles are not split (4: with 32 KB
// of staged x a multiprocessor holds 7; 4 x 8 warps keep ~64 KB of weight loads in flight).
// SPLICE_GEMV_EPILOGUE_BLOCKS_PER_SM overrides it (0: one block per tile), for measuring.
inline constexpr int kGemvEpilogueBlocksPerSm = 4;

// Whether the rows kernel reads this product (unit k strides, 16-byte aligned rows, at most
// kGemvMaxRows rows), and its launch on `sm_count` multiprocessors; nullopt otherwise (the
// caller runs the product and the epilogue apart).
std::optional<GemvEpilogueLaunch> plan_gemv_epilogue(const GemvEpilogueArgs& args, int sm_count);

// The kernel's parameter block (the generated Params struct as 8-byte slots), for `launch` and
// for the host emulation (tests/cuda_emulation), which fills the struct from it.
std::vector<uint64_t> gemv_epilogue_params(const GemvEpilogueArgs& args,
                                           const GemvEpilogueLaunch& launch,
                                           const std::vector<ir::PointwiseConstant>& constants,
                                           float* partials, unsigned* counters,
                                           int64_t* error_word);

// A generated kernel, compiled and loaded (cached per process by its shape's structure).
class PreparedGemvEpilogue {
 public:
  static Result<std::shared_ptr<const PreparedGemvEpilogue>> prepare(
      const GemvEpilogueShape& shape);

  // Launches it; partials: launch.partial_bytes of scratch (null when not split); counters:
  // kGemvCounters zeroed ints (left zeroed).
  Result<void> launch(const GemvEpilogueArgs& args, const GemvEpilogueLaunch& launch,
                      const std::vector<ir::PointwiseConstant>& constants, float* partials,
                      unsigned* counters, const LaunchContext& ctx) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  int ranges_ = 0;
  std::vector<CUfunction> kernels_;  // by log2(row tile)
};

}  // namespace splice::cuda
