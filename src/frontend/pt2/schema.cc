// The program level of the export-schema parser: nodes, graphs, the graph signature, range
// constraints, the schema-version gate and the ExportedProgram / PayloadConfig entry points.
// Value-level readers (arguments, TensorMeta, symbolic values) are in schema_json.cc. Every
// nlohmann exception (bad_alloc aside, none is expected: types are checked before each access)
// is caught here and turned into an Error, so the parsers never throw.

#include <cmath>
#include <exception>
#include <limits>
#include <utility>

#include "frontend/pt2/schema.h"
#include "frontend/pt2/schema_json.h"
#include "frontend/pt2/shaped_json.h"

namespace splice::pt2 {

namespace detail {
namespace {

Result<std::map<std::string, std::string>> read_string_map(const Json& j, const Path& path) {
  return read_map<std::string>(j, path, read_string);
}

// --- Nodes and graphs ----------------------------------------------------------------------

Result<NamedArgument> read_named_argument(const Json& j, const Path& node_path, size_t i,
                                          int depth) {
  Path inputs_path = node_path.field("inputs");
  Path entry_path = inputs_path.index(i);
  SPLICE_TRY(expect_object(j, entry_path, "NamedArgument"));
  NamedArgument out;
  SPLICE_TRY(field_into(j, "name", entry_path, read_string, out.name));
  // Errors inside the argument read "node 'x' input 'src': ...".
  Path arg_path = node_path.named("input", out.name);
  SPLICE_ASSIGN_OR_RETURN(const Json* arg, require_field(j, "arg", arg_path));
  SPLICE_ASSIGN_OR_RETURN(out.arg, read_nested_argument(*arg, arg_path, depth));
  if (const Json* kind = optional_field(j, "kind")) {
    SPLICE_ASSIGN_OR_RETURN(int32_t k, read_int32(*kind, arg_path.field("kind")));
    if (k < 0 || k > 2) {
      return schema_error(arg_path.field("kind"),
                          fmt::format("unknown argument kind value {} (expected 0, 1 or 2)", k));
    }
    out.kind = static_cast<ArgumentKind>(k);
  }
  return out;
}

Result<Node> read_node(const Json& j, const Path& nodes_path, size_t index, int depth) {
  SPLICE_TRY(expect_object(j, nodes_path.index(index), "Node"));
  Node node;
  SPLICE_TRY(optional_field_into(j, "name", nodes_path.index(index), read_string, node.name));
  // Messages name the node as the user knows it from the exported graph.
  Path root;
  Path path = node.name ? root.named("node", *node.name) : root.numbered("node", index);
  SPLICE_TRY(field_into(j, "target", path, read_string, node.target));

  SPLICE_ASSIGN_OR_RETURN(const Json* inputs, require_field(j, "inputs", path));
  if (!inputs->is_array()) {
    return schema_error(path.field("inputs"), "expected a list, got " + describe(*inputs));
  }
  node.inputs.reserve(inputs->size());
  for (size_t i = 0; i < inputs->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(NamedArgument input, read_named_argument((*inputs)[i], path, i, depth));
    node.inputs.push_back(std::move(input));
  }

  SPLICE_ASSIGN_OR_RETURN(const Json* outputs, require_field(j, "outputs", path));
  if (!outputs->is_array()) {
    return schema_error(path.field("outputs"), "expected a list, got " + describe(*outputs));
  }
  node.outputs.reserve(outputs->size());
  for (size_t i = 0; i < outputs->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Argument output,
                            read_argument((*outputs)[i], path.numbered("output", i)));
    node.outputs.push_back(std::move(output));
  }

  SPLICE_TRY(field_into(j, "metadata", path, read_string_map, node.metadata));
  SPLICE_TRY(optional_field_into(j, "is_hop_single_tensor_return", path, read_bool,
                                 node.is_hop_single_tensor_return));
  return node;
}

}  // namespace

Result<Graph> read_graph(const Json& j, const Path& path, int depth) {
  SPLICE_TRY(expect_object(j, path, "Graph"));
  Graph g;
  auto read_arguments = [](const Json& l, const Path& p) {
    return read_list<Argument>(l, p, read_argument);
  };
  SPLICE_TRY(field_into(j, "inputs", path, read_arguments, g.inputs));
  SPLICE_TRY(field_into(j, "outputs", path, read_arguments, g.outputs));

  SPLICE_ASSIGN_OR_RETURN(const Json* nodes, require_field(j, "nodes", path));
  Path nodes_path = path.field("nodes");
  if (!nodes->is_array()) {
    return schema_error(nodes_path, "expected a list, got " + describe(*nodes));
  }
  g.nodes.reserve(nodes->size());
  for (size_t i = 0; i < nodes->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Node node, read_node((*nodes)[i], nodes_path, i, depth));
    g.nodes.push_back(std::move(node));
  }

