// Shared machinery of the shape rules (shape_rules_util.h): argument access by schema name,
// dim wrapping, broadcasting, PyTorch's elementwise type promotion, reduction shapes and
// Python slice lengths, all over symbolic sizes.
#include "ir/shape_rules_util.h"

#include <algorithm>
#include <limits>

#include "ir/printer.h"

namespace splice::ir::rules {

// ---- RuleArgs ----

std::string RuleArgs::label() const {
  return fmt::format("node '{}' ({})", node_.name(), node_.target());
}

Result<void> RuleArgs::require(const SymExpr& condition, std::string_view what) const {
  const std::string saved = env_.context();
  env_.set_context(label());
  auto r = env_.require(condition, what);
  env_.set_context(saved);
  return r;
}

Result<void> RuleArgs::require_equal(const SymExpr& a, const SymExpr& b,
                                     std::string_view what) const {
  if (a == b) return ok_result();
  return require(SymExpr::make(SymOp::kEq, {a, b}), what);
}

Result<const TensorType*> RuleArgs::tensor(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<Value*>() && a.as<Value*>() != nullptr && a.as<Value*>()->is_tensor())
    return &a.as<Value*>()->type();
  return error("argument '{}' must be a tensor", name);
}

Result<const TensorType*> RuleArgs::optional_tensor(std::string_view name) const {
  if (is_none(name)) return static_cast<const TensorType*>(nullptr);
  return tensor(name);
}

std::optional<NumberKind> number_kind(const Arg& a) {
  if (a.is<bool>()) return NumberKind::kBool;
  if (a.is<int64_t>()) return NumberKind::kInt;
  if (a.is<double>()) return NumberKind::kFloat;
  if (a.is<Value*>() && a.as<Value*>() != nullptr) {
    switch (a.as<Value*>()->kind()) {
      case ValueKind::kSymInt:
        return NumberKind::kInt;
      case ValueKind::kSymFloat:
        return NumberKind::kFloat;
      case ValueKind::kSymBool:
        return NumberKind::kBool;
      default:
        break;
    }
  }
  return std::nullopt;
}

Result<Operand> RuleArgs::operand(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<Value*>() && a.as<Value*>() != nullptr && a.as<Value*>()->is_tensor())
    return Operand{&a.as<Value*>()->type(), NumberKind::kInt};
  if (auto k = number_kind(a)) return Operand{nullptr, *k};
  return error("argument '{}' must be a tensor or a number", name);
}

Result<std::vector<const TensorType*>> RuleArgs::tensor_list(std::string_view name) const {
  const Arg& a = arg(name);
  if (!a.is<std::vector<Value*>>()) return error("argument '{}' must be a tensor list", name);
  std::vector<const TensorType*> out;
  for (const Value* v : a.as<std::vector<Value*>>()) out.push_back(v ? &v->type() : nullptr);
  return out;
}

Result<int64_t> RuleArgs::integer(std::string_view name) const {
  if (auto v = optional_integer(name)) return *v;
  return error("argument '{}' must be a constant integer", name);
}

std::optional<int64_t> RuleArgs::optional_integer(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<int64_t>()) return a.as<int64_t>();
  if (a.is<bool>()) return a.as<bool>() ? 1 : 0;
  if (a.is<Value*>() && a.as<Value*>() != nullptr && a.as<Value*>()->expr())
    return a.as<Value*>()->expr()->constant();
  return std::nullopt;
}

namespace {

SymExpr sym_of_value(const Value* v, ShapeEnv& env) {
  if (v != nullptr && v->expr()) return *v->expr();
  return env.fresh_unbacked();
}

}  // namespace

Result<SymExpr> RuleArgs::sym_int(std::string_view name) const {
  SPLICE_ASSIGN_OR_RETURN(auto v, optional_sym_int(name));
  if (!v) return error("argument '{}' must not be None", name);
  return *v;
}

Result<std::optional<SymExpr>> RuleArgs::optional_sym_int(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is_none()) return std::optional<SymExpr>();
  if (a.is<int64_t>()) return std::optional<SymExpr>(SymExpr(a.as<int64_t>()));
  if (a.is<bool>()) return std::optional<SymExpr>(SymExpr(a.as<bool>() ? 1 : 0));
  if (a.is<Value*>() && a.as<Value*>() != nullptr && !a.as<Value*>()->is_tensor())
    return std::optional<SymExpr>(sym_of_value(a.as<Value*>(), env_));
  return error("argument '{}' must be an integer", name);
}

