#pragma once
// Copies on the GPU, all through the generated pointwise copy kernel (a cast when the dtypes
// differ, with c10's conversions) or, for launches without an error word (a memcpy cannot skip
// itself once the call has failed), a plain cudaMemcpyAsync when both sides are dense and of
// one dtype: strided copy/cast with broadcasting, fill, cat and stack (one copy per input into its
// slice of the output), and the slice writes slice_scatter / select_scatter, which store only
// the written slice when run in place (out == self), including a slice whose start is a
// position read on the device when the kernel runs (a KV-cache update that a CUDA graph can
// replay with a moving position).
// Semantics and argument errors follow the CPU kernels (cpu/cat.cc, shape_ops.cc's stack,
// scatter_writes.cc).

#include <cstdint>
#include <optional>
#include <span>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/launch_context.h"
#include "backends/cuda/pointwise_launch.h"
#include "support/error.h"
#include "tensor/scalar.h"

namespace splice::cuda {

// dst = src converted to dst's dtype, src broadcast to dst's shape (numpy rules).
Result<void> copy_cast(const DeviceTensor& dst, const DeviceTensor& src, const LaunchContext& ctx);

// dst = src converted (src broadcast to dst's shape), where either of them may be a window that
// starts at a position read on the device when the kernel runs (PointwiseOperand::position;
// pointwise_launch.h says how it is checked: a bad position records kPositionOutOfRange and
// nothing is written). Needs an error word.
Result<void> copy_at_position(const PointwiseOperand& dst, const PointwiseOperand& src,
                              const LaunchContext& ctx);

// Every element of dst = value converted to dst's dtype (c10: 300 into int8 is 44).
Result<void> fill(const DeviceTensor& dst, const Scalar& value, const LaunchContext& ctx);

// cat(tensors, dim): out has the promoted dtype and the summed size on dim; legacy 1-D empty
// inputs (shape [0]) are skipped, as PyTorch does.
Result<void> cat(const DeviceTensor& out, std::span<const DeviceTensor> inputs, int64_t dim,
                 const LaunchContext& ctx);

// stack(tensors, dim): every input of one shape; out has a new dim of size inputs.size() at dim.
Result<void> stack(const DeviceTensor& out, std::span<const DeviceTensor> inputs, int64_t dim,
                   const LaunchContext& ctx);

// slice_scatter(self, src, dim, start, end, step): out = self with out[dim slice] = src
// (converted to self's dtype; src must have exactly the slice's shape). In place when
// out.data == self.data with self's layout (only the slice is written); otherwise self is
// copied into out first.
Result<void> slice_scatter(const DeviceTensor& out, const DeviceTensor& self,
                           const DeviceTensor& src, int64_t dim, std::optional<int64_t> start,
                           std::optional<int64_t> end, int64_t step, const LaunchContext& ctx);

// select_scatter(self, src, dim, index): out = self with out.select(dim, index) = src.
Result<void> select_scatter(const DeviceTensor& out, const DeviceTensor& self,
                            const DeviceTensor& src, int64_t dim, int64_t index,
                            const LaunchContext& ctx);

// base[..., p:p+len, ...] = src along `dim` (len = src's size there) with p read from device
// memory (`position`, one int64) when the kernel runs: 0 <= p <= base.size(dim) - len, else the
// error word records kPositionOutOfRange and nothing is written. Moves only src's elements.
Result<void> slice_write_at_position(const DeviceTensor& base, const DeviceTensor& src, int64_t dim,
                                     const int64_t* position, const LaunchContext& ctx);

}  // namespace splice::cuda
