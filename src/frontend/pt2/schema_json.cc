// The value level of the export-schema parser: error paths, typed scalar readers over
// nlohmann::json that report wrong types instead of throwing, and the readers for symbolic
// values, TensorMeta and the Argument union (every kind of schema 8.17). The program level
// (graph, nodes, signature, ExportedProgram, payload configs) is in schema.cc.

#include "frontend/pt2/schema_json.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace splice::pt2::detail {

// --- Paths and errors ----------------------------------------------------------------------

void Path::append_to(std::string& out) const {
  if (parent_ != nullptr) parent_->append_to(out);
  switch (kind_) {
    case Kind::kRoot:
      break;
    case Kind::kField:
      if (!out.empty()) out += '.';
      out += text_;
      break;
    case Kind::kIndex:
      out += fmt::format("[{}]", index_);
      break;
    case Kind::kKey:
      out += fmt::format("['{}']", text_);
      break;
    case Kind::kNamed:
      if (!out.empty()) out += ' ';
      out += fmt::format("{} '{}'", what_, text_);
      break;
    case Kind::kNumbered:
      if (!out.empty()) out += ' ';
      out += fmt::format("{} #{}", what_, index_);
      break;
  }
}

std::string Path::str() const {
  std::string out;
  append_to(out);
  return out;
}

Error schema_error(const Path& path, std::string_view message) {
  std::string where = path.str();
  if (where.empty()) return Error(ErrorKind::kBadArchive, std::string(message));
  return Error(ErrorKind::kBadArchive, fmt::format("{}: {}", where, message));
}

std::string describe(const Json& j) {
  constexpr size_t kMaxShown = 40;
  switch (j.type()) {
    case Json::value_t::string: {
      const auto& s = j.get_ref<const Json::string_t&>();
      if (s.size() > kMaxShown) return fmt::format("string \"{}...\"", s.substr(0, kMaxShown));
      return fmt::format("string \"{}\"", s);
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
    case Json::value_t::boolean:
      // dump() of a scalar cannot fail; replace keeps it non-throwing regardless.
      return fmt::format("{} {}", j.type_name(),
                         j.dump(-1, ' ', false, Json::error_handler_t::replace));
    default:
      return j.type_name();
  }
}

// --- Scalars -------------------------------------------------------------------------------

Result<int64_t> read_int(const Json& j, const Path& path) {
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return schema_error(path, fmt::format("integer {} does not fit in 64 bits", u));
    }
    return static_cast<int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return schema_error(path, "expected an integer, got " + describe(j));
}

Result<int32_t> read_int32(const Json& j, const Path& path) {
  SPLICE_ASSIGN_OR_RETURN(int64_t v, read_int(j, path));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return schema_error(path, fmt::format("enum value {} is out of range", v));
  }
  return static_cast<int32_t>(v);
}