Result<Sizes> RuleArgs::sym_list(std::string_view name) const {
  const Arg& a = arg(name);
  if (!a.is<std::vector<SymIntArg>>()) return error("argument '{}' must be an int list", name);
  Sizes out;
  for (const SymIntArg& e : a.as<std::vector<SymIntArg>>()) {
    if (const auto* c = std::get_if<int64_t>(&e)) {
      out.emplace_back(*c);
    } else {
      out.push_back(sym_of_value(std::get<Value*>(e), env_));
    }
  }
  return out;
}

Result<std::vector<int64_t>> RuleArgs::int_list(std::string_view name) const {
  SPLICE_ASSIGN_OR_RETURN(auto v, optional_int_list(name));
  if (!v) return error("argument '{}' must not be None", name);
  return *v;
}

Result<std::optional<std::vector<int64_t>>> RuleArgs::optional_int_list(
    std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is_none()) return std::optional<std::vector<int64_t>>();
  if (a.is<int64_t>())
    return std::optional<std::vector<int64_t>>(std::vector<int64_t>{a.as<int64_t>()});
  if (!a.is<std::vector<SymIntArg>>()) return error("argument '{}' must be an int list", name);
  std::vector<int64_t> out;
  for (const SymIntArg& e : a.as<std::vector<SymIntArg>>()) {
    if (const auto* c = std::get_if<int64_t>(&e)) {
      out.push_back(*c);
      continue;
    }
    const Value* v = std::get<Value*>(e);
    if (v == nullptr || !v->expr() || !v->expr()->constant())
      return error("argument '{}' must hold constant integers", name);
    out.push_back(*v->expr()->constant());
  }
  return std::optional<std::vector<int64_t>>(std::move(out));
}

std::optional<DType> RuleArgs::dtype(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<DType>()) return a.as<DType>();
  return std::nullopt;
}

Result<bool> RuleArgs::boolean(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<bool>()) return a.as<bool>();
  if (a.is<int64_t>()) return a.as<int64_t>() != 0;
  if (a.is<Value*>() && a.as<Value*>() != nullptr && a.as<Value*>()->expr()) {
    if (auto c = a.as<Value*>()->expr()->constant()) return *c != 0;
  }
  return error("argument '{}' must be a constant bool", name);
}

std::optional<double> RuleArgs::number(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<bool>()) return a.as<bool>() ? 1.0 : 0.0;
  if (a.is<int64_t>()) return static_cast<double>(a.as<int64_t>());
  if (a.is<double>()) return a.as<double>();
  if (a.is<Value*>() && a.as<Value*>() != nullptr && a.as<Value*>()->expr()) {
    if (auto c = a.as<Value*>()->expr()->constant()) return static_cast<double>(*c);
  }
  return std::nullopt;
}

std::optional<std::string> RuleArgs::string(std::string_view name) const {
  const Arg& a = arg(name);
  if (a.is<std::string>()) return a.as<std::string>();
  return std::nullopt;
}

// ---- results ----

OutputType tensor_out(DType dtype, Sizes sizes) {
  return OutputType::of(TensorType{dtype, std::move(sizes)});
}
Outputs one(DType dtype, Sizes sizes) { return {tensor_out(dtype, std::move(sizes))}; }
Outputs same_as(const TensorType& t) { return {OutputType::of(t)}; }

// ---- dims ----

Result<int64_t> wrap_dim(const RuleArgs& a, int64_t dim, int64_t rank, bool wrap_scalar) {
  int64_t r = rank;
  if (r == 0 && wrap_scalar) r = 1;
  if (r == 0 || dim < -r || dim >= r) {
    if (r == 0) return a.error("dim {} given for a 0-d tensor, which has no dims to index", dim);
    return a.error("dim {} is out of range (expected to be in range of [{}, {}])", dim, -r, r - 1);
  }
  return dim < 0 ? dim + r : dim;
}

SymExpr numel(const Sizes& sizes) {
  if (sizes.empty()) return SymExpr(1);
  return SymExpr::make(SymOp::kMul, sizes);
}

std::string sizes_string(const Sizes& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + sizes[i].to_string();
  return s + "]";
}

// ---- broadcasting ----

