#pragma once
// A test's own comparison of a node's recorded outputs with its op's shape rule, independent of
// ir::TypeChecker (which the loader uses), so a check that stopped comparing cannot make the
// rule tests pass by comparing nothing: each tensor output's dtype must be the rule's (or its
// other-device dtype), its rank the rule's, and each size provably equal to the rule's under
// the ranges; a SymInt's recorded expression must equal the rule's. A rule's fresh
// (data-dependent) size matches whatever the archive recorded.

#include <string>

#include <fmt/format.h>

#include "ir/program.h"
#include "ir/shape_rules.h"

namespace splice::test {

// "" when every output of every node agrees with its rule; else what differs, node by node.
inline std::string rule_disagreements(const ir::Program& program) {
  ir::ShapeEnv env(program);
  std::string out;
  for (const auto& node : program.graph.nodes()) {
    auto rule = ir::infer_outputs(*node, env);
    if (!rule.ok()) {
      out += fmt::format("\n{}: {}", node->name(), rule.error().message());
      continue;
    }
    for (size_t i = 0; i < node->outputs().size() && i < rule->size(); ++i) {
      const ir::Value* v = node->output(i);
      const ir::OutputType& r = (*rule)[i];
      if (v == nullptr || !r.known) continue;
      bool same = v->kind() == r.kind;
      if (same && v->is_tensor()) {
        same = (v->type().dtype == r.tensor.dtype || v->type().dtype == r.other_device_dtype) &&
               v->type().rank() == r.tensor.rank();
        for (int64_t d = 0; same && d < v->type().rank(); ++d) {
          const SymExpr& want = r.tensor.sizes[d];
          if (env.is_fresh(want)) continue;
          same = env.provably_equal(env.simplify(v->type().sizes[d]), want);
        }
      } else if (same && v->expr() && r.expr && !env.is_fresh(*r.expr)) {
        same = env.provably_equal(env.simplify(*v->expr()), *r.expr);
      }
      if (!same)
        out += fmt::format("\n{} output {}: recorded {}, rule {}", node->name(), i,
                           v->is_tensor() ? v->type().to_string() : v->name(),
                           r.kind == ir::ValueKind::kTensor ? r.tensor.to_string() : "a scalar");
    }
  }
  return out;
}

}  // namespace splice::test