  SPLICE_TRY(field_into(
      j, "tensor_values", path,
      [](const Json& m, const Path& p) { return read_map<TensorMeta>(m, p, read_tensor_meta); },
      g.tensor_values));
  SPLICE_TRY(field_into(
      j, "sym_int_values", path,
      [](const Json& m, const Path& p) { return read_map<SymInt>(m, p, read_sym_int); },
      g.sym_int_values));
  SPLICE_TRY(field_into(
      j, "sym_bool_values", path,
      [](const Json& m, const Path& p) { return read_map<SymBool>(m, p, read_sym_bool); },
      g.sym_bool_values));
  SPLICE_TRY(optional_field_into(
      j, "sym_float_values", path,
      [](const Json& m, const Path& p) { return read_map<SymFloat>(m, p, read_sym_float); },
      g.sym_float_values));
  SPLICE_TRY(optional_field_into(
      j, "custom_obj_values", path,
      [](const Json& m, const Path& p) {
        return read_map<CustomObjArgument>(m, p, read_custom_obj_argument);
      },
      g.custom_obj_values));
  SPLICE_TRY(optional_field_into(j, "is_single_tensor_return", path, read_bool,
                                 g.is_single_tensor_return));
  return g;
}

namespace {

// --- Signature -----------------------------------------------------------------------------

Result<ConstantValue> read_constant_value(const Json& j, const Path& path) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, "ConstantValue"));
  Path p = path.field(u.kind);
  ConstantValue c;
  if (u.kind == "as_none") {
    c.value = NoneArgument{};
  } else if (u.kind == "as_int") {
    SPLICE_ASSIGN_OR_RETURN(int64_t v, read_int(*u.value, p));
    c.value.emplace<int64_t>(v);
  } else if (u.kind == "as_float") {
    SPLICE_ASSIGN_OR_RETURN(double v, read_float(*u.value, p));
    c.value.emplace<double>(v);
  } else if (u.kind == "as_string") {
    SPLICE_ASSIGN_OR_RETURN(std::string v, read_string(*u.value, p));
    c.value.emplace<std::string>(std::move(v));
  } else if (u.kind == "as_bool") {
    SPLICE_ASSIGN_OR_RETURN(bool v, read_bool(*u.value, p));
    c.value.emplace<bool>(v);
  } else {
    return schema_error(path, fmt::format("unknown constant kind '{}'", u.kind));
  }
  return c;
}

// Reads {"arg": TensorArgument, <name_key>: string} into spec.arg and spec.*name_field.
template <typename Spec>
Result<Spec> read_tensor_spec(const Json& j, const Path& p, const char* name_key,
                              std::string Spec::*name_field) {
  SPLICE_TRY(expect_object(j, p, "spec"));
  Spec spec;
  SPLICE_TRY(field_into(j, "arg", p, read_tensor_argument, spec.arg));
  SPLICE_TRY(field_into(j, name_key, p, read_string, spec.*name_field));
  return spec;
}

Result<InputSpec> read_input_spec(const Json& j, const Path& path) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, "InputSpec"));
  const Json& v = *u.value;
  Path p = path.field(u.kind);
  SPLICE_TRY(expect_object(v, p, "InputSpec"));
  if (u.kind == "user_input") {
    UserInputSpec s;
    SPLICE_TRY(field_into(v, "arg", p, read_argument, s.arg));
    return InputSpec(std::move(s));
  }
  if (u.kind == "parameter") {
    SPLICE_ASSIGN_OR_RETURN(
        auto s, read_tensor_spec(v, p, "parameter_name", &InputToParameterSpec::parameter_name));
    return InputSpec(std::move(s));
  }
  if (u.kind == "buffer") {
    SPLICE_ASSIGN_OR_RETURN(auto s,
                            read_tensor_spec(v, p, "buffer_name", &InputToBufferSpec::buffer_name));
    SPLICE_TRY(field_into(v, "persistent", p, read_bool, s.persistent));
    return InputSpec(std::move(s));
  }
  if (u.kind == "tensor_constant") {
    SPLICE_ASSIGN_OR_RETURN(auto s,
                            read_tensor_spec(v, p, "tensor_constant_name",
                                             &InputToTensorConstantSpec::tensor_constant_name));
    return InputSpec(std::move(s));
  }
  if (u.kind == "custom_obj") {
    InputToCustomObjSpec s;
    SPLICE_TRY(field_into(v, "arg", p, read_custom_obj_argument, s.arg));
    SPLICE_TRY(field_into(v, "custom_obj_name", p, read_string, s.custom_obj_name));
    return InputSpec(std::move(s));
  }
  if (u.kind == "token") {
    InputTokenSpec s;
    SPLICE_TRY(field_into(v, "arg", p, read_token_argument, s.arg));
    return InputSpec(std::move(s));
  }
  if (u.kind == "constant_input") {
    InputToConstantInputSpec s;
    SPLICE_TRY(field_into(v, "name", p, read_string, s.name));
    SPLICE_TRY(field_into(v, "value", p, read_constant_value, s.value));
    return InputSpec(std::move(s));
  }
  return schema_error(path, fmt::format("unknown input spec kind '{}'", u.kind));
}

