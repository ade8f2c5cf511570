// Parsing of ATen schema strings into OpSchema, and lookup in the op table (op_table.cc).
// The table keeps PyTorch's own schema text so its defaults stay exactly PyTorch's.
#include "ir/ops.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace splice::ir {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// Splits on commas that are not inside brackets or parentheses.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  auto last = trim(s.substr(start));
  if (!last.empty()) parts.push_back(last);
  return parts;
}

// Removes alias annotations such as "(a!)" or "(a -> *)" from a type.
std::string strip_alias(std::string_view type) {
  std::string out;
  int depth = 0;
  for (char c : type) {
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if (depth == 0)
      out += c;
  }
  return out;
}

// The alias annotation of a type: "Tensor(a!)" → {"a", writes}, "Tensor(a -> *)" → {"a"},
// "Tensor" → {"", false}.
struct AliasAnnotation {
  std::string set;
  bool writes = false;
};
AliasAnnotation alias_annotation(std::string_view type) {
  AliasAnnotation a;
  auto open = type.find('(');
  if (open == std::string_view::npos) return a;
  auto close = type.find(')', open);
  std::string_view inner = type.substr(open + 1, close - open - 1);
  a.writes = inner.find('!') != std::string_view::npos;
  for (char c : inner) {
    if (c == '!' || c == ' ' || c == '-') break;
    a.set += c;
  }
  return a;
}

std::optional<ArgType> base_type(std::string_view name) {
  static const std::map<std::string_view, ArgType> kTypes = {
      {"Tensor", ArgType::kTensor},
      {"int", ArgType::kInt},
      {"SymInt", ArgType::kSymInt},
      {"float", ArgType::kFloat},
      {"bool", ArgType::kBool},
      {"Scalar", ArgType::kScalar},
      {"ScalarType", ArgType::kScalarType},
      {"Layout", ArgType::kLayout},
      {"Device", ArgType::kDevice},
      {"MemoryFormat", ArgType::kMemoryFormat},
      {"str", ArgType::kString},
      {"Generator", ArgType::kGenerator},
  };
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

Result<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    return make_error(ErrorKind::kInternal, "op schema: bad integer '{}'", s);
  return v;
}

Result<double> parse_float(std::string_view s) {
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  std::string str(s);
  char* end = nullptr;
  double v = std::strtod(str.c_str(), &end);
  if (end != str.c_str() + str.size())
    return make_error(ErrorKind::kInternal, "op schema: bad float '{}'", s);
  return v;
}

Result<Arg> parse_scalar_literal(std::string_view s, ArgType type) {
  if (s == "None") return Arg{Arg::None{}};
  if (s == "True") return Arg{true};
  if (s == "False") return Arg{false};
  switch (type) {
    case ArgType::kInt:
    case ArgType::kSymInt: {
      SPLICE_ASSIGN_OR_RETURN(int64_t v, parse_int(s));
      return Arg{v};
    }
    case ArgType::kFloat: {
      SPLICE_ASSIGN_OR_RETURN(double v, parse_float(s));
      return Arg{v};
    }
    case ArgType::kScalar: {
      if (s.find_first_of(".e") == std::string_view::npos) {
        SPLICE_ASSIGN_OR_RETURN(int64_t v, parse_int(s));
        return Arg{v};
      }
      SPLICE_ASSIGN_OR_RETURN(double v, parse_float(s));
      return Arg{v};
    }
    case ArgType::kString:
      if (s.size() >= 2 && (s.front() == '"' || s.front() == '\''))
        return Arg{std::string(s.substr(1, s.size() - 2))};
      break;
    case ArgType::kMemoryFormat:
    case ArgType::kLayout:
    case ArgType::kDevice:
      return Arg{std::string(s)};
    default:
      break;
  }
  return make_error(ErrorKind::kInternal, "op schema: cannot read default '{}' for type {}", s,
                    arg_type_name(type));
}

Result<Arg> parse_default(std::string_view s, const ArgSchema& arg) {
  if (s == "None") return Arg{Arg::None{}};
  if (!arg.list) return parse_scalar_literal(s, arg.type);
  // A list default: "[]", "[0,1]", or a single value meaning "that value" (e.g. int[2] x=1
  // repeats; the archives splice reads always spell such lists out, so keep one element).
  std::string_view inner = s;
  if (!inner.empty() && inner.front() == '[') inner = inner.substr(1, inner.size() - 2);
  auto items = split_top_level(inner);
  switch (arg.type) {
    case ArgType::kInt:
    case ArgType::kSymInt: {
      std::vector<SymIntArg> v;
      for (auto item : items) {
        SPLICE_ASSIGN_OR_RETURN(int64_t x, parse_int(item));
        v.push_back(x);
      }
      return Arg{v};
    }
    case ArgType::kFloat: {
      std::vector<double> v;
      for (auto item : items) {
        SPLICE_ASSIGN_OR_RETURN(double x, parse_float(item));
        v.push_back(x);
      }
      return Arg{v};
    }
    case ArgType::kBool: {
      std::vector<bool> v;
      for (auto item : items) v.push_back(item == "True");
      return Arg{v};
    }
    default:
      return make_error(ErrorKind::kInternal, "op schema: cannot read list default '{}'", s);
  }
}

