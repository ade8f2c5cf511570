// The shape-rule table: every family's rules (shape_rules_<family>.cc) merged once, sorted by
// OpId, and looked up by binary search.
// An in-place op of the training IR has its functional twin's rule, then eager's in-place
// checks (the result fits self's shape and casts to self's dtype) and self's type.
#include "ir/shape_rules.h"

#include <algorithm>

#include "ir/inplace_ops.h"
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
    for (auto family : {rules::view_rules(), rules::factory_rules(), rules::pointwise_rules(),
                        rules::reduce_rules(), rules::nn_rules(), rules::index_rules(),
                        rules::scalar_rules(), rules::model_rules(), rules::pool3d_rules()}) {
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

// The rule of a node's op; an in-place op takes its functional twin's, whose arguments it
// shares by name.
const RuleEntry* rule_of(const Node& node) {
  if (auto functional = functional_of(node.op())) return find_rule(*functional);
  return find_rule(node.op_id());
}

// An in-place op writes its functional result into self, so it gives self's type, provided the
// result has exactly self's shape and casts to self's dtype (eager's checks of in-place ops).
Result<std::vector<OutputType>> inplace_result(const rules::RuleArgs& a,
                                               std::vector<OutputType> outs) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (outs.size() != 1 || outs[0].kind != ValueKind::kTensor || !outs[0].known)
    return a.error("an in-place op must give one tensor");
  const TensorType& result = outs[0].tensor;
  bool fits = result.rank() == self->rank();
  for (int64_t d = 0; fits && d < self->rank(); ++d)
    fits = a.env().provably_equal(result.sizes[d], self->sizes[d]);
  if (!fits)
    return a.error("output with shape {} doesn't match the broadcast shape {}",
                   rules::sizes_string(self->sizes), rules::sizes_string(result.sizes));
  // c10::canCast: no float result into an integer tensor, nothing but bool into a bool one.
  const bool to_int = is_integral(self->dtype) && is_floating(result.dtype);
  const bool to_bool = self->dtype == DType::kBool && result.dtype != DType::kBool;
  if (to_int || to_bool)
    return a.error("result type {} can't be cast to the desired output type {}",
                   dtype_torch_name(result.dtype), dtype_torch_name(self->dtype));
  return std::vector<OutputType>{OutputType::of(*self)};
}

}  // namespace

bool has_shape_rule(OpId op) { return find_rule(op) != nullptr; }

Result<std::vector<OutputType>> infer_outputs(const Node& node, ShapeEnv& env) {
  const RuleEntry* rule = rule_of(node);
  if (rule == nullptr)
    return make_error(ErrorKind::kInternal, "node '{}' ({}): the op has no shape rule", node.name(),
                      node.target());
  rules::RuleArgs args(node, env);
  SPLICE_ASSIGN_OR_RETURN(std::vector<OutputType> outs, rule->fn(args));
  if (functional_of(node.op())) {
    SPLICE_ASSIGN_OR_RETURN(outs, inplace_result(args, std::move(outs)));
  }
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