Result<double> read_float(const Json& j, const Path& path) {
  if (j.is_number_float()) return j.get<double>();
  if (j.is_number_unsigned()) return static_cast<double>(j.get<uint64_t>());
  if (j.is_number_integer()) return static_cast<double>(j.get<int64_t>());
  if (j.is_string()) {
    // JSON has no literal for these; serialize.py writes them as strings.
    const auto& s = j.get_ref<const Json::string_t&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  return schema_error(path, "expected a number, got " + describe(j));
}

Result<bool> read_bool(const Json& j, const Path& path) {
  if (j.is_boolean()) return j.get<bool>();
  return schema_error(path, "expected a boolean, got " + describe(j));
}

Result<std::string> read_string(const Json& j, const Path& path) {
  if (j.is_string()) return j.get<std::string>();
  return schema_error(path, "expected a string, got " + describe(j));
}

Result<void> expect_object(const Json& j, const Path& path, const char* what) {
  if (j.is_object()) return ok_result();
  return schema_error(path, fmt::format("expected an object ({}), got {}", what, describe(j)));
}

Result<const Json*> require_field(const Json& object, std::string_view key, const Path& path) {
  auto it = object.find(key);
  if (it == object.end()) {
    return schema_error(path, fmt::format("missing required field '{}'", key));
  }
  return &*it;
}

const Json* optional_field(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<UnionEntry> read_union(const Json& j, const Path& path, const char* union_name) {
  if (!j.is_object() || j.size() != 1) {
    std::string got = j.is_object() ? fmt::format("an object with {} keys", j.size()) : describe(j);
    return schema_error(path,
                        fmt::format("expected a one-key object ({}), got {}", union_name, got));
  }
  auto it = j.begin();
  return UnionEntry{it.key(), &it.value()};
}

namespace {

Error unknown_kind(const Path& path, const char* what, std::string_view kind) {
  return schema_error(path, fmt::format("unknown {} '{}'", what, kind));
}

Result<SymExprHint> read_sym_expr_hint(const Json& j, const Path& path) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, "SymExprHint"));
  Path p = path.field(u.kind);
  SymExprHint hint;
  if (u.kind == "as_int") {
    SPLICE_ASSIGN_OR_RETURN(hint.value, read_int(*u.value, p));
  } else if (u.kind == "as_bool") {
    SPLICE_ASSIGN_OR_RETURN(hint.value, read_bool(*u.value, p));
  } else if (u.kind == "as_float") {
    SPLICE_ASSIGN_OR_RETURN(hint.value, read_float(*u.value, p));
  } else {
    return unknown_kind(path, "hint kind", u.kind);
  }
  return hint;
}

// SymInt / SymFloat / SymBool: as_expr or a constant under `constant_key`.
template <typename Sym, typename ReadConstant>
Result<Sym> read_sym(const Json& j, const Path& path, const char* union_name,
                     std::string_view constant_key, ReadConstant&& read_constant) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, union_name));
  Path p = path.field(u.kind);
  Sym sym;
  if (u.kind == constant_key) {
    SPLICE_ASSIGN_OR_RETURN(sym.value, read_constant(*u.value, p));
  } else if (u.kind == "as_expr") {
    SPLICE_ASSIGN_OR_RETURN(sym.value, read_sym_expr(*u.value, p));
  } else {
    return unknown_kind(path, fmt::format("{} kind", union_name).c_str(), u.kind);
  }
  return sym;
}

// SymIntArgument / SymFloatArgument / SymBoolArgument: as_name or a constant.
template <typename SymArg, typename ReadConstant>
Result<SymArg> read_sym_argument(const Json& j, const Path& path, const char* union_name,
                                 std::string_view constant_key, ReadConstant&& read_constant) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, union_name));
  Path p = path.field(u.kind);
  SymArg arg;
  if (u.kind == "as_name") {
    SPLICE_ASSIGN_OR_RETURN(arg.value, read_string(*u.value, p));
  } else if (u.kind == constant_key) {
    SPLICE_ASSIGN_OR_RETURN(arg.value, read_constant(*u.value, p));
  } else {
    return unknown_kind(path, fmt::format("{} kind", union_name).c_str(), u.kind);
  }
  return arg;
}

Result<SymIntArgument> read_sym_int_argument(const Json& j, const Path& path) {
  return read_sym_argument<SymIntArgument>(j, path, "SymIntArgument", "as_int", read_int);
}
Result<SymFloatArgument> read_sym_float_argument(const Json& j, const Path& path) {
  return read_sym_argument<SymFloatArgument>(j, path, "SymFloatArgument", "as_float", read_float);
}
Result<SymBoolArgument> read_sym_bool_argument(const Json& j, const Path& path) {
  return read_sym_argument<SymBoolArgument>(j, path, "SymBoolArgument", "as_bool", read_bool);
}