Result<ArgSchema> parse_arg(std::string_view text, bool kwarg_only) {
  ArgSchema arg;
  arg.kwarg_only = kwarg_only;
  std::string_view decl = text;
  std::string_view default_text;
  if (auto eq = text.find('='); eq != std::string_view::npos) {
    decl = trim(text.substr(0, eq));
    default_text = trim(text.substr(eq + 1));
  }
  auto space = decl.rfind(' ');
  if (space == std::string_view::npos)
    return make_error(ErrorKind::kInternal, "op schema: argument '{}' has no name", text);
  arg.name = std::string(decl.substr(space + 1));
  const AliasAnnotation alias = alias_annotation(trim(decl.substr(0, space)));
  arg.alias_set = alias.set;
  arg.alias_writes = alias.writes;
  std::string type = strip_alias(trim(decl.substr(0, space)));
  arg.type_string = type;
  // Suffixes: "?" (optional), "[]" or "[N]" (list), in either order ("Tensor?[]").
  std::string base = type;
  while (!base.empty()) {
    if (base.back() == '?') {
      arg.optional = true;
      base.pop_back();
    } else if (base.back() == ']') {
      auto open = base.rfind('[');
      arg.list = true;
      base.resize(open);
    } else {
      break;
    }
  }
  auto t = base_type(base);
  if (!t) return make_error(ErrorKind::kInternal, "op schema: unknown type '{}'", base);
  arg.type = *t;
  if (!default_text.empty()) {
    SPLICE_ASSIGN_OR_RETURN(Arg d, parse_default(default_text, arg));
    arg.default_value = std::move(d);
  }
  return arg;
}

Result<std::vector<ReturnSchema>> parse_returns(std::string_view text) {
  std::vector<ReturnSchema> returns;
  text = trim(text);
  if (!text.empty() && text.front() == '(') text = text.substr(1, text.size() - 2);
  for (auto item : split_top_level(text)) {
    std::string type = strip_alias(item);
    if (auto sp = type.find(' '); sp != std::string::npos) type.resize(sp);  // named return
    ReturnSchema r;
    r.alias_set = alias_annotation(item).set;
    if (type.ends_with("[]")) {
      r.list = true;
      type.resize(type.size() - 2);
    }
    auto t = base_type(type);
    if (!t) return make_error(ErrorKind::kInternal, "op schema: unknown return type '{}'", item);
    r.type = *t;
    returns.push_back(r);
  }
  return returns;
}

// Eager's aliasing of an op: the schema's annotations (`Tensor(a!)` mutates, a return in an
// argument's alias set views it), refined by what the schema cannot say (op_class).
Aliasing aliasing_of(const OpSchema& op) {
  switch (op.op_class) {
    case OpClass::kAlwaysViews:
    case OpClass::kAutogradOnly:
      return Aliasing::kView;
    case OpClass::kViewIfStridesAllow:
    case OpClass::kViewIfContiguous:
    case OpClass::kViewIfSameType:
      return Aliasing::kMayView;
    default:
      break;
  }
  for (const ArgSchema& a : op.args)
    if (a.alias_writes) return Aliasing::kMutates;
  for (const ReturnSchema& r : op.returns) {
    if (r.alias_set.empty()) continue;
    for (const ArgSchema& a : op.args)
      if (a.alias_set == r.alias_set) return Aliasing::kView;
  }
  return Aliasing::kNone;
}

}  // namespace

Result<OpSchema> parse_op_schema(std::string_view target, std::string_view schema,
                                 OpClass op_class) {
  OpSchema op;
  op.op_class = op_class;
  op.target = std::string(target);
  op.schema_text = std::string(schema);
  auto open = schema.find('(');
  auto arrow = schema.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos)
    return make_error(ErrorKind::kInternal, "op schema for {} is malformed", target);
  auto close = schema.rfind(')', arrow);
  bool kwarg_only = false;
  for (auto item : split_top_level(schema.substr(open + 1, close - open - 1))) {
    if (item == "*") {
      kwarg_only = true;
      continue;
    }
    auto arg = parse_arg(item, kwarg_only);
    if (!arg.ok()) return arg.error().with_context(std::string(target));
    op.args.push_back(std::move(*arg));
  }
  SPLICE_ASSIGN_OR_RETURN(op.returns, parse_returns(schema.substr(arrow + 2)));
  op.aliasing = aliasing_of(op);
  return op;
}

bool OpSchema::is_symbolic() const {
  return returns.size() == 1 && !returns[0].list && returns[0].type != ArgType::kTensor;
}

bool OpSchema::runs_on_host() const {
  if (is_symbolic() || returns.empty()) return true;
  // Python operators and torch.sym_* outside aten; a custom op returning tensors
  // (transformers.grouped_mm_fallback) is a tensor op like aten's.
  const bool tensor_result = std::any_of(returns.begin(), returns.end(),
                                         [](const auto& r) { return r.type == ArgType::kTensor; });
  return !target.starts_with("aten.") && !tensor_result;
}

std::optional<size_t> OpSchema::find_arg(std::string_view name) const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == name) return i;
  return std::nullopt;
}

std::string arg_type_name(ArgType type) {
  switch (type) {
    case ArgType::kTensor:
      return "Tensor";
    case ArgType::kInt:
      return "int";
    case ArgType::kSymInt:
      return "SymInt";
    case ArgType::kFloat:
      return "float";
    case ArgType::kBool:
      return "bool";
    case ArgType::kScalar:
      return "Scalar";
    case ArgType::kScalarType:
      return "ScalarType";
    case ArgType::kLayout:
      return "Layout";
    case ArgType::kDevice:
      return "Device";
    case ArgType::kMemoryFormat:
      return "MemoryFormat";
    case ArgType::kString:
      return "str";
    case ArgType::kGenerator:
      return "Generator";
  }
  return "?";
}

}  // namespace splice::ir
