// Shape rules of the symbolic-scalar ops: sym_size/sym_numel/sym_stride give the size
// expression they read; .item() gives a fresh unbacked symbol (a SymInt for an integer tensor,
// SymBool for bool, SymFloat for floating); Python's operators on SymInts give the expression
// they compute, with Python's result kinds (int op int is int, anything with a float is float,
// true division is float, comparisons are bool). The checks (_assert_scalar, _assert_async,
// sym_constrain_range, _assert_tensor_metadata) have no outputs; _assert_tensor_metadata's
// recorded size and dtype must be the tensor's.
#include <map>

#include "ir/shape_rules_util.h"

namespace splice::ir::rules {

namespace {

Result<Outputs> sym_size(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  if (a.node().op_id() == OpId::sym_size_int)
    return Outputs{OutputType::scalar(ValueKind::kSymInt, self->sizes[dim])};
  // The stride of the contiguous layout every value has in splice's programs.
  const Sizes later(self->sizes.begin() + dim + 1, self->sizes.end());
  return Outputs{OutputType::scalar(ValueKind::kSymInt, a.env().simplify(numel(later)))};
}

Result<Outputs> sym_numel(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  return Outputs{OutputType::scalar(ValueKind::kSymInt, a.env().simplify(numel(self->sizes)))};
}

Result<Outputs> sym_storage_offset(RuleArgs& a) {
  SPLICE_TRY(a.tensor("self"));
  return Outputs{OutputType::scalar(ValueKind::kSymInt, SymExpr(0))};
}

Result<Outputs> item(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_TRY(a.require_equal(a.env().simplify(numel(self->sizes)), 1,
                             fmt::format(".item() needs a tensor of one element, got shape {}",
                                         sizes_string(self->sizes))));
  if (self->dtype == DType::kBool) return Outputs{OutputType::scalar(ValueKind::kSymBool)};
  if (is_floating(self->dtype)) return Outputs{OutputType::scalar(ValueKind::kSymFloat)};
  return Outputs{OutputType::scalar(ValueKind::kSymInt, a.env().fresh_unbacked())};
}

Result<Outputs> no_outputs(RuleArgs&) { return Outputs{}; }

Result<Outputs> assert_async(RuleArgs& a) {
  SPLICE_TRY(a.tensor("self"));
  return Outputs{};
}

Result<Outputs> assert_tensor_metadata(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* t, a.tensor("a"));
  if (auto dtype = a.dtype("dtype"); dtype && *dtype != t->dtype)
    return a.error("the program asserts dtype {} for a tensor of dtype {}", dtype_name(*dtype),
                   dtype_name(t->dtype));
  if (!a.is_none("size")) {
    SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("size"));
    const std::string what = fmt::format("the program asserts size {} for a tensor of size {}",
                                         sizes_string(size), sizes_string(t->sizes));
    if (static_cast<int64_t>(size.size()) != t->rank()) return a.error("{}", what);
    for (size_t d = 0; d < size.size(); ++d)
      SPLICE_TRY(a.require_equal(size[d], t->sizes[d], what));
  }
  return Outputs{};
}

// ---- Python operators ----

// A scalar argument's kind and (for ints and bools) its expression.
struct ScalarOperand {
  NumberKind kind = NumberKind::kInt;
  std::optional<SymExpr> expr;
};

Result<ScalarOperand> scalar_operand(RuleArgs& a, size_t i) {
  const Arg& arg = a.node().arg(i);
  auto kind = number_kind(arg);
  if (!kind) return a.error("argument {} must be a number", i);
  ScalarOperand s{*kind, std::nullopt};
  if (arg.is<int64_t>()) s.expr = SymExpr(arg.as<int64_t>());
  if (arg.is<bool>()) s.expr = SymExpr(arg.as<bool>() ? 1 : 0);
  if (arg.is<Value*>() && *kind != NumberKind::kFloat) s.expr = arg.as<Value*>()->expr();
  return s;
}

