// The shape-rule table: every family's rules (shape_rules_<family>.cc) merged once, sorted by
// export target, and looked up by binary search. Keyed by target string, like the op table.
#include "ir/shape_rules.h"

#include <algorithm>

#include "ir/shape_rules_util.h"

namespace splice::ir {

OutputType OutputType::of(TensorType type) {
  OutputType o;
  o.tensor = std::move(type);
  return o;
}

OutputType OutputType::scalar(ValueKind kind, std::optional<SymExpr> expr) {
  OutputType o;
  o.kind = kind;
  o.expr = std::move(expr);
  return o;
}

OutputType OutputType::unknown() {
  OutputType o;
  o.known = false;
  return o;
}

namespace {

using rules::RuleEntry;

const std::vector<RuleEntry>& table() {
  static const std::vector<RuleEntry> entries = [] {
    std::vector<RuleEntry> v;
    for (auto family :
         {rules::view_rules(), rules::factory_rules(), rules::pointwise_rules(),
          rules::reduce_rules(), rules::nn_rules(), rules::index_rules(), rules::scalar_rules()}) {
      v.insert(v.end(), family.begin(), family.end());
    }
    std::sort(v.begin(), v.end(),
              [](const RuleEntry& a, const RuleEntry& b) { return a.op < b.op; });
    return v;
  }();
  return entries;
}

const RuleEntry* find_rule(OpId op) {
  const auto& v = table();
  auto it =
      std::lower_bound(v.begin(), v.end(), op, [](const RuleEntry& e, OpId o) { return e.op < o; });
  if (it == v.end() || it->op != op) return nullptr;
  return &*it;
}

}  // namespace

bool has_shape_rule(OpId op) { return find_rule(op) != nullptr; }

Result<std::vector<OutputType>> infer_outputs(const Node& node, ShapeEnv& env) {
  const RuleEntry* rule = find_rule(node.op_id());
  if (rule == nullptr)
    return make_error(ErrorKind::kInternal, "node '{}' ({}): the op has no shape rule", node.name(),
                      node.target());
  rules::RuleArgs args(node, env);
  SPLICE_ASSIGN_OR_RETURN(std::vector<OutputType> outs, rule->fn(args));
  for (OutputType& o : outs) {
    if (o.kind != ValueKind::kTensor) {
      if (o.expr) o.expr = env.simplify(*o.expr);
      continue;
    }
    for (SymExpr& s : o.tensor.sizes) s = env.simplify(s);
  }
  return outs;
}

Result<std::vector<TensorType>> infer_types(const Node& node, ShapeEnv& env) {
  SPLICE_ASSIGN_OR_RETURN(std::vector<OutputType> outs, infer_outputs(node, env));
  std::vector<TensorType> types;
  for (const OutputType& o : outs) {
    if (o.kind != ValueKind::kTensor || !o.known)
      return make_error(ErrorKind::kInternal, "node '{}' ({}): output {} is not a tensor",
                        node.name(), node.target(), types.size());
    types.push_back(o.tensor);
  }
  return types;
}

}  // namespace splice::ir
