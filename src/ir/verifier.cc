// The IR verifier (see verifier.h): one walk over the nodes in program order keeping the set of
// values defined so far, with schema checks per argument and per output and each node's type
// check against its op's shape rule (type_check.h), then the signature checks.
#include "ir/verifier.h"

#include <functional>
#include <map>
#include <set>

#include "ir/ops.h"
#include "ir/printer.h"
#include "ir/type_check.h"
#include "support/checked_math.h"
#include "support/dtype.h"

namespace splice::ir {

namespace {

std::string where(const Node& node) {
  return fmt::format("node '{}' ({})", node.name(), node.target());
}

std::string describe_value(const Value* v) {
  if (v == nullptr) return "None";
  return fmt::format("{} {}", value_kind_name(v->kind()), format_value_name(v->name()));
}

std::string describe_arg(const Arg& arg) {
  return std::visit(
      [](const auto& d) -> std::string {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, Arg::None>)
          return "None";
        else if constexpr (std::is_same_v<T, bool>)
          return "bool";
        else if constexpr (std::is_same_v<T, int64_t>)
          return "int";
        else if constexpr (std::is_same_v<T, double>)
          return "float";
        else if constexpr (std::is_same_v<T, std::string>)
          return "str";
        else if constexpr (std::is_same_v<T, DType>)
          return "ScalarType";
        else if constexpr (std::is_same_v<T, Value*>)
          return describe_value(d);
        else if constexpr (std::is_same_v<T, std::vector<SymIntArg>>)
          return "int list";
        else if constexpr (std::is_same_v<T, std::vector<Value*>>)
          return "Tensor list";
        else if constexpr (std::is_same_v<T, std::vector<double>>)
          return "float list";
        else
          return "bool list";
      },
      arg.data);
}

bool is_kind(const Value* v, ValueKind kind) { return v != nullptr && v->kind() == kind; }

// A literal or symbolic Python number.
bool is_number(const Arg& arg) {
  if (arg.is<bool>() || arg.is<int64_t>() || arg.is<double>()) return true;
  const Value* v = arg.is<Value*>() ? arg.as<Value*>() : nullptr;
  return v != nullptr && !v->is_tensor();
}

// Whether a single (non-list) argument fits `type`.
bool scalar_fits(const Arg& arg, ArgType type) {
  const Value* v = arg.is<Value*>() ? arg.as<Value*>() : nullptr;
  switch (type) {
    case ArgType::kTensor:
      // A Python number where a tensor is expected (`x * 2` exports as mul.Tensor(x, 2)):
      // PyTorch wraps it into a tensor that promotes like a scalar.
      return is_kind(v, ValueKind::kTensor) || is_number(arg);
    case ArgType::kInt:
      return arg.is<int64_t>();
    case ArgType::kSymInt:
      return arg.is<int64_t>() || is_kind(v, ValueKind::kSymInt);
    case ArgType::kFloat:
      return arg.is<double>() || is_kind(v, ValueKind::kSymFloat);
    case ArgType::kBool:
      return arg.is<bool>() || is_kind(v, ValueKind::kSymBool);
    case ArgType::kScalar:
      return arg.is<bool>() || arg.is<int64_t>() || arg.is<double>() ||
             is_kind(v, ValueKind::kSymInt) || is_kind(v, ValueKind::kSymFloat) ||
             is_kind(v, ValueKind::kSymBool);
    case ArgType::kScalarType:
      return arg.is<DType>();
    case ArgType::kLayout:
    case ArgType::kDevice:
    case ArgType::kMemoryFormat:
    case ArgType::kString:
      return arg.is<std::string>();
    case ArgType::kGenerator:
      return false;  // only None, handled by the caller
  }
  return false;
}

// Checks one argument against its schema; on a mismatch returns what was found instead.
std::optional<std::string> arg_mismatch(const Arg& arg, const ArgSchema& schema) {
  const std::string& ts = schema.type_string;
  if (arg.is_none()) {
    // `T?` and `T[]?` take None; `Tensor?[]` takes None elements, not a None list.
    bool none_ok = schema.list ? (!ts.empty() && ts.back() == '?') : schema.optional;
    if (none_ok) return std::nullopt;
    return "None";
  }
  if (!schema.list) {
    if (scalar_fits(arg, schema.type)) return std::nullopt;
    return describe_arg(arg);
  }
  switch (schema.type) {
    case ArgType::kTensor: {
      if (!arg.is<std::vector<Value*>>()) return describe_arg(arg);
      bool none_elements = ts.find("?[") != std::string::npos;
      const auto& list = arg.as<std::vector<Value*>>();
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i] == nullptr ? !none_elements : !list[i]->is_tensor())
          return fmt::format("{} at element {}", describe_value(list[i]), i);
      }
      return std::nullopt;
    }
    case ArgType::kInt:
    case ArgType::kSymInt: {
      if (!arg.is<std::vector<SymIntArg>>()) return describe_arg(arg);
      const auto& list = arg.as<std::vector<SymIntArg>>();
      for (size_t i = 0; i < list.size(); ++i) {
        if (const auto* v = std::get_if<Value*>(&list[i])) {
          if (schema.type == ArgType::kInt || !is_kind(*v, ValueKind::kSymInt))
            return fmt::format("{} at element {}", describe_value(*v), i);
        }
      }
      return std::nullopt;
    }
    case ArgType::kFloat:
      if (arg.is<std::vector<double>>()) return std::nullopt;
      return describe_arg(arg);
    case ArgType::kBool:
      if (arg.is<std::vector<bool>>()) return std::nullopt;
      return describe_arg(arg);
    default:
      return describe_arg(arg);
  }
}