Result<OutputSpec> read_output_spec(const Json& j, const Path& path) {
  SPLICE_ASSIGN_OR_RETURN(UnionEntry u, read_union(j, path, "OutputSpec"));
  const Json& v = *u.value;
  Path p = path.field(u.kind);
  SPLICE_TRY(expect_object(v, p, "OutputSpec"));
  if (u.kind == "user_output") {
    UserOutputSpec s;
    SPLICE_TRY(field_into(v, "arg", p, read_argument, s.arg));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "loss_output") {
    LossOutputSpec s;
    SPLICE_TRY(field_into(v, "arg", p, read_tensor_argument, s.arg));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "buffer_mutation") {
    SPLICE_ASSIGN_OR_RETURN(
        auto s, read_tensor_spec(v, p, "buffer_name", &BufferMutationSpec::buffer_name));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "gradient_to_parameter") {
    SPLICE_ASSIGN_OR_RETURN(
        auto s, read_tensor_spec(v, p, "parameter_name", &GradientToParameterSpec::parameter_name));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "gradient_to_user_input") {
    SPLICE_ASSIGN_OR_RETURN(auto s, read_tensor_spec(v, p, "user_input_name",
                                                     &GradientToUserInputSpec::user_input_name));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "user_input_mutation") {
    SPLICE_ASSIGN_OR_RETURN(
        auto s, read_tensor_spec(v, p, "user_input_name", &UserInputMutationSpec::user_input_name));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "token") {
    OutputTokenSpec s;
    SPLICE_TRY(field_into(v, "arg", p, read_token_argument, s.arg));
    return OutputSpec(std::move(s));
  }
  if (u.kind == "parameter_mutation") {
    SPLICE_ASSIGN_OR_RETURN(
        auto s, read_tensor_spec(v, p, "parameter_name", &ParameterMutationSpec::parameter_name));
    return OutputSpec(std::move(s));
  }
  return schema_error(path, fmt::format("unknown output spec kind '{}'", u.kind));
}

Result<GraphSignature> read_signature(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "GraphSignature"));
  GraphSignature s;
  SPLICE_TRY(field_into(
      j, "input_specs", path,
      [](const Json& l, const Path& p) { return read_list<InputSpec>(l, p, read_input_spec); },
      s.input_specs));
  SPLICE_TRY(field_into(
      j, "output_specs", path,
      [](const Json& l, const Path& p) { return read_list<OutputSpec>(l, p, read_output_spec); },
      s.output_specs));
  return s;
}

Result<GraphModule> read_graph_module(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "GraphModule"));
  GraphModule m;
  SPLICE_TRY(field_into(
      j, "graph", path, [](const Json& g, const Path& p) { return read_graph(g, p, 0); }, m.graph));
  SPLICE_TRY(field_into(j, "signature", path, read_signature, m.signature));
  SPLICE_TRY(optional_field_into(j, "metadata", path, read_string_map, m.metadata));
  return m;
}

// --- Program -------------------------------------------------------------------------------

// Bounds at or beyond this magnitude are sentinels for "unbounded" (int_oo was once written as
// sys.maxsize - 1 = 9223372036854775806); no real size gets near it.
constexpr int64_t kUnboundedMagnitude = int64_t{1} << 62;

// One side of a RangeConstraint; `is_min` picks the rounding of a fractional float inward.
Result<std::optional<int64_t>> read_bound(const Json& j, const Path& path, bool is_min) {
  if (j.is_null()) return std::optional<int64_t>();
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u >= static_cast<uint64_t>(kUnboundedMagnitude)) return std::optional<int64_t>();
    return std::optional<int64_t>(static_cast<int64_t>(u));
  }
  if (j.is_number_integer()) {
    int64_t v = j.get<int64_t>();
    if (v >= kUnboundedMagnitude || v <= -kUnboundedMagnitude) return std::optional<int64_t>();
    return std::optional<int64_t>(v);
  }
  if (j.is_number_float() || j.is_string()) {
    SPLICE_ASSIGN_OR_RETURN(double d, read_float(j, path));
    if (std::isnan(d)) return schema_error(path, "range bound is NaN");
    if (!(std::fabs(d) < static_cast<double>(kUnboundedMagnitude))) {
      return std::optional<int64_t>();
    }
    return std::optional<int64_t>(static_cast<int64_t>(is_min ? std::ceil(d) : std::floor(d)));
  }
  return schema_error(path, "expected an integer bound or null, got " + describe(j));
}

