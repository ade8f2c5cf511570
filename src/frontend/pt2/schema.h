#pragma once
// Typed mirror of PyTorch's export serialization schema (torch/_export/serde/schema.py, schema
// 8.x as written by torch 2.5 through 2.11) and the parsers that fill it from the JSON of
// `models/<name>.json` and of `model_weights_config.json` / `model_constants_config.json`.
//
// This is the first of two import steps: JSON → these structs (no meaning checked beyond
// types and shapes of the JSON), then structs → ir (the importer). Names follow the schema, so
// `Graph`, `Node`, `SymExpr` here are the archive's, not splice's IR types of the same name.
//
// Encoding rules the parsers follow (torch/_export/serde/serialize.py):
//   - a union is an object with exactly one key naming its kind: {"as_int": 3};
//   - enums (ScalarType, Layout, MemoryFormat, ArgumentKind) are their integer values; they
//     are kept raw here, the importer maps them;
//   - floats may be written as JSON integers, or as the strings "Infinity", "-Infinity",
//     "NaN";
//   - fields unknown to this schema are ignored, so newer minor versions still load; an
//     unknown union kind is an error naming the kind and where it was found.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "support/error.h"

namespace splice::pt2 {

// The schema major version splice reads; minor versions only add optional fields.
inline constexpr int64_t kSupportedSchemaMajor = 8;

// ---------------------------------------------------------------------------------------------
// Enums, kept as raw integers (the export schema's numbering, as torch/_export/serde/schema.py
// defines it).

// ScalarType: FLOAT = 7, LONG = 5, BOOL = 12, BFLOAT16 = 13, ...
using ScalarTypeCode = int32_t;
// Layout: Strided = 7.
using LayoutCode = int32_t;
// MemoryFormat: ContiguousFormat = 1, ChannelsLast = 2, ChannelsLast3d = 3, PreserveFormat = 4.
using MemoryFormatCode = int32_t;

enum class ArgumentKind { kUnknown = 0, kPositional = 1, kKeyword = 2 };

struct Device {
  std::string type;              // "cpu", "cuda", "meta", ...
  std::optional<int64_t> index;  // absent or null: no index
};

// ---------------------------------------------------------------------------------------------
// Symbolic values in metadata (TensorMeta sizes, sym_*_values).

// The hint is the value the expression had when the program was exported.
struct SymExprHint {
  std::variant<int64_t, bool, double> value;  // as_int | as_bool | as_float
};

// A sympy srepr string, e.g. `Add(Symbol('s0', positive=True, integer=True), Integer(2))`.
struct SymExpr {
  std::string expr_str;
  std::optional<SymExprHint> hint;  // null for data-dependent (u0-style) symbols
};

struct SymInt {
  std::variant<int64_t, SymExpr> value;  // as_int | as_expr
  bool is_constant() const { return value.index() == 0; }
};
struct SymFloat {
  std::variant<double, SymExpr> value;  // as_float | as_expr
};
struct SymBool {
  std::variant<bool, SymExpr> value;  // as_bool | as_expr
};

struct TensorMeta {
  ScalarTypeCode dtype = 0;
  std::vector<SymInt> sizes;
  std::vector<SymInt> strides;
  SymInt storage_offset{int64_t{0}};
  bool requires_grad = false;
  Device device;
  LayoutCode layout = 0;
};

// ---------------------------------------------------------------------------------------------
// Arguments of nodes and graphs.

struct TensorArgument {
  std::string name;
};
struct TokenArgument {
  std::string name;
};

// A SymInt argument names a graph value (as_name) or, inside int lists that mix symbols and
// constants, holds a constant (as_int).
struct SymIntArgument {
  std::variant<std::string, int64_t> value;  // as_name | as_int
  bool is_name() const { return value.index() == 0; }
};
struct SymFloatArgument {
  std::variant<std::string, double> value;  // as_name | as_float
  bool is_name() const { return value.index() == 0; }
};
struct SymBoolArgument {
  std::variant<std::string, bool> value;  // as_name | as_bool
  bool is_name() const { return value.index() == 0; }
};
// An element of Tensor?[] (or a Tensor? argument): a tensor or None.
struct OptionalTensorArgument {
  std::optional<TensorArgument> tensor;  // as_tensor | as_none (nullopt)
};
struct CustomObjArgument {
  std::string name;
  std::string class_fqn;
};
// A subgraph of a higher-order op (wrap_with_set_grad_enabled, cond, map, ...): its name and
// the graph, parsed like the program's own (shared: the struct stays copyable while Graph is
// still incomplete here). inline_subgraphs.h inlines the grad-mode regions; the importer
// refuses the others by name.
struct Graph;
struct GraphArgument {
  std::string name;
  std::shared_ptr<const Graph> graph;
};
struct ComplexValue {
  double real = 0;
  double imag = 0;
};

// One alternative per Argument kind whose payload type would otherwise be ambiguous.
struct NoneArgument {};
struct TensorListArgument {
  std::vector<TensorArgument> values;
};
struct IntArgument {
  int64_t value = 0;
};
struct IntListArgument {
  std::vector<int64_t> values;
};
struct FloatArgument {
  double value = 0;
};
struct FloatListArgument {
  std::vector<double> values;
};
struct StringArgument {
  std::string value;
};
struct StringListArgument {
  std::vector<std::string> values;
};
struct SymIntListArgument {
  std::vector<SymIntArgument> values;
};
struct ScalarTypeArgument {
  ScalarTypeCode value = 0;
};
struct MemoryFormatArgument {
  MemoryFormatCode value = 0;
};
struct LayoutArgument {
  LayoutCode value = 0;
};
struct BoolArgument {
  bool value = false;
};
struct BoolListArgument {
  std::vector<bool> values;
};
struct SymBoolListArgument {
  std::vector<SymBoolArgument> values;
};
struct OptionalTensorListArgument {
  std::vector<OptionalTensorArgument> values;
};
// An OpOverload passed as an argument (e.g. to a higher-order op): its qualified name.
struct OperatorArgument {
  std::string name;
};
struct SymFloatListArgument {
  std::vector<SymFloatArgument> values;
};
struct NestedTensorListArgument {
  std::vector<std::vector<TensorArgument>> values;
};
struct IntListListArgument {
  std::vector<std::vector<int64_t>> values;
};
struct Argument;
// as_string_to_argument: a dict of arguments, in key order. The element type is incomplete
// here; std::vector allows that and Argument is complete before anything is used.
struct StringToArgumentMap {
  std::vector<std::pair<std::string, Argument>> entries;
};

// The Argument union. The alternatives are listed in the schema's order; the JSON key of each
// is given by argument_kind_name().
using ArgumentValue = std::variant<NoneArgument,                // as_none
                                   TensorArgument,              // as_tensor
                                   TensorListArgument,          // as_tensors
                                   IntArgument,                 // as_int
                                   IntListArgument,             // as_ints
                                   FloatArgument,               // as_float
                                   FloatListArgument,           // as_floats
                                   StringArgument,              // as_string
                                   StringListArgument,          // as_strings
                                   SymIntArgument,              // as_sym_int
                                   SymIntListArgument,          // as_sym_ints
                                   ScalarTypeArgument,          // as_scalar_type
                                   MemoryFormatArgument,        // as_memory_format
                                   LayoutArgument,              // as_layout
                                   Device,                      // as_device
                                   BoolArgument,                // as_bool
                                   BoolListArgument,            // as_bools
                                   SymBoolArgument,             // as_sym_bool
                                   SymBoolListArgument,         // as_sym_bools
                                   GraphArgument,               // as_graph
                                   OptionalTensorListArgument,  // as_optional_tensors
                                   CustomObjArgument,           // as_custom_obj
                                   OperatorArgument,            // as_operator
                                   SymFloatArgument,            // as_sym_float
                                   SymFloatListArgument,        // as_sym_floats
                                   OptionalTensorArgument,      // as_optional_tensor
                                   ComplexValue,                // as_complex
                                   NestedTensorListArgument,    // as_nested_tensors
                                   IntListListArgument,         // as_int_lists
                                   StringToArgumentMap>;        // as_string_to_argument

struct Argument {
  ArgumentValue value;

  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(value);
  }
  template <typename T>
  const T* get_if() const {
    return std::get_if<T>(&value);
  }
};

