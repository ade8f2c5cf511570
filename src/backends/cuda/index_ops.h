#pragma once
// Launchers of the index ops with device-side bounds checks: index.Tensor, index_put (with
// accumulate), index_copy, index_select, embedding, index_add, gather and scatter
// (src and value). Semantics and argument errors follow the CPU kernels (cpu/index.cc,
// gather_scatter.cc); index values are checked on the device: a bad one records
// kIndexOutOfRange in the error word (failure_error gives the CPU's "index 7 is out of range
// for dim 0 of size 5"), nothing is read or written through it, and writing ops validate every
// index in a pass of their own first, so a failed write leaves `out` as it was.
// Index lists follow PyTorch: None keeps a dim; int64/int32 tensors index one dim each and
// broadcast together; a bool/uint8 mask covers as many dims as it has and becomes its
// nonzero coordinates (which needs their count on the host: the launch waits for the stream).
// Writes move whole rows: destinations are resolved once per index position, and a dense
// innermost row moves in units of up to 16 bytes.
// `out` is the op's result, allocated by the caller (index.Tensor: shape from
// resolve_indices); for writes it may be self itself (in place: only the indexed rows are
// written), else self is copied into it first. index_put and index_copy need ctx.workspace (a
// table of 4 bytes per destination of the indexed dims decides which of duplicate indices wins,
// as the CPU's last write does; masks keep their coordinates there); index reads need it only
// for masks.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/launch_context.h"
#include "support/error.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace splice::cuda {

// An index list resolved against self: masks turned into coordinates (in ctx.workspace, valid
// until the workspace is next reserved), the broadcast shape of the index tensors and the
// result's shape and dims.
struct ResolvedIndex {
  std::vector<std::optional<DeviceTensor>> per_dim;  // self.rank entries; int64/int32
  Shape bshape;
  Shape result_shape;
  // Per result dim: the self dim it walks (>= 0) or -(bshape dim + 1).
  std::vector<int32_t> result_dim;
  int32_t* winner = nullptr;  // write purposes with several positions: workspace table
  int64_t winner_entries = 0;
  void* scratch = nullptr;  // 16 bytes of workspace
};

enum class IndexPurpose { kRead, kWrite, kAccumulate };

Result<ResolvedIndex> resolve_indices(std::string_view op, const DeviceTensor& self,
                                      std::span<const std::optional<DeviceTensor>> indices,
                                      IndexPurpose purpose, const LaunchContext& ctx);

// index.Tensor(self, indices): out has resolved.result_shape and self's dtype.
Result<void> index_tensor(const DeviceTensor& out, const DeviceTensor& self,
                          const ResolvedIndex& resolved, const LaunchContext& ctx);

// index_put(self, indices, values, accumulate): values broadcast to the indexed shape, of
// self's dtype (or one element of any dtype, converted).
Result<void> index_put(const DeviceTensor& out, const DeviceTensor& self,
                       std::span<const std::optional<DeviceTensor>> indices,
                       const DeviceTensor& values, bool accumulate, const LaunchContext& ctx);

// index_copy(self, dim, index, source): out.select(dim, index[i]) = source.select(dim, i);
// index 0-d or 1-D int64/int32; the last duplicate wins.
Result<void> index_copy(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                        const DeviceTensor& index, const DeviceTensor& source,
                        const LaunchContext& ctx);

// index_add(self, dim, index, source, alpha): out.select(dim, index[i]) += alpha *
// source.select(dim, i), in index order, rounding to the dtype after each addition.
Result<void> index_add(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                       const DeviceTensor& index, const DeviceTensor& source, const Scalar& alpha,
                       const LaunchContext& ctx);

// index_select(self, dim, index): out = self with dim replaced by index.numel() entries.
Result<void> index_select(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                          const DeviceTensor& index, const LaunchContext& ctx);

// embedding(weight, indices): out = weight rows [indices.shape..., weight.size(1)].
Result<void> embedding(const DeviceTensor& out, const DeviceTensor& weight,
                       const DeviceTensor& indices, const LaunchContext& ctx);

// gather(self, dim, index): out[c] = self[c with dim -> index[c]] (int64 index of self's rank).
Result<void> gather(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                    const DeviceTensor& index, const LaunchContext& ctx);

// scatter.src(self, dim, index, src) when `src` is given, else scatter.value(self, dim, index,
// value): out = self with out[c with dim -> index[c]] = src[c] (or value); the last duplicate
// in row-major order wins.
Result<void> scatter(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                     const DeviceTensor& index, const DeviceTensor* src, const Scalar& value,
                     const LaunchContext& ctx);

}  // namespace splice::cuda
