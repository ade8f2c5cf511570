// The load-time type check (type_check.h): each node's rule against its recorded outputs.
#include "ir/type_check.h"

#include "ir/shape_rules.h"

namespace splice::ir {

namespace {

std::string label(const Node& node) {
  return fmt::format("node '{}' ({})", node.name(), node.target());
}

bool mentions_fresh(const SymExpr& e, const ShapeEnv& env) {
  for (const std::string& s : e.free_symbols())
    if (env.is_fresh(SymExpr::symbol(s))) return true;
  return false;
}

std::string describe_rule(const OutputType& o) {
  if (o.kind == ValueKind::kTensor) return o.tensor.to_string();
  std::string kind = value_kind_name(o.kind);
  return o.expr ? fmt::format("{}({})", kind, o.expr->to_string()) : kind;
}

std::string describe_value(const Value& v) {
  if (v.is_tensor()) return v.type().to_string();
  std::string kind = value_kind_name(v.kind());
  return v.expr() ? fmt::format("{}({})", kind, v.expr()->to_string()) : kind;
}

}  // namespace

void TypeChecker::keep(ShapeCheck check) {
  check.condition = sym_substitute(check.condition, unified_);
  // A condition on a data-dependent size the archive never names cannot be evaluated.
  if (mentions_fresh(check.condition, env_)) return;
  check.condition = canonical_condition(env_.simplify(check.condition));
  if (env_.decide(check.condition) == true) return;
  if (check_keys_.insert(check.condition.text()).second) checks_.push_back(std::move(check));
}

Result<void> TypeChecker::check_equal(const SymExpr& recorded, SymExpr inferred,
                                      const std::string& message,
                                      const std::string& undecided_message) {
  if (env_.is_fresh(inferred) && !unified_.count(inferred.symbol_name())) {
    // A data-dependent size: the archive's expression names it from here on.
    unified_.emplace(inferred.symbol_name(), recorded);
    return ok_result();
  }
  inferred = sym_substitute(inferred, unified_);
  if (mentions_fresh(inferred, env_)) return ok_result();
  const SymExpr condition =
      SymExpr::make(SymOp::kEq, {env_.simplify(recorded), env_.simplify(inferred)});
  auto decided = env_.decide(condition);
  if (decided == true) return ok_result();
  if (decided == false) return Error(ErrorKind::kBadArchive, message);
  keep({condition, undecided_message});
  return ok_result();
}

Result<void> TypeChecker::compare(const Node& node, const Value& v, const OutputType& rule) {
  const std::string message =
      fmt::format("{}: output '{}' is recorded as {}, but the op gives {}", label(node), v.name(),
                  describe_value(v), describe_rule(rule));
  if (v.kind() != rule.kind) return Error(ErrorKind::kBadArchive, message);
  if (!v.is_tensor()) {
    if (!v.expr() || !rule.expr) return ok_result();
    return check_equal(*v.expr(), *rule.expr, message, message);
  }
  const TensorType& recorded = v.type();
  const bool dtype_ok = recorded.dtype == rule.tensor.dtype ||
                        (rule.other_device_dtype && recorded.dtype == *rule.other_device_dtype);
  if (!dtype_ok || recorded.rank() != rule.tensor.rank())
    return Error(ErrorKind::kBadArchive, message);
  for (int64_t d = 0; d < recorded.rank(); ++d) {
    SPLICE_TRY(check_equal(recorded.sizes[d], rule.tensor.sizes[d], message,
                           fmt::format("{} (dim {})", message, d)));
  }
  return ok_result();
}

Result<void> TypeChecker::check(const Node& node) {
  env_.set_context(label(node));
  auto inferred = infer_outputs(node, env_);
  std::vector<ShapeCheck> required = env_.take_checks();
  if (!inferred.ok()) return inferred.error();
  const auto& outputs = node.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value* v = outputs[i];
    if (v == nullptr) continue;
    if (i >= inferred->size())
      return make_error(ErrorKind::kBadArchive,
                        "{}: output '{}' is recorded, but the op gives {} "
                        "outputs",
                        label(node), v->name(), inferred->size());
    const OutputType& rule = (*inferred)[i];
    if (!rule.known) continue;
    SPLICE_TRY(compare(node, *v, rule));
  }
  // The op's own requirements, with data-dependent sizes under the archive's names.
  for (ShapeCheck& c : required) keep(std::move(c));
  return ok_result();
}

Result<std::vector<ShapeCheck>> check_types(const Program& program) {
  TypeChecker checker(program.graph, program.ranges);
  for (const auto& node : program.graph.nodes()) SPLICE_TRY(checker.check(*node));
  return checker.take_checks();
}

}  // namespace splice::ir