// The JSON key of the argument's kind ("as_tensor", "as_ints", ...), for error messages.
const char* argument_kind_name(const Argument& arg);

struct NamedArgument {
  std::string name;  // the parameter name in the operator's schema
  Argument arg;
  std::optional<ArgumentKind> kind;  // absent in archives older than the field
};

struct Node {
  std::string target;  // "torch.ops.aten.slice_scatter.default", "_operator.add", ...
  std::vector<NamedArgument> inputs;  // defaulted arguments are absent
  std::vector<Argument> outputs;
  std::map<std::string, std::string> metadata;  // stack_trace, nn_module_stack, ...
  std::optional<bool> is_hop_single_tensor_return;
  std::optional<std::string> name;  // the FX node name, absent in older archives
};

struct Graph {
  std::vector<Argument> inputs;
  std::vector<Argument> outputs;
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::map<std::string, SymInt> sym_int_values;
  std::map<std::string, SymBool> sym_bool_values;
  std::map<std::string, SymFloat> sym_float_values;
  std::map<std::string, CustomObjArgument> custom_obj_values;
  bool is_single_tensor_return = false;
};

// ---------------------------------------------------------------------------------------------
// Signature: input_specs[i] describes graph.inputs[i], output_specs[i] graph.outputs[i].

// A non-tensor value fixed at export (constant_input).
struct ConstantValue {
  std::variant<NoneArgument, int64_t, double, std::string, bool> value;
};