// Whether an output value fits a return of type `type`.
bool output_fits(const Value& v, ArgType type) {
  switch (type) {
    case ArgType::kTensor:
      return v.is_tensor();
    case ArgType::kSymInt:
    case ArgType::kInt:
      return v.kind() == ValueKind::kSymInt;
    case ArgType::kFloat:
      return v.kind() == ValueKind::kSymFloat;
    case ArgType::kBool:
      return v.kind() == ValueKind::kSymBool;
    case ArgType::kScalar:
      return !v.is_tensor();
    default:
      return true;
  }
}

Error fail(std::string message) { return Error(ErrorKind::kBadArchive, std::move(message)); }

// The most bytes one tensor with constant sizes may span: 16 TiB, far beyond any real model's
// tensor and any machine's memory, and far below int64's end, so a size that passes can be
// multiplied and summed without overflow. A value beyond it (`expand` to [2^62, 3, 4], a static
// `repeat` to 48 TiB) would only fail at run time, after every check the loader makes.
constexpr int64_t kMaxStaticTensorBytes = int64_t{1} << 44;

// A value whose sizes are all constants: its element count times its dtype's size must fit
// int64 and kMaxStaticTensorBytes. Sizes with a symbol are evaluated, and checked, when a call
// binds them.
Result<void> check_static_size(const Value& v) {
  if (!v.is_tensor()) return ok_result();
  const TensorType& type = v.type();
  std::optional<int64_t> bytes = dtype_size(type.dtype);
  for (const SymExpr& d : type.sizes) {
    if (!d.is_constant()) return ok_result();
    if (bytes) bytes = checked_mul(*bytes, std::max<int64_t>(*d.constant(), 0));
  }
  if (!bytes)
    return fail(fmt::format("value {} is {}: its size in bytes overflows int64",
                            format_value_name(v.name()), type.to_string()));
  if (*bytes > kMaxStaticTensorBytes)
    return fail(
        fmt::format("value {} is {}: {} bytes, more than splice's limit of 2^44 bytes "
                    "(16 TiB) for one tensor",
                    format_value_name(v.name()), type.to_string(), *bytes));
  return ok_result();
}

Result<void> check_outputs(const Node& node, std::set<const Value*>& defined) {
  const auto& returns = node.op().returns;
  const auto& outputs = node.outputs();
  std::optional<size_t> list_at;
  for (size_t i = 0; i < returns.size(); ++i)
    if (returns[i].list) list_at = i;
  size_t fixed = list_at ? returns.size() - 1 : returns.size();
  if (list_at ? outputs.size() < fixed : outputs.size() != fixed) {
    return fail(fmt::format("{}: has {} outputs but the op returns {}{}", where(node),
                            outputs.size(), list_at ? "at least " : "", fixed));
  }
  size_t extra = outputs.size() - fixed;  // elements of the Tensor[] return, if any
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value* v = outputs[i];
    if (v == nullptr) continue;
    const ReturnSchema& r = !list_at || i < *list_at ? returns[i]
                            : i < *list_at + extra   ? returns[*list_at]
                                                     : returns[i - extra + 1];
    if (!output_fits(*v, r.type)) {
      return fail(fmt::format("{}: output {} {} should be {}", where(node), i, describe_value(v),
                              arg_type_name(r.type)));
    }
    if (!defined.insert(v).second) {
      return fail(fmt::format("{}: value {} is produced more than once", where(node),
                              format_value_name(v->name())));
    }
    if (v->producer() != &node) {
      return fail(fmt::format("{}: output {} records {} as its producer", where(node),
                              format_value_name(v->name()),
                              v->producer() ? "node '" + v->producer()->name() + "'" : "none"));
    }
  }
  return ok_result();
}

