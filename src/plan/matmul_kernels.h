#pragma once
// Which kernel runs each matrix product (mm, bmm, addmm, matmul, linear) on a backend that has
// more than one, and why: the shape decides, at the archive's example sizes, from the target's
// data alone (backend::Target::gemv_max_rows, gemm_library), so a plan for the GPU is made on a
// machine without one. A product of at most gemv_max_rows rows — batch dims of the left operand
// folded into rows, the right operand shared — in float16, bfloat16 or float32, with no C or a
// C that is a vector over the output's columns (linear's bias, addmm's [n] self), is a read of
// its weight: the backend's GEMV kernels. Anything else goes to its GEMM library. Both are one
// launch, so the choice never changes the plan's kernel count (the same at hidden 64 as at
// 2048). The CUDA backend applies the same rule to the tensors it gets (choose_gemv in
// backends/cuda/matmul_exec.h); a symbolic row count can differ from the example's at run time.
// A target with gemv_max_rows == 0 (the CPU) records nothing.

#include <vector>

#include "backends/target.h"
#include "ir/ops.h"
#include "ir/program.h"
#include "plan/plan.h"

namespace splice::plan {

// mm, bmm, addmm, matmul, linear: the ops a decision is made for.
bool is_matrix_product(ir::OpId op);

// Argument i of `node` when it is a tensor value, else null.
const ir::Value* tensor_at(const ir::Node& node, size_t i);

// The decision for one product (graph node `index`), sizes evaluated at `hints`.
MatmulDecision decide_matmul(const ir::Node& node, int32_t index, const SymBindings& hints,
                             const backend::Target& target);

std::vector<MatmulDecision> plan_matmuls(const ir::Program& program, const backend::Target& target);

}  // namespace splice::plan