Result<OptionalTensorArgument> read_optional_tensor(const Json& j, const Path& path) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, "OptionalTensorArgument"));
  OptionalTensorArgument out;
  if (u.kind == "as_tensor") {
    SPLICE_ASSIGN_OR_RETURN(out.tensor, read_tensor_argument(*u.value, path.field(u.kind)));
  } else if (u.kind != "as_none") {
    return unknown_kind(path, "optional tensor kind", u.kind);
  }
  return out;
}

// Nesting is possible through as_string_to_argument and through subgraphs (as_graph); the bound
// keeps a hostile file from exhausting the stack.
constexpr int kMaxArgumentDepth = 32;

Result<Argument> read_argument_at(const Json& j, const Path& path, int depth);

// Wraps a reader of T into one of ArgumentValue holding Wrapper{T}.
template <typename Wrapper, typename F>
Result<ArgumentValue> wrap(Result<F> r) {
  if (!r.ok()) return r.error();
  return ArgumentValue(std::in_place_type<Wrapper>, Wrapper{std::move(r).value()});
}
template <typename T>
Result<ArgumentValue> as_value(Result<T> r) {
  if (!r.ok()) return r.error();
  return ArgumentValue(std::in_place_type<T>, std::move(r).value());
}

using ArgumentReader = Result<ArgumentValue> (*)(const Json&, const Path&, int depth);
struct ArgumentKindEntry {
  const char* name;
  ArgumentReader read;
};