Result<RangeConstraint> read_range_constraint(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "RangeConstraint"));
  RangeConstraint r;
  SPLICE_ASSIGN_OR_RETURN(const Json* min_val, require_field(j, "min_val", path));
  SPLICE_ASSIGN_OR_RETURN(r.min_val, read_bound(*min_val, path.field("min_val"), true));
  SPLICE_ASSIGN_OR_RETURN(const Json* max_val, require_field(j, "max_val", path));
  SPLICE_ASSIGN_OR_RETURN(r.max_val, read_bound(*max_val, path.field("max_val"), false));
  return r;
}

Result<SchemaVersion> read_schema_version(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "SchemaVersion"));
  SchemaVersion v;
  SPLICE_TRY(field_into(j, "major", path, read_int, v.major));
  SPLICE_TRY(field_into(j, "minor", path, read_int, v.minor));
  return v;
}

Result<ExportedProgram> read_exported_program(const Json& j) {
  Path root;
  SPLICE_TRY(expect_object(j, root, "ExportedProgram"));
  ExportedProgram ep;
  SPLICE_TRY(optional_field_into(j, "torch_version", root, read_string, ep.torch_version));
  // The version is checked before anything else, so a newer archive fails with this message
  // rather than with whatever field changed.
  SPLICE_TRY(field_into(j, "schema_version", root, read_schema_version, ep.schema_version));
  if (ep.schema_version.major != kSupportedSchemaMajor) {
    return make_error(ErrorKind::kBadArchive,
                      "schema version {}.{} (written by torch {}) is not supported: splice reads "
                      "schema {}.x, written by torch 2.5 through 2.11",
                      ep.schema_version.major, ep.schema_version.minor, ep.torch_version,
                      kSupportedSchemaMajor);
  }
  SPLICE_TRY(field_into(j, "graph_module", root, read_graph_module, ep.graph_module));
  SPLICE_TRY(field_into(
      j, "opset_version", root,
      [](const Json& m, const Path& p) { return read_map<int64_t>(m, p, read_int); },
      ep.opset_version));
  SPLICE_TRY(field_into(
      j, "range_constraints", root,
      [](const Json& m, const Path& p) {
        return read_map<RangeConstraint>(m, p, read_range_constraint);
      },
      ep.range_constraints));
  SPLICE_TRY(optional_field_into(
      j, "verifiers", root,
      [](const Json& l, const Path& p) { return read_list<std::string>(l, p, read_string); },
      ep.verifiers));
  return ep;
}

// --- Payload configs -----------------------------------------------------------------------

Result<PayloadMeta> read_payload_meta(const Json& j, const Path& path) {
  SPLICE_TRY(expect_object(j, path, "PayloadMeta"));
  PayloadMeta m;
  SPLICE_TRY(field_into(j, "path_name", path, read_string, m.path_name));
  SPLICE_TRY(field_into(j, "is_param", path, read_bool, m.is_param));
  SPLICE_TRY(field_into(j, "use_pickle", path, read_bool, m.use_pickle));
  SPLICE_TRY(optional_field_into(j, "tensor_meta", path, read_tensor_meta, m.tensor_meta));
  return m;
}

Result<PayloadConfig> read_payload_config(const Json& j) {
  Path root;
  SPLICE_TRY(expect_object(j, root, "PayloadConfig"));
  PayloadConfig c;
  SPLICE_TRY(field_into(
      j, "config", root,
      [](const Json& m, const Path& p) { return read_map<PayloadMeta>(m, p, read_payload_meta); },
      c.config));
  return c;
}

// Parses `text` against `shape` (shaped_json.h: wrong container types, overlong strings and
// oversized integers are refused as they stream) and runs `read` on the document, converting
// every failure to an Error.
template <typename T, typename F>
Result<T> parse_document(std::string_view text, const Shape& shape, const char* what, F&& read) {
  try {
    SPLICE_ASSIGN_OR_RETURN(Json doc, parse_shaped_json(text, shape, what));
    return read(doc);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::kBadArchive, "{} ({} bytes) is too large to parse: out of memory",
                      what, text.size());
  } catch (const std::exception& e) {
    // Not expected: every accessor is guarded by a type check.
    return make_error(ErrorKind::kBadArchive, "{}: {}", what, e.what());
  }
}

}  // namespace
}  // namespace detail

Result<ExportedProgram> parse_exported_program(std::string_view json_text) {
  return detail::parse_document<ExportedProgram>(json_text, detail::kExportedProgramShape,
                                                 "the program JSON", detail::read_exported_program);
}

Result<PayloadConfig> parse_payload_config(std::string_view json_text) {
  return detail::parse_document<PayloadConfig>(json_text, detail::kPayloadConfigShape,
                                               "the payload config JSON",
                                               detail::read_payload_config);
}

}  // namespace splice::pt2
