// The matrix products' kernel choice (see matmul_kernels.h).
#include "plan/matmul_kernels.h"

#include <fmt/format.h>

#include "ir/ops.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::OpId;
using ir::Value;

// A dim at the archive's example sizes (-1 when it cannot be evaluated).
int64_t example_dim(const SymExpr& e, const SymBindings& hints) {
  auto v = e.evaluate(hints);
  return v.ok() ? *v : -1;
}

bool is_zero_scalar(const ir::Arg& arg) {
  if (arg.is<int64_t>()) return arg.as<int64_t>() == 0;
  if (arg.is<double>()) return arg.as<double>() == 0.0;
  return false;
}

}  // namespace

// Left operand x, right operand, optional C.
MatmulDecision decide_matmul(const Node& node, int32_t index, const SymBindings& hints,
                             const backend::Target& target) {
  MatmulDecision d;
  d.node = index;
  d.kernel = target.gemm_library;
  const OpId op = node.op().id;
  const size_t x_arg = op == OpId::addmm ? 1 : 0;
  const Value* x = tensor_at(node, x_arg);
  const Value* y = tensor_at(node, x_arg + 1);
  const Value* out = node.outputs().empty() ? nullptr : node.output(0);
  if (x == nullptr || y == nullptr || out == nullptr) {
    d.reason = "operands not tensors";
    return d;
  }
  const DType dtype = out->type().dtype;
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16 && dtype != DType::kFloat32) {
    d.reason = fmt::format("{} product: the GEMV kernels take float16, bfloat16 and float32",
                           dtype_name(dtype));
    return d;
  }
  const auto& xs = x->type().sizes;
  const auto& ys = y->type().sizes;
  // The right operand's batch (a weight has none): one GEMM per batch, not a shared weight.
  int64_t batch = 1;
  if (op == OpId::bmm || op == OpId::matmul)
    for (size_t i = 0; i + 2 < ys.size(); ++i)
      batch *= std::max<int64_t>(example_dim(ys[i], hints), 0);
  if (batch > 1) {
    d.reason = fmt::format("batched: {} right operands", batch);
    return d;
  }
  // Rows: every dim of x but its last (batch dims fold into rows as the weight is shared).
  int64_t rows = 1;
  bool symbolic = false;
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    rows *= std::max<int64_t>(example_dim(xs[i], hints), 0);
    symbolic = symbolic || !xs[i].is_constant();
  }
  const std::string at = symbolic ? " at the example sizes" : "";
  if (rows > target.gemv_max_rows) {
    d.reason = fmt::format("{} rows{} > {}: a GEMM reuses each weight tile", rows, at,
                           target.gemv_max_rows);
    return d;
  }
  if (op == OpId::addmm && !is_zero_scalar(node.arg("beta"))) {
    // self broadcasts to [m, n]; the epilogue adds it only when it is constant along m.
    const Value* self = tensor_at(node, 0);
    const auto& ss = self != nullptr ? self->type().sizes : xs;
    if (ss.size() >= 2 && example_dim(ss[ss.size() - 2], hints) != 1 && rows != 1) {
      d.reason = "addmm's self varies along the rows (not a bias)";
      return d;
    }
  }
  d.kernel = "gemv";
  d.reason = fmt::format("{} rows{} <= {}: a read of the weight", rows, at, target.gemv_max_rows);
  return d;
}

const Value* tensor_at(const Node& node, size_t i) {
  if (i >= node.args().size()) return nullptr;
  auto* v = std::get_if<Value*>(&node.arg(i).data);
  return v != nullptr && *v != nullptr && (*v)->is_tensor() ? *v : nullptr;
}

bool is_matrix_product(OpId op) {
  return op == OpId::mm || op == OpId::bmm || op == OpId::addmm || op == OpId::matmul ||
         op == OpId::linear;
}

std::vector<MatmulDecision> plan_matmuls(const ir::Program& program,
                                         const backend::Target& target) {
  std::vector<MatmulDecision> out;
  if (target.gemv_max_rows <= 0) return out;
  SymBindings hints(program.hints.begin(), program.hints.end());
  const auto& nodes = program.graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!is_matrix_product(nodes[i]->op().id)) continue;
    out.push_back(decide_matmul(*nodes[i], static_cast<int32_t>(i), hints, target));
  }
  return out;
}

}  // namespace splice::plan
