#pragma once
// What every CPU kernel file shares: argument access (Args and KCHECK, from
// backends/common/args.h), dim wrapping, checked allocation, the kernel boundary and the table
// entry template.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/common/args.h"
#include "backends/cpu/registry.h"
#include "support/error.h"
#include "tensor/indexing.h"  // wrap_dim, wrap_index
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace splice::cpu {

using backend::Args;
using Outputs = std::vector<Tensor>;
// The signature of the kernels behind the registry: the op name comes first so shared
// implementations can name the exact overload in their errors.
using OpKernel = Result<Outputs> (*)(std::string_view op, std::span<const KernelArg> args);

// A kernel's output tensor, after checking sizes are >= 0 and bytes don't overflow: the
// runtime's planned destination (KernelCall::destination) when one of this dtype and sizes is
// pending, else a new contiguous zero-filled tensor. Kernels call it for their output before
// any scratch.
Result<Tensor> new_tensor(std::string_view op, DType dtype, const Shape& sizes);
// new_tensor without the checks, for sizes already known valid (copies of a tensor).
Tensor output_or_new(DType dtype, const Shape& sizes);
// The tensor a functional write kernel (slice_scatter, index_put, ...) writes into: self
// itself when the call is in place (KernelCall::in_place), else a contiguous copy of self.
Tensor write_base(const Tensor& self);

// Allocation inside kernels: new host tensors and copies that throw std::bad_alloc when memory
// runs out. Kernels allocate deep inside loops and helpers (as std::vector does anyway), so
// running out is turned into an Error once, at the kernel boundary (run_kernel), instead of
// threading a Result through every helper.
Tensor empty(DType dtype, const Shape& sizes);
Tensor contiguous_copy(const Tensor& t);
Tensor cast_copy(const Tensor& t, DType dtype);
Tensor to_dtype(const Tensor& t, DType dtype);
// backend::scalar_to_tensor, with running out of memory thrown as the helpers above do.
Tensor scalar_to_tensor(const Scalar& s, DType dtype);
// A tensor's single element as a double (for tests and scalar-like reads); t.numel() == 1.
double item_as_double(const Tensor& t);

// The kernel boundary: runs `impl` for op `op` with what `call` asks (its destination, in-place
// request and the session's thread pool made current), and turns running out of memory into an
// Error naming the op.
Result<Outputs> run_kernel(const KernelCall& call, std::string_view op,
                           std::span<const KernelArg> args, OpKernel impl);

// Each registered op gets its own KernelFn that passes the op's target to a shared
// implementation (so errors name the exact overload).
template <ir::OpId kOp, OpKernel kImpl>
Result<Outputs> bound_kernel(const KernelCall& call, std::span<const KernelArg> args) {
  return run_kernel(call, ir::op_target(kOp), args, kImpl);
}

// A table entry: the op, its kernel and its capabilities (backends/kernel_abi.h).
template <ir::OpId kOp, OpKernel kImpl>
constexpr KernelEntry entry(uint32_t caps = backend::kNoCaps) {
  return {kOp, &bound_kernel<kOp, kImpl>, caps};
}
using backend::kStoresIntoContiguousDestination;
using backend::kStoresIntoDestination;
using backend::kWritesInPlace;
using ir::OpId;

// Each op family file's table (registry.cc merges them).
std::span<const KernelEntry> view_kernels();
std::span<const KernelEntry> copy_kernels();
std::span<const KernelEntry> factory_kernels();
std::span<const KernelEntry> binary_kernels();
std::span<const KernelEntry> unary_kernels();
// The ops defined whole in ir/ops/pointwise/ (pointwise_defined.cc).
std::span<const KernelEntry> defined_pointwise_kernels();
std::span<const KernelEntry> compare_kernels();
std::span<const KernelEntry> reduce_kernels();
std::span<const KernelEntry> matmul_kernels();
std::span<const KernelEntry> cat_kernels();
std::span<const KernelEntry> scatter_kernels();
std::span<const KernelEntry> index_kernels();
std::span<const KernelEntry> nn_kernels();
std::span<const KernelEntry> attention_kernels();
std::span<const KernelEntry> gather_scatter_kernels();
std::span<const KernelEntry> minmax_kernels();
std::span<const KernelEntry> extrema_kernels();
std::span<const KernelEntry> repeat_kernels();
std::span<const KernelEntry> composite_math_kernels();
std::span<const KernelEntry> pointwise_more_kernels();
std::span<const KernelEntry> shape_op_kernels();
std::span<const KernelEntry> sort_kernels();  // sort.cc: sort, sort.stable, topk

}  // namespace splice::cpu
