#pragma once
// The element remapping kernel behind flip, roll, repeat, repeat_interleave (by a count),
// tril/triu and every pad mode: each output element reads the source element whose
// coordinate each dim computes from the output's (identity, flipped, rolled, modulo, divided,
// or padded with a constant / by reflection / replication / wrapping), or writes the constant
// (pad) or zero (outside tril/triu's triangle). Values move unchanged (same dtype), so the
// kernel is instantiated per element size only. Plain declarations: the kernel lives in
// remap_kernel.cu (nvcc), the checks in shape_ops.cc.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/device_tensor.h"

namespace splice::cuda {

enum class DimMap : int32_t {
  kIdentity,      // s = c
  kFlip,          // s = n - 1 - c
  kRoll,          // s = (c - arg) mod n, arg in [0, n)
  kModulo,        // s = c mod n (repeat)
  kDivide,        // s = c / arg (repeat_interleave by arg)
  kPadConstant,   // s = c - arg, the constant when outside [0, n)
  kPadReflect,    // c - arg mirrored at the edges without repeating them
  kPadReplicate,  // c - arg clamped to [0, n)
  kPadCircular,   // c - arg wrapped into [0, n)
};

struct RemapDim {
  int32_t map = 0;  // DimMap
  int32_t unused = 0;
  int64_t src_size = 1;  // n
  int64_t arg = 0;
  int64_t src_stride = 0;  // elements
  int64_t out_size = 1;
  int64_t out_stride = 0;  // elements
};

// Flat modes work on row-major linear indices instead of per-dim coordinates: the output
// element with linear index k reads the source element with linear index
// (k - flat_arg) mod numel (roll without dims) or k / flat_arg (repeat_interleave of the
// flattened tensor), the source decomposed by its own src_rank dims.
enum class FlatMap : int32_t { kNone, kRoll, kDivide };

struct RemapParams {
  int32_t rank = 0;      // output dims (dims[d].out_*); also the source's when flat == kNone
  int32_t tri = 0;       // 0: none; 1: tril, 2: triu over the last two output dims
  int32_t flat = 0;      // FlatMap
  int32_t src_rank = 0;  // flat modes: the source's dims (dims[d].src_size, src_stride)
  int64_t flat_arg = 0;
  int64_t src_numel = 0;  // flat modes
  int64_t diagonal = 0;
  int64_t numel = 0;
  void* out = nullptr;
  const void* src = nullptr;
  uint64_t fill = 0;              // the constant's bytes (low `element_size` bytes)
  int64_t* error_word = nullptr;  // launches skip their writes once it is set
  RemapDim dims[kMaxDims];
};

// Launches the remap on `stream` with `blocks` x 256 threads; index math in 32 bits when
// `index32` (numel and every offset fit). element_size is 1, 2, 4 or 8.
cudaError_t launch_remap(const RemapParams& params, int element_size, bool index32, unsigned blocks,
                         cudaStream_t stream);

}  // namespace splice::cuda