// One entry per alternative of ArgumentValue, in the same order (argument_kind_name indexes
// this table by the variant index; a test checks the order).
constexpr ArgumentKindEntry kArgumentKinds[] = {
    {"as_none",
     // The payload is `true` (older writers: `[]`); it carries no information.
     [](const Json&, const Path&, int) -> Result<ArgumentValue> {
       return ArgumentValue(NoneArgument{});
     }},
    {"as_tensor",
     [](const Json& j, const Path& p, int) { return as_value(read_tensor_argument(j, p)); }},
    {"as_tensors",
     [](const Json& j, const Path& p, int) {
       return wrap<TensorListArgument>(read_list<TensorArgument>(j, p, read_tensor_argument));
     }},
    {"as_int", [](const Json& j, const Path& p, int) { return wrap<IntArgument>(read_int(j, p)); }},
    {"as_ints", [](const Json& j, const Path& p,
                   int) { return wrap<IntListArgument>(read_list<int64_t>(j, p, read_int)); }},
    {"as_float",
     [](const Json& j, const Path& p, int) { return wrap<FloatArgument>(read_float(j, p)); }},
    {"as_floats", [](const Json& j, const Path& p,
                     int) { return wrap<FloatListArgument>(read_list<double>(j, p, read_float)); }},
    {"as_string",
     [](const Json& j, const Path& p, int) { return wrap<StringArgument>(read_string(j, p)); }},
    {"as_strings",
     [](const Json& j, const Path& p, int) {
       return wrap<StringListArgument>(read_list<std::string>(j, p, read_string));
     }},
    {"as_sym_int",
     [](const Json& j, const Path& p, int) { return as_value(read_sym_int_argument(j, p)); }},
    {"as_sym_ints",
     [](const Json& j, const Path& p, int) {
       return wrap<SymIntListArgument>(read_list<SymIntArgument>(j, p, read_sym_int_argument));
     }},
    {"as_scalar_type",
     [](const Json& j, const Path& p, int) { return wrap<ScalarTypeArgument>(read_int32(j, p)); }},
    {"as_memory_format", [](const Json& j, const Path& p,
                            int) { return wrap<MemoryFormatArgument>(read_int32(j, p)); }},
    {"as_layout",
     [](const Json& j, const Path& p, int) { return wrap<LayoutArgument>(read_int32(j, p)); }},
    {"as_device", [](const Json& j, const Path& p, int) { return as_value(read_device(j, p)); }},
    {"as_bool",
     [](const Json& j, const Path& p, int) { return wrap<BoolArgument>(read_bool(j, p)); }},
    {"as_bools", [](const Json& j, const Path& p,
                    int) { return wrap<BoolListArgument>(read_list<bool>(j, p, read_bool)); }},
    {"as_sym_bool",
     [](const Json& j, const Path& p, int) { return as_value(read_sym_bool_argument(j, p)); }},
    {"as_sym_bools",
     [](const Json& j, const Path& p, int) {
       return wrap<SymBoolListArgument>(read_list<SymBoolArgument>(j, p, read_sym_bool_argument));
     }},
    {"as_graph",
     [](const Json& j, const Path& p, int depth) -> Result<ArgumentValue> {
       SPLICE_TRY(expect_object(j, p, "GraphArgument"));
       GraphArgument g;
       SPLICE_TRY(field_into(j, "name", p, read_string, g.name));
       SPLICE_ASSIGN_OR_RETURN(const Json* graph, require_field(j, "graph", p));
       SPLICE_ASSIGN_OR_RETURN(Graph parsed, read_graph(*graph, p.field("graph"), depth + 1));
       g.graph = std::make_shared<const Graph>(std::move(parsed));
       return ArgumentValue(std::move(g));
     }},
    {"as_optional_tensors",
     [](const Json& j, const Path& p, int) {
       return wrap<OptionalTensorListArgument>(
           read_list<OptionalTensorArgument>(j, p, read_optional_tensor));
     }},
    {"as_custom_obj",
     [](const Json& j, const Path& p, int) { return as_value(read_custom_obj_argument(j, p)); }},
    {"as_operator",
     [](const Json& j, const Path& p, int) { return wrap<OperatorArgument>(read_string(j, p)); }},
    {"as_sym_float",
     [](const Json& j, const Path& p, int) { return as_value(read_sym_float_argument(j, p)); }},
    {"as_sym_floats",
     [](const Json& j, const Path& p, int) {
       return wrap<SymFloatListArgument>(
           read_list<SymFloatArgument>(j, p, read_sym_float_argument));
     }},
    {"as_optional_tensor",
     [](const Json& j, const Path& p, int) { return as_value(read_optional_tensor(j, p)); }},
    {"as_complex",
     [](const Json& j, const Path& p, int) -> Result<ArgumentValue> {
       SPLICE_TRY(expect_object(j, p, "ComplexValue"));
       ComplexValue c;
       SPLICE_TRY(field_into(j, "real", p, read_float, c.real));
       SPLICE_TRY(field_into(j, "imag", p, read_float, c.imag));
       return ArgumentValue(c);
     }},
    {"as_nested_tensors",
     [](const Json& j, const Path& p, int) {
       auto read_inner = [](const Json& inner, const Path& ip) {
         return read_list<TensorArgument>(inner, ip, read_tensor_argument);
       };
       return wrap<NestedTensorListArgument>(
           read_list<std::vector<TensorArgument>>(j, p, read_inner));
     }},
    {"as_int_lists",
     [](const Json& j, const Path& p, int) {
       auto read_inner = [](const Json& inner, const Path& ip) {
         return read_list<int64_t>(inner, ip, read_int);
       };
       return wrap<IntListListArgument>(read_list<std::vector<int64_t>>(j, p, read_inner));
     }},
    {"as_string_to_argument",
     [](const Json& j, const Path& p, int depth) -> Result<ArgumentValue> {
       if (!j.is_object()) return schema_error(p, "expected an object, got " + describe(j));
       StringToArgumentMap map;
       for (auto it = j.begin(); it != j.end(); ++it) {
         SPLICE_ASSIGN_OR_RETURN(Argument value,
                                 read_argument_at(it.value(), p.key(it.key()), depth + 1));
         map.entries.emplace_back(it.key(), std::move(value));
       }
       return ArgumentValue(std::move(map));
     }},
};
static_assert(std::size(kArgumentKinds) == std::variant_size_v<ArgumentValue>,
              "kArgumentKinds must list every Argument alternative");