Result<Sizes> broadcast(const RuleArgs& a, const std::vector<const Sizes*>& shapes) {
  size_t rank = 0;
  for (const Sizes* s : shapes) rank = std::max(rank, s->size());
  Sizes out(rank, SymExpr(1));
  ShapeEnv& env = a.env();
  for (const Sizes* s : shapes) {
    const size_t offset = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      SymExpr& cur = out[offset + i];
      const SymExpr& next = (*s)[i];
      if (env.provably_equal(cur, next) || env.decide(SymExpr::make(SymOp::kEq, {next, 1})) == true)
        continue;
      if (env.decide(SymExpr::make(SymOp::kEq, {cur, 1})) == true) {
        cur = next;
        continue;
      }
      const std::string what =
          fmt::format("shapes do not broadcast: size {} against {} at dim {} of the result",
                      cur.to_string(), next.to_string(), offset + i);
      // Neither can be 1 (dynamic dims are at least 2): they must be equal.
      if (env.decide(SymExpr::make(SymOp::kEq, {cur, 1})) == false &&
          env.decide(SymExpr::make(SymOp::kEq, {next, 1})) == false) {
        SPLICE_TRY(a.require_equal(cur, next, what));
        continue;
      }
      const SymExpr ok = SymExpr::make(
          SymOp::kOr, {SymExpr::make(SymOp::kEq, {cur, next}), SymExpr::make(SymOp::kEq, {cur, 1}),
                       SymExpr::make(SymOp::kEq, {next, 1})});
      SPLICE_TRY(a.require(ok, what));
      cur = env.simplify(sym_max(cur, next));
    }
  }
  return out;
}

Result<Sizes> broadcast(const RuleArgs& a, std::initializer_list<const Sizes*> shapes) {
  return broadcast(a, std::vector<const Sizes*>(shapes));
}

Result<void> require_expandable(const RuleArgs& a, const Sizes& from, const Sizes& to,
                                std::string_view what) {
  if (from.size() > to.size())
    return a.error("{} of shape {} does not broadcast to {}: it has more dims", what,
                   sizes_string(from), sizes_string(to));
  const size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    const SymExpr& f = from[i];
    const SymExpr& t = to[offset + i];
    if (a.env().provably_equal(f, t)) continue;
    SPLICE_TRY(a.require(
        SymExpr::make(SymOp::kOr,
                      {SymExpr::make(SymOp::kEq, {f, t}), SymExpr::make(SymOp::kEq, {f, 1})}),
        fmt::format("{} of shape {} does not broadcast to {} (size {} at dim {})", what,
                    sizes_string(from), sizes_string(to), f.to_string(), offset + i)));
  }
  return ok_result();
}

Result<Sizes> broadcast_operands(const RuleArgs& a, const std::vector<Operand>& operands) {
  std::vector<const Sizes*> shapes;
  for (const Operand& o : operands)
    if (o.tensor) shapes.push_back(&o.tensor->sizes);
  return broadcast(a, shapes);
}

// ---- dtypes ----

namespace {

int category(DType d) {
  if (d == DType::kBool) return 0;
  if (is_integral(d)) return 1;
  return 2;
}

int int_rank(DType d) {
  switch (d) {
    case DType::kInt8:
      return 0;
    case DType::kInt16:
      return 1;
    case DType::kInt32:
      return 2;
    default:
      return 3;
  }
}

int float_rank(DType d) {
  switch (d) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return 0;
    case DType::kFloat32:
      return 1;
    default:
      return 2;
  }
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if (float_rank(a) == 0 && float_rank(b) == 0) return DType::kFloat32;
    return float_rank(a) > float_rank(b) ? a : b;
  }
  if (a == DType::kUInt8 || b == DType::kUInt8) {
    const DType other = a == DType::kUInt8 ? b : a;
    return other == DType::kInt8 ? DType::kInt16 : other;
  }
  return int_rank(a) > int_rank(b) ? a : b;
}

