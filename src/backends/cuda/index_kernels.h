#pragma once
// Kernels of the index ops (index_ops.h has the launchers with the checks and messages):
// - advanced indexing: the result of self[i0, i1, ...] (index tensors broadcast together over
//   "bshape", None entries keeping whole dims) as an iteration space whose dims are either
//   self dims or bshape dims; read (index.Tensor, index_select, embedding), write with the last
//   duplicate winning as in the CPU's serial order (index_put, index_copy), and accumulate in
//   the CPU's order (index_put accumulate, index_add), plus a validation pass that writing ops
//   run first so that a bad index leaves self untouched;
// - gather and scatter along one dim with a per-element index;
// - nonzero of a mask, in row-major order (for boolean mask indices).
// Every index is checked on the device against its dim; a bad one records kIndexOutOfRange in
// the error word (index, dim size, dim) and nothing is read or written through it.
// Plain declarations (no fmt): the kernels are in index_kernels.cu.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/device_tensor.h"

namespace splice::cuda {

struct IndexOperand {
  const void* data = nullptr;  // null: this self dim is not indexed
  int32_t is_int32 = 0;        // int32 indices (else int64)
  int32_t unused = 0;
  int64_t strides[kMaxDims] = {};  // over bshape dims (0 where broadcast)
};

struct AdvancedIndexParams {
  int32_t rank = 0;   // result dims
  int32_t brank = 0;  // bshape dims
  int32_t self_rank = 0;
  int32_t wrap = 0;                   // negative indices count from the end (index, index_put)
  int64_t sizes[kMaxDims] = {};       // result sizes
  int32_t result_dim[kMaxDims] = {};  // per result dim: self dim (>= 0) or -(bshape dim + 1)
  int64_t bsizes[kMaxDims] = {};
  int64_t self_sizes[kMaxDims] = {};
  int64_t self_strides[kMaxDims] = {};   // in units
  int64_t other_strides[kMaxDims] = {};  // out (read) or values (write), over result dims
  IndexOperand index[kMaxDims];          // per self dim
  void* self = nullptr;
  void* other = nullptr;
  int64_t numel = 0;   // result elements
  int64_t bnumel = 0;  // index positions
  int64_t* error_word = nullptr;
  int64_t site = 0;
  // Writes: the winner table (one int32 per destination of the indexed dims, -1 = none) and
  // its key strides (row-major over the indexed dims' sizes); null when bnumel == 1.
  int32_t* winner = nullptr;
  int64_t key_strides[kMaxDims] = {};
  // Accumulation: alpha as int64 (integers, bool) or double (floats), and the dtype.
  int64_t alpha_int = 1;
  double alpha_float = 1.0;
  int32_t dtype = 0;  // splice::DType
  int32_t unused = 0;
};

// Checks every index of every indexed dim (bnumel positions).
cudaError_t launch_index_validate(const AdvancedIndexParams& p, unsigned blocks,
                                  cudaStream_t stream);
// other[result] = self[indexed] (a bad index skips its element). unit_size: bytes moved per
// element (1..16; the host may fuse a dense inner row into wider units).
cudaError_t launch_index_read(const AdvancedIndexParams& p, int unit_size, unsigned blocks,
                              cudaStream_t stream);
// The winner table: for each index position b, atomicMax(winner[key(b)], b).
cudaError_t launch_index_winners(const AdvancedIndexParams& p, unsigned blocks,
                                 cudaStream_t stream);
// self[indexed] = other[result] where this position won (or bnumel == 1); skipped when the
// error word is set.
cudaError_t launch_index_write(const AdvancedIndexParams& p, int unit_size, unsigned blocks,
                               cudaStream_t stream);
// self[indexed] += alpha * other[result], each destination accumulated in index order (one
// thread per element of the non-indexed dims walks every index position).
cudaError_t launch_index_accumulate(const AdvancedIndexParams& p, unsigned blocks,
                                    cudaStream_t stream);

// gather / scatter along `dim` with an int64 index of the index tensor's shape.
struct GatherScatterParams {
  int32_t rank = 0;
  int32_t dim = 0;
  int64_t index_sizes[kMaxDims] = {};
  int64_t index_strides[kMaxDims] = {};
  int64_t self_sizes[kMaxDims] = {};  // the indexed tensor (gather: source; scatter: out)
  int64_t self_strides[kMaxDims] = {};
  int64_t other_strides[kMaxDims] = {};  // gather: out; scatter: src (0 everywhere for value)
  const int64_t* index = nullptr;
  void* self = nullptr;
  void* other = nullptr;
  uint64_t value = 0;  // scatter.value: the value's bytes
  int32_t use_value = 0;
  int32_t unused = 0;
  int64_t numel = 0;  // index elements (gather), or columns (scatter)
  int64_t* error_word = nullptr;
  int64_t site = 0;
};
cudaError_t launch_gather(const GatherScatterParams& p, int element_size, unsigned blocks,
                          cudaStream_t stream);
// Validation of every index (scatter runs it before writing).
cudaError_t launch_scatter_validate(const GatherScatterParams& p, unsigned blocks,
                                    cudaStream_t stream);
// One thread per column (index coordinates without dim) walks dim in order: the last
// duplicate wins, as in the CPU's row-major loop.
cudaError_t launch_scatter(const GatherScatterParams& p, int element_size, unsigned blocks,
                           cudaStream_t stream);

// nonzero of a bool/uint8 mask (any strides, rank <= 8) in row-major order, in three steps:
// per-tile counts, their exclusive scan (the total at counts[tiles]), then the coordinates
// (int64, `coords` row-major [total, rank]).
inline constexpr int kNonzeroTile = 1024;  // elements per block (256 threads x 4)
struct NonzeroParams {
  int32_t rank = 0;
  int32_t unused = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  const uint8_t* mask = nullptr;
  int64_t numel = 0;
  int64_t tiles = 0;
  int64_t* counts = nullptr;  // tiles + 1 entries
  int64_t* coords = nullptr;
};
cudaError_t launch_nonzero_count(const NonzeroParams& p, cudaStream_t stream);
cudaError_t launch_nonzero_scan(const NonzeroParams& p, cudaStream_t stream);
cudaError_t launch_nonzero_write(const NonzeroParams& p, cudaStream_t stream);

// repeat_interleave with a repeats tensor: the inclusive sum of the repeats (one block; a
// negative count records kNegativeRepeat), then each output position k along `dim` reads
// source index i, the first i with cumsum[i] > k (or k / repeats[0] when one count applies to
// every element).
struct RepeatScanParams {
  const void* repeats = nullptr;
  int32_t is_int32 = 0;
  int32_t unused = 0;
  int64_t count = 0;   // entries
  int64_t stride = 1;  // elements between entries
  int64_t* cumsum = nullptr;
  int64_t* error_word = nullptr;
  int64_t site = 0;
};
cudaError_t launch_repeat_scan(const RepeatScanParams& p, cudaStream_t stream);

struct RepeatGatherParams {
  int32_t rank = 0;
  int32_t dim = 0;
  int64_t out_sizes[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};
  int64_t src_strides[kMaxDims] = {};
  const int64_t* cumsum = nullptr;  // null: every element repeated `each` times
  int64_t count = 0;                // cumsum entries
  int64_t each = 1;
  void* out = nullptr;
  const void* src = nullptr;  // null: write the source index itself (repeat_interleave.Tensor)
  int32_t index_int32 = 0;    // the written index's type (int32, else int64)
  int32_t unused = 0;
  int64_t numel = 0;
  int64_t* error_word = nullptr;
};
cudaError_t launch_repeat_gather(const RepeatGatherParams& p, int element_size, unsigned blocks,
                                 cudaStream_t stream);

}  // namespace splice::cuda