// Every value an argument or graph output reads (nulls left out).
std::vector<const Value*> values_of(const Arg& arg) {
  std::vector<const Value*> out;
  if (const auto* v = std::get_if<Value*>(&arg.data)) {
    if (*v) out.push_back(*v);
  } else if (const auto* l = std::get_if<std::vector<Value*>>(&arg.data)) {
    for (const Value* e : *l)
      if (e) out.push_back(e);
  } else if (const auto* s = std::get_if<std::vector<SymIntArg>>(&arg.data)) {
    for (const SymIntArg& e : *s)
      if (const auto* ev = std::get_if<Value*>(&e); ev && *ev) out.push_back(*ev);
  }
  return out;
}

}  // namespace

Result<void> verify_graph(const Graph& graph) { return verify_graph(graph, SymRanges{}); }

Result<void> verify_graph(const Graph& graph, const SymRanges& ranges) {
  TypeChecker types(graph, ranges);
  // Everything the graph defines anywhere, to tell a use before the definition from a value
  // that nothing defines.
  std::set<const Value*> anywhere;
  for (const Value* v : graph.inputs())
    if (v) anywhere.insert(v);
  for (const auto& node : graph.nodes())
    for (const Value* v : node->outputs())
      if (v) anywhere.insert(v);

  std::set<const Value*> defined;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* v = graph.inputs()[i];
    if (v == nullptr) continue;
    if (!defined.insert(v).second)
      return fail(
          fmt::format("graph input {} ({}) is listed twice", i, format_value_name(v->name())));
    if (v->producer() != nullptr) {
      return fail(fmt::format("graph input {} records node '{}' as its producer",
                              format_value_name(v->name()), v->producer()->name()));
    }
    SPLICE_TRY(check_static_size(*v));
  }

  for (const auto& owned : graph.nodes()) {
    const Node& node = *owned;
    const OpSchema* op = find_op(node.target());
    if (op == nullptr || op != &node.op())
      return fail(fmt::format("{}: op is not in the op table", where(node)));
    if (node.args().size() != op->args.size()) {
      return fail(fmt::format("{}: has {} arguments but the schema has {}", where(node),
                              node.args().size(), op->args.size()));
    }
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (auto got = arg_mismatch(node.args()[i], op->args[i])) {
        return fail(fmt::format("{}: argument '{}' expects {}, got {}", where(node),
                                op->args[i].name, op->args[i].type_string, *got));
      }
    }
    for (const Arg& a : node.args()) {
      for (const Value* v : values_of(a)) {
        if (defined.count(v)) continue;
        return fail(fmt::format("{}: value {} is {}", where(node), format_value_name(v->name()),
                                anywhere.count(v) ? "used before it is defined"
                                                  : "not defined by any node or graph input"));
      }
    }
    SPLICE_TRY(check_outputs(node, defined));
    for (const Value* v : node.outputs())
      if (v != nullptr) SPLICE_TRY(check_static_size(*v));
    SPLICE_TRY(types.check(node));
  }

  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Arg& out = graph.outputs()[i];
    if (out.is<Value*>() && out.as<Value*>() == nullptr)
      return fail(fmt::format("graph output {} is a null value", i));
    for (const Value* v : values_of(out)) {
      if (!defined.count(v)) {
        return fail(
            fmt::format("graph output {}: value {} is not defined by any node or graph "
                        "input",
                        i, format_value_name(v->name())));
      }
    }
  }
  return ok_result();
}

