#pragma once
// The load-time check that a backend runs every node of a program: an op the backend has no
// kernel for, or a kernel that does not run the node's dtype (the backend's table declares
// op × dtype: backend::KernelEntry::dtypes), fails the load with kUnsupportedOp naming the op
// (its ATen overload), the dtype and the backend, instead of failing the first call. Reads the
// backend's Target only, as planning does.

#include <optional>

#include "backends/target.h"
#include "ir/program.h"

namespace splice::runtime {

// The dtype a node's kernel dispatches on, the one Target::check_runs checks: the node's first
// tensor argument's (`self`, `input`, `query`; the first tensor of a Tensor[] such as cat's),
// else, for an op without tensor arguments (a factory: zeros, arange, full), its first tensor
// output's; nullopt when it has neither.
std::optional<DType> dispatch_dtype(const ir::Node& node);

// OK when `target` has a kernel for every node that runs on a backend, and each kernel runs its
// node's dispatch dtype. Otherwise one kUnsupportedOp error: the ops without a kernel ("the cpu
// backend has no kernel for 2 op(s): aten.a.default, aten.b.default"), else every op × dtype
// the backend lacks ("the cuda backend has no kernel for aten._softmax.default on i64 tensors
// (it runs f16, f32, f64, bf16), needed by node '_softmax'"; several joined by "; ").
Result<void> check_kernels(const ir::Program& program, const backend::Target& target);

}  // namespace splice::runtime
