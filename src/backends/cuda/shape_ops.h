#pragma once
// Launchers for the shape-rearranging copies of the op table, each one remap kernel launch
// (remap_kernel.h) with the CPU kernels' semantics (cpu/shape_ops.cc, repeat.cc):
// flip, roll (per dim, or of the flattened tensor when dims is empty), repeat,
// repeat_interleave by an integer count, tril/triu, and pad in every mode (constant with
// negative pads cropping, reflect, replicate, circular). `out` is the op's result, allocated by
// the caller with the shape and dtype PyTorch gives (checked here; it may be a strided view,
// e.g. the slice a later write reads); `self` is any strided view of the same dtype. Argument
// errors are the CPU kernels' messages; launch errors are kBackend.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/launch_context.h"
#include "support/error.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace splice::cuda {

// flip(self, dims): out has self's shape.
Result<void> flip(const DeviceTensor& out, const DeviceTensor& self, std::span<const int64_t> dims,
                  const LaunchContext& ctx);

// roll(self, shifts, dims): out has self's shape; out[(i + shift) mod n] = self[i] per rolled
// dim, or over the flattened tensor when dims is empty (shifts then has one entry).
Result<void> roll(const DeviceTensor& out, const DeviceTensor& self,
                  std::span<const int64_t> shifts, std::span<const int64_t> dims,
                  const LaunchContext& ctx);

// repeat(self, repeats): out's rank is repeats.size() (leading dims added), out[d] =
// size[d] * repeats[d].
Result<void> repeat(const DeviceTensor& out, const DeviceTensor& self,
                    std::span<const int64_t> repeats, const LaunchContext& ctx);

// repeat_interleave.self_int(self, repeats, dim): each element repeated `repeats` times along
// dim; dim None: over the flattened tensor (out is 1-D).
Result<void> repeat_interleave(const DeviceTensor& out, const DeviceTensor& self, int64_t repeats,
                               std::optional<int64_t> dim, const LaunchContext& ctx);

// tril (lower) / triu(self, diagonal): self with the elements outside the triangle of the
// last two dims zeroed; out has self's shape.
Result<void> tril_triu(const DeviceTensor& out, const DeviceTensor& self, int64_t diagonal,
                       bool lower, const LaunchContext& ctx);

// repeat_interleave.Tensor(repeats, output_size) and .self_Tensor(self, repeats, dim,
// output_size): the output's length along the repeated dim is the sum of the repeats, which
// only the device knows: plan_repeat_interleave computes it (the inclusive sum of the repeats
// in ctx.workspace; a negative count records kNegativeRepeat) and waits for the stream to read
// it; the caller then allocates `out` and runs repeat_interleave_tensor with the plan (before
// anything else reserves the workspace). `self` is null for the .Tensor form, whose output is
// [total] indices in the repeats' dtype.
struct RepeatInterleavePlan {
  int64_t total = 0;  // the output's size along dim
  Shape out_shape;
  const int64_t* cumsum = nullptr;
  int64_t count = 0;  // repeats entries
  int64_t each = 0;   // one count for every element (count == 1 with several elements)
  bool broadcast = false;
  int64_t dim = 0;
  bool has_self = false;  // .self_Tensor
  DeviceTensor input;     // self (flattened to 1-D when dim is None)
};
Result<RepeatInterleavePlan> plan_repeat_interleave(const DeviceTensor* self,
                                                    const DeviceTensor& repeats,
                                                    std::optional<int64_t> dim,
                                                    std::optional<int64_t> output_size,
                                                    const LaunchContext& ctx);
Result<void> repeat_interleave_tensor(const DeviceTensor& out, const DeviceTensor& repeats,
                                      const RepeatInterleavePlan& plan, const LaunchContext& ctx);

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };
// The mode named as aten.pad.default names it; kUnsupportedOp otherwise.
Result<PadMode> pad_mode(std::string_view op, std::string_view name);

// constant_pad_nd(self, pad, value) and pad(self, pad, mode, value): pad[2k], pad[2k+1] pad the
// front and back of dim rank-1-k. `value` (constant mode) is converted to self's dtype.
// `op` names the target in errors ("aten.pad.default").
Result<void> pad(std::string_view op, const DeviceTensor& out, const DeviceTensor& self,
                 std::span<const int64_t> pads, PadMode mode, const Scalar& value,
                 const LaunchContext& ctx);

}  // namespace splice::cuda