namespace {

// A mutation output's value becomes its target's next value (the buffer a session keeps, the
// caller's input written in place), so it must be a tensor of the target's dtype and sizes: a
// value of another shape was run and written into a state file that --state-in then refused.
// Sizes are compared where both are constants or the same expression; two different symbolic
// expressions may still be equal at run time, which the verifier cannot decide.
Result<void> check_mutation_fits(const std::string& what, const Value& value, const Value& target) {
  if (!target.is_tensor()) return ok_result();
  const TensorType& got = value.type();
  const TensorType& want = target.type();
  bool fits = got.dtype == want.dtype && got.rank() == want.rank();
  for (size_t d = 0; fits && d < got.sizes.size(); ++d) {
    const SymExpr& a = got.sizes[d];
    const SymExpr& b = want.sizes[d];
    if (a.is_constant() && b.is_constant()) fits = *a.constant() == *b.constant();
  }
  if (!fits)
    return fail(fmt::format("{}: its value {} is {}, but the input it mutates, {}, is {}", what,
                            format_value_name(value.name()), got.to_string(),
                            format_value_name(target.name()), want.to_string()));
  return ok_result();
}

// A symbol that is a tensor's size (a dim that is the symbol alone) takes values >= 0: one
// whose range lies entirely below 0 has no value any call could bind, so every call would be
// refused (or, without a check, run with a negative size).
Result<void> check_size_symbols(const Program& program) {
  auto check = [&](const Value* v) -> Result<void> {
    if (v == nullptr || !v->is_tensor()) return ok_result();
    for (const SymExpr& d : v->type().sizes) {
      if (d.op() != SymOp::kSymbol) continue;
      auto it = program.ranges.find(d.symbol_name());
      if (it == program.ranges.end() || !it->second.max || *it->second.max >= 0) continue;
      return fail(
          fmt::format("symbol {} is a size of {} but its range {} holds no size (every "
                      "value is negative)",
                      d.symbol_name(), format_value_name(v->name()), it->second.to_string()));
    }
    return ok_result();
  };
  for (const Value* v : program.graph.inputs()) SPLICE_TRY(check(v));
  for (const auto& node : program.graph.nodes())
    for (const Value* v : node->outputs()) SPLICE_TRY(check(v));
  return ok_result();
}

}  // namespace

Result<void> verify(const Program& program) {
  const Graph& graph = program.graph;
  SPLICE_TRY(verify_graph(graph, program.ranges));
  const Signature& sig = program.signature;
  if (sig.inputs.size() != graph.inputs().size()) {
    return fail(fmt::format("signature has {} inputs but the graph has {}", sig.inputs.size(),
                            graph.inputs().size()));
  }
  if (sig.outputs.size() != graph.outputs().size()) {
    return fail(fmt::format("signature has {} outputs but the graph has {}", sig.outputs.size(),
                            graph.outputs().size()));
  }
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const InputSpec& in = sig.inputs[i];
    const Value* gv = graph.inputs()[i];
    std::string what = fmt::format("signature input {} ({})", i, input_kind_name(in.kind));
    if (in.value != gv)
      return fail(fmt::format("{}: its value is not the graph's input {}", what, i));
    if (in.kind == InputKind::kConstantInput) {
      if (gv != nullptr)
        return fail(fmt::format("{}: a constant input has graph value {}", what,
                                format_value_name(gv->name())));
      continue;
    }
    if (gv == nullptr) return fail(fmt::format("{}: has no graph value", what));
    bool weight = in.kind == InputKind::kParameter || in.kind == InputKind::kBuffer ||
                  in.kind == InputKind::kTensorConstant;
    if (weight && !gv->is_tensor())
      return fail(fmt::format("{}: {} is not a tensor", what, describe_value(gv)));
    if (weight && in.target.empty()) return fail(fmt::format("{}: names no weight", what));
  }
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const OutputSpec& out = sig.outputs[i];
    std::optional<InputKind> wanted;
    if (out.kind == OutputKind::kBufferMutation) wanted = InputKind::kBuffer;
    if (out.kind == OutputKind::kParameterMutation) wanted = InputKind::kParameter;
    if (out.kind == OutputKind::kUserInputMutation) wanted = InputKind::kUserInput;
    if (!wanted) continue;
    std::string what =
        fmt::format("signature output {} ({} \"{}\")", i, output_kind_name(out.kind), out.target);
    const Value* target = nullptr;
    for (const InputSpec& in : sig.inputs) {
      if (in.kind != *wanted) continue;
      if (in.target == out.target ||
          (in.kind == InputKind::kUserInput && in.value && in.value->name() == out.target))
        target = in.value;
    }
    if (target == nullptr)
      return fail(fmt::format("{}: no {} input of that name", what, input_kind_name(*wanted)));
    const Arg& g = graph.outputs()[i];
    if (!g.is<Value*>() || !is_kind(g.as<Value*>(), ValueKind::kTensor))
      return fail(fmt::format("{}: graph output is {}, not a tensor", what, describe_arg(g)));
    SPLICE_TRY(check_mutation_fits(what, *g.as<Value*>(), *target));
  }
  for (const auto& [name, range] : program.ranges) {
    if (range.max && *range.max < range.min)
      return fail(fmt::format("symbol {} has an empty range {}", name, range.to_string()));
  }
  SPLICE_TRY(check_size_symbols(program));
  return ok_result();
}

}  // namespace splice::ir
