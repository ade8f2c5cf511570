// The shapes (shaped_json.h) of the export schema's JSON: one table per struct of schema.h,
// listing exactly the fields and union kinds the readers of schema.cc and schema_json.cc read.
// A field a reader reads but this file omits would be dropped before the reader sees it, so the
// schema tests parse every field and every Argument kind through these tables.

#include "frontend/pt2/shaped_json.h"

namespace splice::pt2::detail {

namespace shapes {

using K = ShapeKind;

// Scalars; the readers check which scalar type they hold.
const Shape kString{K::kScalar, "a string"};
const Shape kInt{K::kInteger, "an integer"};
const Shape kFloat{K::kScalar, "a number"};
const Shape kBool{K::kScalar, "a boolean"};
const Shape kBound{K::kScalar, "an integer bound or null"};
const Shape kIgnored{K::kIgnored, "anything"};

const Shape kStringList{K::kList, "a list", &kString};
const Shape kIntList{K::kList, "a list", &kInt};
const Shape kFloatList{K::kList, "a list", &kFloat};
const Shape kBoolList{K::kList, "a list", &kBool};
const Shape kIntListList{K::kList, "a list", &kIntList};
const Shape kStringMap{K::kMap, "an object", &kString};
const Shape kIntMap{K::kMap, "an object", &kInt};

// --- Value types (schema_json.cc) ---------------------------------------------------------

const ShapeField kDeviceFields[] = {{"type", &kString}, {"index", &kInt}};
const Shape kDevice{K::kRecord, "an object (Device)", nullptr, kDeviceFields};

const ShapeField kHintKinds[] = {{"as_int", &kInt}, {"as_bool", &kBool}, {"as_float", &kFloat}};
const Shape kHint{K::kUnion, "a one-key object (SymExprHint)", nullptr, kHintKinds};

const ShapeField kSymExprFields[] = {{"expr_str", &kString}, {"hint", &kHint}};
const Shape kSymExpr{K::kRecord, "an object (SymExpr)", nullptr, kSymExprFields};

const ShapeField kSymIntKinds[] = {{"as_int", &kInt}, {"as_expr", &kSymExpr}};
const Shape kSymInt{K::kUnion, "a one-key object (SymInt)", nullptr, kSymIntKinds};
const ShapeField kSymFloatKinds[] = {{"as_float", &kFloat}, {"as_expr", &kSymExpr}};
const Shape kSymFloat{K::kUnion, "a one-key object (SymFloat)", nullptr, kSymFloatKinds};
const ShapeField kSymBoolKinds[] = {{"as_bool", &kBool}, {"as_expr", &kSymExpr}};
const Shape kSymBool{K::kUnion, "a one-key object (SymBool)", nullptr, kSymBoolKinds};
const Shape kSymIntList{K::kList, "a list", &kSymInt};

const ShapeField kTensorMetaFields[] = {{"dtype", &kInt},          {"sizes", &kSymIntList},
                                        {"requires_grad", &kBool}, {"device", &kDevice},
                                        {"strides", &kSymIntList}, {"storage_offset", &kSymInt},
                                        {"layout", &kInt}};
const Shape kTensorMeta{K::kRecord, "an object (TensorMeta)", nullptr, kTensorMetaFields};

const ShapeField kNameFields[] = {{"name", &kString}};
const Shape kTensorArgument{K::kRecord, "an object (TensorArgument)", nullptr, kNameFields};
const Shape kTokenArgument{K::kRecord, "an object (TokenArgument)", nullptr, kNameFields};
const Shape kTensorList{K::kList, "a list", &kTensorArgument};
const Shape kNestedTensorList{K::kList, "a list", &kTensorList};

const ShapeField kCustomObjFields[] = {{"name", &kString}, {"class_fqn", &kString}};
const Shape kCustomObj{K::kRecord, "an object (CustomObjArgument)", nullptr, kCustomObjFields};

const ShapeField kSymIntArgumentKinds[] = {{"as_name", &kString}, {"as_int", &kInt}};
const Shape kSymIntArgument{K::kUnion, "a one-key object (SymIntArgument)", nullptr,
                            kSymIntArgumentKinds};
const ShapeField kSymFloatArgumentKinds[] = {{"as_name", &kString}, {"as_float", &kFloat}};
const Shape kSymFloatArgument{K::kUnion, "a one-key object (SymFloatArgument)", nullptr,
                              kSymFloatArgumentKinds};
const ShapeField kSymBoolArgumentKinds[] = {{"as_name", &kString}, {"as_bool", &kBool}};
const Shape kSymBoolArgument{K::kUnion, "a one-key object (SymBoolArgument)", nullptr,
                             kSymBoolArgumentKinds};

const ShapeField kOptionalTensorKinds[] = {{"as_tensor", &kTensorArgument}, {"as_none", &kIgnored}};
const Shape kOptionalTensor{K::kUnion, "a one-key object (OptionalTensorArgument)", nullptr,
                            kOptionalTensorKinds};

const ShapeField kComplexFields[] = {{"real", &kFloat}, {"imag", &kFloat}};
const Shape kComplex{K::kRecord, "an object (ComplexValue)", nullptr, kComplexFields};

extern const Shape kArgument;
extern const Shape kGraph;

const ShapeField kGraphArgumentFields[] = {{"name", &kString}, {"graph", &kGraph}};
const Shape kGraphArgument{K::kRecord, "an object (GraphArgument)", nullptr, kGraphArgumentFields};

const Shape kSymIntArgumentList{K::kList, "a list", &kSymIntArgument};
const Shape kSymFloatArgumentList{K::kList, "a list", &kSymFloatArgument};
const Shape kSymBoolArgumentList{K::kList, "a list", &kSymBoolArgument};
const Shape kOptionalTensorList{K::kList, "a list", &kOptionalTensor};
const Shape kArgumentMap{K::kMap, "an object", &kArgument};

// Every kind of kArgumentKinds in schema_json.cc.
const ShapeField kArgumentKinds[] = {
    {"as_none", &kIgnored},
    {"as_tensor", &kTensorArgument},
    {"as_tensors", &kTensorList},
    {"as_int", &kInt},
    {"as_ints", &kIntList},
    {"as_float", &kFloat},
    {"as_floats", &kFloatList},
    {"as_string", &kString},
    {"as_strings", &kStringList},
    {"as_sym_int", &kSymIntArgument},
    {"as_sym_ints", &kSymIntArgumentList},
    {"as_scalar_type", &kInt},
    {"as_memory_format", &kInt},
    {"as_layout", &kInt},
    {"as_device", &kDevice},
    {"as_bool", &kBool},
    {"as_bools", &kBoolList},
    {"as_sym_bool", &kSymBoolArgument},
    {"as_sym_bools", &kSymBoolArgumentList},
    {"as_graph", &kGraphArgument},
    {"as_optional_tensors", &kOptionalTensorList},
    {"as_custom_obj", &kCustomObj},
    {"as_operator", &kString},
    {"as_sym_float", &kSymFloatArgument},
    {"as_sym_floats", &kSymFloatArgumentList},
    {"as_optional_tensor", &kOptionalTensor},
    {"as_complex", &kComplex},
    {"as_nested_tensors", &kNestedTensorList},
    {"as_int_lists", &kIntListList},
    {"as_string_to_argument", &kArgumentMap},
};
const Shape kArgument{K::kUnion, "a one-key object (Argument)", nullptr, kArgumentKinds};
const Shape kArgumentList{K::kList, "a list", &kArgument};

// --- Graphs (schema.cc) ---------------------------------------------------------------------

const ShapeField kNamedArgumentFields[] = {
    {"name", &kString}, {"arg", &kArgument}, {"kind", &kInt}};
const Shape kNamedArgument{K::kRecord, "an object (NamedArgument)", nullptr, kNamedArgumentFields};
const Shape kNamedArgumentList{K::kList, "a list", &kNamedArgument};

const ShapeField kNodeFields[] = {{"name", &kString},
                                  {"target", &kString},
                                  {"inputs", &kNamedArgumentList},
                                  {"outputs", &kArgumentList},
                                  {"metadata", &kStringMap},
                                  {"is_hop_single_tensor_return", &kBool}};
const Shape kNode{K::kRecord, "an object (Node)", nullptr, kNodeFields};
const Shape kNodeList{K::kList, "a list", &kNode};

const Shape kTensorMetaMap{K::kMap, "an object", &kTensorMeta};
const Shape kSymIntMap{K::kMap, "an object", &kSymInt};
const Shape kSymBoolMap{K::kMap, "an object", &kSymBool};
const Shape kSymFloatMap{K::kMap, "an object", &kSymFloat};
const Shape kCustomObjMap{K::kMap, "an object", &kCustomObj};

const ShapeField kGraphFields[] = {{"inputs", &kArgumentList},
                                   {"outputs", &kArgumentList},
                                   {"nodes", &kNodeList},
                                   {"tensor_values", &kTensorMetaMap},
                                   {"sym_int_values", &kSymIntMap},
                                   {"sym_bool_values", &kSymBoolMap},
                                   {"sym_float_values", &kSymFloatMap},
                                   {"custom_obj_values", &kCustomObjMap},
                                   {"is_single_tensor_return", &kBool}};
const Shape kGraph{K::kRecord, "an object (Graph)", nullptr, kGraphFields};

// --- Signature ------------------------------------------------------------------------------

const ShapeField kConstantKinds[] = {{"as_none", &kIgnored},
                                     {"as_int", &kInt},
                                     {"as_float", &kFloat},
                                     {"as_string", &kString},
                                     {"as_bool", &kBool}};
const Shape kConstantValue{K::kUnion, "a one-key object (ConstantValue)", nullptr, kConstantKinds};

// The specs' fields, all in one record per kind.
const ShapeField kUserSpecFields[] = {{"arg", &kArgument}};
const Shape kUserSpec{K::kRecord, "an object (InputSpec)", nullptr, kUserSpecFields};
const ShapeField kTensorSpecFields[] = {
    {"arg", &kTensorArgument}, {"parameter_name", &kString},       {"buffer_name", &kString},
    {"persistent", &kBool},    {"tensor_constant_name", &kString}, {"user_input_name", &kString}};
const Shape kTensorInputSpec{K::kRecord, "an object (InputSpec)", nullptr, kTensorSpecFields};
const Shape kTensorOutputSpec{K::kRecord, "an object (OutputSpec)", nullptr, kTensorSpecFields};
const ShapeField kCustomObjSpecFields[] = {{"arg", &kCustomObj}, {"custom_obj_name", &kString}};
const Shape kCustomObjSpec{K::kRecord, "an object (InputSpec)", nullptr, kCustomObjSpecFields};
const ShapeField kTokenSpecFields[] = {{"arg", &kTokenArgument}};
const Shape kTokenInputSpec{K::kRecord, "an object (InputSpec)", nullptr, kTokenSpecFields};
const Shape kTokenOutputSpec{K::kRecord, "an object (OutputSpec)", nullptr, kTokenSpecFields};
const ShapeField kConstantSpecFields[] = {{"name", &kString}, {"value", &kConstantValue}};
const Shape kConstantSpec{K::kRecord, "an object (InputSpec)", nullptr, kConstantSpecFields};
const Shape kUserOutputSpec{K::kRecord, "an object (OutputSpec)", nullptr, kUserSpecFields};

const ShapeField kInputSpecKinds[] = {
    {"user_input", &kUserSpec},        {"parameter", &kTensorInputSpec},
    {"buffer", &kTensorInputSpec},     {"tensor_constant", &kTensorInputSpec},
    {"custom_obj", &kCustomObjSpec},   {"token", &kTokenInputSpec},
    {"constant_input", &kConstantSpec}};
const Shape kInputSpec{K::kUnion, "a one-key object (InputSpec)", nullptr, kInputSpecKinds};
const ShapeField kOutputSpecKinds[] = {{"user_output", &kUserOutputSpec},
                                       {"loss_output", &kTensorOutputSpec},
                                       {"buffer_mutation", &kTensorOutputSpec},
                                       {"gradient_to_parameter", &kTensorOutputSpec},
                                       {"gradient_to_user_input", &kTensorOutputSpec},
                                       {"user_input_mutation", &kTensorOutputSpec},
                                       {"token", &kTokenOutputSpec},
                                       {"parameter_mutation", &kTensorOutputSpec}};
const Shape kOutputSpec{K::kUnion, "a one-key object (OutputSpec)", nullptr, kOutputSpecKinds};

const Shape kInputSpecList{K::kList, "a list", &kInputSpec};
const Shape kOutputSpecList{K::kList, "a list", &kOutputSpec};
const ShapeField kSignatureFields[] = {{"input_specs", &kInputSpecList},
                                       {"output_specs", &kOutputSpecList}};
const Shape kSignature{K::kRecord, "an object (GraphSignature)", nullptr, kSignatureFields};

// --- Program and payload configs ------------------------------------------------------------

const ShapeField kGraphModuleFields[] = {
    {"graph", &kGraph}, {"signature", &kSignature}, {"metadata", &kStringMap}};
const Shape kGraphModule{K::kRecord, "an object (GraphModule)", nullptr, kGraphModuleFields};

const ShapeField kRangeFields[] = {{"min_val", &kBound}, {"max_val", &kBound}};
const Shape kRange{K::kRecord, "an object (RangeConstraint)", nullptr, kRangeFields};
const Shape kRangeMap{K::kMap, "an object", &kRange};

const ShapeField kSchemaVersionFields[] = {{"major", &kInt}, {"minor", &kInt}};
const Shape kSchemaVersion{K::kRecord, "an object (SchemaVersion)", nullptr, kSchemaVersionFields};

const ShapeField kExportedProgramFields[] = {
    {"torch_version", &kString},       {"schema_version", &kSchemaVersion},
    {"graph_module", &kGraphModule},   {"opset_version", &kIntMap},
    {"range_constraints", &kRangeMap}, {"verifiers", &kStringList}};

const ShapeField kPayloadMetaFields[] = {{"path_name", &kString},
                                         {"is_param", &kBool},
                                         {"use_pickle", &kBool},
                                         {"tensor_meta", &kTensorMeta}};
const Shape kPayloadMeta{K::kRecord, "an object (PayloadMeta)", nullptr, kPayloadMetaFields};
const Shape kPayloadMetaMap{K::kMap, "an object", &kPayloadMeta};
const ShapeField kPayloadConfigFields[] = {{"config", &kPayloadMetaMap}};

}  // namespace shapes

const Shape kExportedProgramShape{ShapeKind::kRecord, "an object (ExportedProgram)", nullptr,
                                  shapes::kExportedProgramFields};
const Shape kPayloadConfigShape{ShapeKind::kRecord, "an object (PayloadConfig)", nullptr,
                                shapes::kPayloadConfigFields};

}  // namespace splice::pt2::detail
