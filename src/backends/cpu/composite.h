#pragma once
// Helpers shared by the composite-op kernels (composite.cc, composite_math.cc): running another
// registered kernel by its target, and the diagonal view that einsum also needs.

#include <string_view>
#include <vector>

#include "backends/cpu/args.h"

namespace splice::cpu {

// Calls the kernel registered for `target` (composite ops are built from the primitive ones,
// as ATen's CompositeImplicit kernels are); its errors get `op` as context.
Result<Outputs> run_kernel(std::string_view op, std::string_view target,
                           std::vector<KernelArg> args);
// The same for a kernel with exactly one output.
Result<Tensor> run_kernel1(std::string_view op, std::string_view target,
                           std::vector<KernelArg> args);

// aten.pad.default in every mode: constant (negative pads crop), reflect, replicate and
// circular (the last 1-3 dims of a 2-5 dim input, as PyTorch); other modes are kUnsupportedOp
// naming the mode. shape_ops.cc registers it for aten.pad.default (beside constant_pad_nd).
Result<Outputs> pad_all_modes(std::string_view op, std::span<const KernelArg> args);

// The diagonal of dims dim1/dim2 (wrapped here) shifted by offset, as a view whose last dim is
// the diagonal (aten.diagonal).
Result<Tensor> diagonal_view(std::string_view op, const Tensor& self, int64_t offset, int64_t dim1,
                             int64_t dim2);

}  // namespace splice::cpu