DType result_dtype(const std::vector<Operand>& operands, Promotion kind) {
  // The highest category among every operand (Python numbers included).
  int highest = 0;
  for (const Operand& o : operands) {
    int c = 0;
    if (o.tensor) {
      c = category(o.tensor->dtype);
    } else {
      c = o.number == NumberKind::kBool ? 0 : o.number == NumberKind::kInt ? 1 : 2;
    }
    highest = std::max(highest, c);
  }
  // Within it, tensors of one or more dims win over 0-d tensors; numbers give the default.
  auto filtered = [&](auto&& keep) -> std::optional<DType> {
    std::optional<DType> dimensioned, zero_dim;
    for (const Operand& o : operands) {
      if (!o.tensor || !keep(o.tensor->dtype)) continue;
      auto& slot = o.tensor->rank() == 0 ? zero_dim : dimensioned;
      slot = slot ? promote_types(*slot, o.tensor->dtype) : o.tensor->dtype;
    }
    return dimensioned ? dimensioned : zero_dim;
  };
  DType result = DType::kBool;
  if (highest == 2) {
    result = filtered([](DType d) { return is_floating(d); }).value_or(DType::kFloat32);
  } else if (highest == 1) {
    result = filtered([](DType d) { return is_integral(d); }).value_or(DType::kInt64);
  }
  switch (kind) {
    case Promotion::kDefault:
      return result;
    case Promotion::kIntToFloat:
      return is_floating(result) ? result : DType::kFloat32;
    case Promotion::kAlwaysBool:
      return DType::kBool;
    case Promotion::kBoolToLong:
      return result == DType::kBool ? DType::kInt64 : result;
  }
  return result;
}

DType computation_dtype(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? DType::kFloat32 : d;
}

// ---- reductions ----

Result<Sizes> reduce_sizes(const RuleArgs& a, const TensorType& self,
                           const std::optional<std::vector<int64_t>>& dims, bool keepdim) {
  const int64_t rank = self.rank();
  std::vector<bool> reduced(rank, false);
  if (!dims || dims->empty()) {
    std::fill(reduced.begin(), reduced.end(), true);
  } else {
    for (int64_t d : *dims) {
      SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(a, d, rank));
      if (rank == 0) continue;
      if (reduced[w]) return a.error("dim {} appears multiple times in the list of dims", w);
      reduced[w] = true;
    }
  }
  Sizes out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out.push_back(self.sizes[d]);
    } else if (keepdim) {
      out.emplace_back(1);
    }
  }
  return out;
}

// ---- slicing ----

namespace {

// A bound made non-negative: as is when provably >= 0, plus size when provably < 0, else
// `b + size*(b < 0)` (right for both signs once the symbols are bound).
SymExpr wrap_bound(const ShapeEnv& env, const SymExpr& b, const SymExpr& size) {
  if (env.decide(SymExpr::make(SymOp::kGe, {b, 0})) == true) return b;
  if (env.decide(SymExpr::make(SymOp::kLt, {b, 0})) == true) return b + size;
  return b + size * SymExpr::make(SymOp::kLt, {b, 0});
}

}  // namespace

Result<SymExpr> slice_length(const RuleArgs& a, const SymExpr& size,
                             const std::optional<SymExpr>& start, const std::optional<SymExpr>& end,
                             const SymExpr& step) {
  const ShapeEnv& env = a.env();
  // Python: a missing start is 0 and a missing (or INT64_MAX) end is the size; negative bounds
  // count from the end; both clamp into [0, size] and an end before the start is empty.
  SymExpr s =
      start ? env.simplify(sym_max(0, sym_min(wrap_bound(env, *start, size), size))) : SymExpr(0);
  SymExpr e = size;
  if (end && !(end->constant() && *end->constant() >= std::numeric_limits<int64_t>::max() / 2))
    e = env.simplify(sym_max(s, sym_min(sym_max(0, wrap_bound(env, *end, size)), size)));
  SymExpr n = env.simplify(e - s);
  if (step.constant() != 1) n = env.simplify(ceil_div(n, step));
  return n;
}

// pooling_output_shape: floor((n + 2p - d(k-1) - 1 [+ s-1 in ceil mode]) / s) + 1, one less in
// ceil mode when the last window would start in the right padding. Example: n 7, k 2, s 2, p 0,
// ceil: (7 - 1 - 1 + 1)/2 + 1 = 4 windows (the last covers only element 6). A symbolic n in
// ceil mode is refused (the correction is a comparison of symbols).
Result<SymExpr> pool_output_size(RuleArgs& a, const SymExpr& n, int64_t k, int64_t pad,
                                 int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t extra = -dilation * (k - 1) - 1 + 2 * pad + (ceil_mode ? stride - 1 : 0);
  if (auto c = n.constant()) {
    const int64_t num = *c + extra;
    int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
    if (ceil_mode && (out - 1) * stride >= *c + pad) --out;
    return SymExpr(out);
  }
  if (ceil_mode)
    return a.error("pooling with ceil_mode over a symbolic size ({}) is not supported",
                   n.to_string());
  return floor_div(n + SymExpr(extra), SymExpr(stride)) + SymExpr(1);
}

}  // namespace splice::ir::rules