Result<Argument> read_argument_at(const Json& j, const Path& path, int depth) {
  if (depth > kMaxArgumentDepth) {
    return schema_error(path, fmt::format("arguments nested deeper than {}", kMaxArgumentDepth));
  }
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, "Argument"));
  for (const ArgumentKindEntry& kind : kArgumentKinds) {
    if (u.kind != kind.name) continue;
    SPLICE_ASSIGN_OR_RETURN(ArgumentValue value, kind.read(*u.value, path, depth));
    return Argument{std::move(value)};
  }
  return unknown_kind(path, "argument kind", u.kind);
}

}  // namespace

// --- Value types ---------------------------------------------------------------------------

Result<Device> read_device(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "Device"));
  Device d;
  SPLICE_TRY(field_into(j, "type", path, read_string, d.type));
  if (const Json* index = optional_field(j, "index")) {
    SPLICE_ASSIGN_OR_RETURN(d.index, read_int(*index, path.field("index")));
  }
  return d;
}

Result<SymExpr> read_sym_expr(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "SymExpr"));
  SymExpr e;
  SPLICE_TRY(field_into(j, "expr_str", path, read_string, e.expr_str));
  if (const Json* hint = optional_field(j, "hint")) {
    SPLICE_ASSIGN_OR_RETURN(e.hint, read_sym_expr_hint(*hint, path.field("hint")));
  }
  return e;
}

Result<SymInt> read_sym_int(const Json& j, const Path& path) {
  return read_sym<SymInt>(j, path, "SymInt", "as_int", read_int);
}
Result<SymFloat> read_sym_float(const Json& j, const Path& path) {
  return read_sym<SymFloat>(j, path, "SymFloat", "as_float", read_float);
}
Result<SymBool> read_sym_bool(const Json& j, const Path& path) {
  return read_sym<SymBool>(j, path, "SymBool", "as_bool", read_bool);
}

Result<TensorMeta> read_tensor_meta(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "TensorMeta"));
  TensorMeta m;
  auto read_sym_ints = [](const Json& l, const Path& p) {
    return read_list<SymInt>(l, p, read_sym_int);
  };
  SPLICE_TRY(field_into(j, "dtype", path, read_int32, m.dtype));
  SPLICE_TRY(field_into(j, "sizes", path, read_sym_ints, m.sizes));
  SPLICE_TRY(field_into(j, "requires_grad", path, read_bool, m.requires_grad));
  SPLICE_TRY(field_into(j, "device", path, read_device, m.device));
  SPLICE_TRY(field_into(j, "strides", path, read_sym_ints, m.strides));
  SPLICE_TRY(field_into(j, "storage_offset", path, read_sym_int, m.storage_offset));
  SPLICE_TRY(field_into(j, "layout", path, read_int32, m.layout));
  return m;
}

Result<TensorArgument> read_tensor_argument(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "TensorArgument"));
  TensorArgument t;
  SPLICE_TRY(field_into(j, "name", path, read_string, t.name));
  return t;
}

Result<TokenArgument> read_token_argument(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "TokenArgument"));
  TokenArgument t;
  SPLICE_TRY(field_into(j, "name", path, read_string, t.name));
  return t;
}

Result<CustomObjArgument> read_custom_obj_argument(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "CustomObjArgument"));
  CustomObjArgument c;
  SPLICE_TRY(field_into(j, "name", path, read_string, c.name));
  SPLICE_TRY(field_into(j, "class_fqn", path, read_string, c.class_fqn));
  return c;
}

Result<Argument> read_argument(const Json& j, const Path& path) {
  return read_argument_at(j, path, 0);
}

Result<Argument> read_nested_argument(const Json& j, const Path& path, int depth) {
  return read_argument_at(j, path, depth);
}

}  // namespace splice::pt2::detail

namespace splice::pt2 {

const char* argument_kind_name(const Argument& arg) {
  return detail::kArgumentKinds[arg.value.index()].name;
}

}  // namespace splice::pt2