struct UserInputSpec {
  Argument arg;  // a tensor or a SymInt, in practice
};
struct InputToParameterSpec {
  TensorArgument arg;
  std::string parameter_name;  // key of model_weights_config.json
};
struct InputToBufferSpec {
  TensorArgument arg;
  std::string buffer_name;
  bool persistent = true;  // non-persistent buffers live under data/constants/
};
struct InputToTensorConstantSpec {
  TensorArgument arg;
  std::string tensor_constant_name;
};
struct InputToCustomObjSpec {
  CustomObjArgument arg;
  std::string custom_obj_name;
};
struct InputTokenSpec {
  TokenArgument arg;
};
struct InputToConstantInputSpec {
  std::string name;
  ConstantValue value;
};
using InputSpec =
    std::variant<UserInputSpec, InputToParameterSpec, InputToBufferSpec, InputToTensorConstantSpec,
                 InputToCustomObjSpec, InputTokenSpec, InputToConstantInputSpec>;

struct UserOutputSpec {
  Argument arg;
};
struct LossOutputSpec {
  TensorArgument arg;
};
struct BufferMutationSpec {
  TensorArgument arg;
  std::string buffer_name;
};
struct GradientToParameterSpec {
  TensorArgument arg;
  std::string parameter_name;
};
struct GradientToUserInputSpec {
  TensorArgument arg;
  std::string user_input_name;
};
struct UserInputMutationSpec {
  TensorArgument arg;
  std::string user_input_name;
};
struct OutputTokenSpec {
  TokenArgument arg;
};
struct ParameterMutationSpec {
  TensorArgument arg;
  std::string parameter_name;
};
using OutputSpec = std::variant<UserOutputSpec, LossOutputSpec, BufferMutationSpec,
                                GradientToParameterSpec, GradientToUserInputSpec,
                                UserInputMutationSpec, OutputTokenSpec, ParameterMutationSpec>;

struct GraphSignature {
  std::vector<InputSpec> input_specs;
  std::vector<OutputSpec> output_specs;
};

// ---------------------------------------------------------------------------------------------
// Program.

// A symbol's allowed range; nullopt is unbounded on that side. Archives write unbounded as
// null, or (older writers) as a huge sentinel integer or an infinite float; every value with
// magnitude >= 2^62 reads as unbounded. A finite fractional bound is rounded inward, as
// PyTorch's serializer does (min up, max down).
struct RangeConstraint {
  std::optional<int64_t> min_val;
  std::optional<int64_t> max_val;
};

struct SchemaVersion {
  int64_t major = 0;
  int64_t minor = 0;
};

struct GraphModule {
  Graph graph;
  GraphSignature signature;
  // module_call_graph is only used by PyTorch to unflatten modules; it is not read.
  std::map<std::string, std::string> metadata;
};

struct ExportedProgram {
  GraphModule graph_module;
  std::map<std::string, int64_t> opset_version;  // {"aten": 10}
  std::map<std::string, RangeConstraint> range_constraints;
  SchemaVersion schema_version;
  std::vector<std::string> verifiers;
  std::string torch_version = "<=2.4";  // the schema's default when the field is absent
};

// ---------------------------------------------------------------------------------------------
// Weights and constants configuration (data/weights/model_weights_config.json,
// data/constants/model_constants_config.json).

struct PayloadMeta {
  std::string path_name;  // entry name in the same folder: "weight_0", "tensor_3"
  bool is_param = false;
  bool use_pickle = false;                // tensor subclasses / custom objects: refused later
  std::optional<TensorMeta> tensor_meta;  // null for custom objects
};

struct PayloadConfig {
  std::map<std::string, PayloadMeta> config;  // FQN → payload
};

// ---------------------------------------------------------------------------------------------
// Parsers. Every failure is ErrorKind::kBadArchive with a message naming the field's path
// (`graph_module.graph.tensor_values['x'].sizes[1]: expected an integer, got string`) or, in
// nodes, the node and input (`node 'slice_scatter' input 'src': unknown argument kind
// 'as_foo'`). They never throw.

Result<ExportedProgram> parse_exported_program(std::string_view json_text);
Result<PayloadConfig> parse_payload_config(std::string_view json_text);

}  // namespace splice::pt2