Result<Outputs> python_operator(RuleArgs& a) {
  const std::string& t = a.node().target();
  const std::string_view name = std::string_view(t).substr(t.rfind('.') + 1);
  std::vector<ScalarOperand> ops;
  for (size_t i = 0; i < a.node().args().size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(ScalarOperand s, scalar_operand(a, i));
    ops.push_back(s);
  }
  auto any = [&](NumberKind k) {
    for (const auto& o : ops)
      if (o.kind == k) return true;
    return false;
  };
  auto all = [&](NumberKind k) {
    for (const auto& o : ops)
      if (o.kind != k) return false;
    return true;
  };
  auto exprs = [&]() -> std::optional<std::vector<SymExpr>> {
    std::vector<SymExpr> out;
    for (const auto& o : ops) {
      if (!o.expr) return std::nullopt;
      out.push_back(*o.expr);
    }
    return out;
  };
  const bool floating = any(NumberKind::kFloat);
  const auto e = exprs();
  auto result = [&](ValueKind kind, std::optional<SymExpr> expr) -> Result<Outputs> {
    if (kind == ValueKind::kSymFloat) expr.reset();
    return Outputs{OutputType::scalar(kind, std::move(expr))};
  };
  using E = std::optional<SymExpr>;
  const ValueKind number = floating ? ValueKind::kSymFloat : ValueKind::kSymInt;
  if (name == "add") return result(number, e ? E((*e)[0] + (*e)[1]) : E());
  if (name == "sub") return result(number, e ? E((*e)[0] - (*e)[1]) : E());
  if (name == "mul") return result(number, e ? E((*e)[0] * (*e)[1]) : E());
  if (name == "floordiv") return result(number, e ? E(floor_div((*e)[0], (*e)[1])) : E());
  if (name == "mod") return result(number, e ? E(py_mod((*e)[0], (*e)[1])) : E());
  if (name == "truediv") return result(ValueKind::kSymFloat, E());
  if (name == "neg") return result(number, e ? E(-(*e)[0]) : E());
  if (name == "pow") {
    // int ** int is an int for a non-negative exponent (a float otherwise, as in Python).
    if (!floating && e && (*e)[1].constant() && *(*e)[1].constant() >= 0)
      return result(ValueKind::kSymInt, SymExpr::make(SymOp::kPow, {(*e)[0], (*e)[1]}));
    const bool negative = e && (*e)[1].constant() && *(*e)[1].constant() < 0;
    return result(floating || negative ? ValueKind::kSymFloat : ValueKind::kSymInt, E());
  }
  static const std::map<std::string_view, SymOp> kCompare = {
      {"eq", SymOp::kEq}, {"ne", SymOp::kNe}, {"lt", SymOp::kLt},
      {"le", SymOp::kLe}, {"gt", SymOp::kGt}, {"ge", SymOp::kGe}};
  if (auto it = kCompare.find(name); it != kCompare.end())
    return result(ValueKind::kSymBool, e ? E(SymExpr::make(it->second, *e)) : E());
  if (name == "and_" || name == "or_") {
    if (!all(NumberKind::kBool)) return result(ValueKind::kSymInt, E());  // bitwise on ints
    return result(ValueKind::kSymBool,
                  e ? E(SymExpr::make(name == "and_" ? SymOp::kAnd : SymOp::kOr, *e)) : E());
  }
  if (name == "not_" || name == "sym_not")
    return result(ValueKind::kSymBool, e ? E(SymExpr::make(SymOp::kNot, *e)) : E());
  if (name == "sym_max" || name == "sym_min") {
    const SymOp op = name == "sym_max" ? SymOp::kMax : SymOp::kMin;
    return result(number, e ? E(SymExpr::make(op, *e)) : E());
  }
  if (name == "sym_float") return result(ValueKind::kSymFloat, E());
  if (name == "sym_int" || name == "ceil" || name == "floor")
    return result(ValueKind::kSymInt, floating ? E() : (e ? E((*e)[0]) : E()));
  return a.error("no rule for the Python operator '{}'", name);
}

constexpr RuleEntry kEntries[] = {
    {OpId::sym_size_int, sym_size},
    {OpId::sym_stride_int, sym_size},
    {OpId::sym_numel, sym_numel},
    {OpId::sym_storage_offset, sym_storage_offset},
    {OpId::_local_scalar_dense, item},
    {OpId::item, item},
    {OpId::_assert_scalar, no_outputs},
    {OpId::_assert_async_msg, assert_async},
    {OpId::sym_constrain_range, no_outputs},
    {OpId::sym_constrain_range_for_size, no_outputs},
    {OpId::_assert_tensor_metadata, assert_tensor_metadata},
    {OpId::py_add, python_operator},
    {OpId::py_sub, python_operator},
    {OpId::py_mul, python_operator},
    {OpId::py_floordiv, python_operator},
    {OpId::py_mod, python_operator},
    {OpId::py_truediv, python_operator},
    {OpId::py_pow, python_operator},
    {OpId::py_neg, python_operator},
    {OpId::py_eq, python_operator},
    {OpId::py_ne, python_operator},
    {OpId::py_lt, python_operator},
    {OpId::py_le, python_operator},
    {OpId::py_gt, python_operator},
    {OpId::py_ge, python_operator},
    {OpId::py_and, python_operator},
    {OpId::py_or, python_operator},
    {OpId::py_not, python_operator},
    {OpId::sym_max, python_operator},
    {OpId::sym_min, python_operator},
    {OpId::sym_not, python_operator},
    {OpId::sym_float, python_operator},
    {OpId::sym_int, python_operator},
    {OpId::py_math_ceil, python_operator},
    {OpId::py_math_floor, python_operator},
};

}  // namespace

std::span<const RuleEntry> scalar_rules() { return kEntries; }

}  // namespace splice::ir::rules
