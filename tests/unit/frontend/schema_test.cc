// Tests for the export-schema JSON parsers (src/frontend/pt2/schema.h): a hand-written
// model.json in the format torch 2.11 writes, every Argument kind, signature specs, range
// bounds, float encodings, payload configs, and the errors for malformed documents.

#include "frontend/pt2/schema.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace splice::pt2 {
namespace {

using nlohmann::json;

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(SPLICE_SOURCE_DIR) + "/tests/fixtures/schema/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json fixture_json(const std::string& name) { return json::parse(read_fixture(name)); }

// The error message of a parse that must fail with kBadArchive.
template <typename T>
std::string error_of(const Result<T>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
  return r.error().message();
}

std::string program_error(const json& doc) { return error_of(parse_exported_program(doc.dump())); }

// A minimal valid program with one node `n` whose only input `a` is `arg`.
json program_with_argument(const json& arg) {
  json doc = fixture_json("model_small.json");
  json& nodes = doc["graph_module"]["graph"]["nodes"];
  nodes = json::array();
  nodes.push_back({{"target", "torch.ops.test.op.default"},
                   {"inputs", json::array({{{"name", "a"}, {"arg", arg}, {"kind", 2}}})},
                   {"outputs", json::array()},
                   {"metadata", json::object()},
                   {"name", "n"}});
  return doc;
}

Argument parse_argument_json(const std::string& arg_text) {
  auto ep = parse_exported_program(program_with_argument(json::parse(arg_text)).dump());
  EXPECT_TRUE(ep.ok()) << (ep.ok() ? "" : ep.error().message());
  if (!ep.ok()) return Argument{};
  return ep->graph_module.graph.nodes.at(0).inputs.at(0).arg;
}

const SymExpr& expr_of(const SymInt& s) { return std::get<SymExpr>(s.value); }

TEST(SchemaProgram, ParsesSmallModel) {
  auto ep = parse_exported_program(read_fixture("model_small.json"));
  ASSERT_TRUE(ep.ok()) << ep.error().message();

  EXPECT_EQ(ep->schema_version.major, 8);
  EXPECT_EQ(ep->schema_version.minor, 17);
  EXPECT_EQ(ep->torch_version, "2.11.0+cu128");
  EXPECT_EQ(ep->opset_version, (std::map<std::string, int64_t>{{"aten", 10}}));
  EXPECT_TRUE(ep->verifiers.empty());

  ASSERT_EQ(ep->range_constraints.size(), 3u);
  EXPECT_EQ(ep->range_constraints.at("s0").min_val, 1);
  EXPECT_EQ(ep->range_constraints.at("s0").max_val, 8);
  EXPECT_EQ(ep->range_constraints.at("s1").min_val, 2);
  EXPECT_EQ(ep->range_constraints.at("s1").max_val, std::nullopt);
  EXPECT_EQ(ep->range_constraints.at("u0").min_val, 0);
  EXPECT_EQ(ep->range_constraints.at("u0").max_val, std::nullopt);

  const Graph& g = ep->graph_module.graph;
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0].get_if<TensorArgument>()->name, "b_cache");
  EXPECT_EQ(g.inputs[1].get_if<TensorArgument>()->name, "x");
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.outputs[0].get_if<TensorArgument>()->name, "slice_scatter");
  EXPECT_EQ(g.outputs[1].get_if<TensorArgument>()->name, "mul");
  EXPECT_FALSE(g.is_single_tensor_return);

  ASSERT_EQ(g.nodes.size(), 3u);
  const Node& sym_size = g.nodes[0];
  EXPECT_EQ(sym_size.target, "torch.ops.aten.sym_size.int");
  EXPECT_EQ(sym_size.name, "sym_size_int_1");
  EXPECT_EQ(sym_size.is_hop_single_tensor_return, std::nullopt);
  ASSERT_EQ(sym_size.outputs.size(), 1u);
  const auto* sym_out = sym_size.outputs[0].get_if<SymIntArgument>();
  ASSERT_NE(sym_out, nullptr);
  EXPECT_EQ(std::get<std::string>(sym_out->value), "sym_size_int_1");
  EXPECT_EQ(sym_size.metadata.at("nn_module_stack"), "L__self__,,__main__.KV");
  EXPECT_EQ(sym_size.metadata.size(), 3u);

  // slice_scatter: `step` is left at its default, so absent.
  const Node& scatter = g.nodes[1];
  EXPECT_EQ(scatter.target, "torch.ops.aten.slice_scatter.default");
  ASSERT_EQ(scatter.inputs.size(), 5u);
  const char* names[] = {"self", "src", "dim", "start", "end"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(scatter.inputs[i].name, names[i]);
    EXPECT_EQ(scatter.inputs[i].kind, ArgumentKind::kPositional);
  }
  EXPECT_EQ(scatter.inputs[0].arg.get_if<TensorArgument>()->name, "b_cache");
  EXPECT_EQ(scatter.inputs[2].arg.get_if<IntArgument>()->value, 0);
  const auto* end = scatter.inputs[4].arg.get_if<SymIntArgument>();
  ASSERT_NE(end, nullptr);
  ASSERT_TRUE(end->is_name());
  EXPECT_EQ(std::get<std::string>(end->value), "sym_size_int_1");
  EXPECT_EQ(scatter.metadata.at("stack_trace"),
            "  File \"kv.py\", line 13, in forward\n    self.cache[:n] = x\n");

  const Node& mul = g.nodes[2];
  EXPECT_EQ(mul.inputs[1].arg.get_if<FloatArgument>()->value, 2.0);
  EXPECT_TRUE(mul.metadata.empty());

  ASSERT_EQ(g.tensor_values.size(), 4u);
  const TensorMeta& x = g.tensor_values.at("x");
  EXPECT_EQ(x.dtype, 7);
  EXPECT_EQ(x.layout, 7);
  EXPECT_FALSE(x.requires_grad);
  EXPECT_EQ(x.device.type, "cpu");
  EXPECT_EQ(x.device.index, std::nullopt);
  ASSERT_EQ(x.sizes.size(), 2u);
  ASSERT_FALSE(x.sizes[0].is_constant());
  EXPECT_EQ(expr_of(x.sizes[0]).expr_str, "s0");
  ASSERT_TRUE(expr_of(x.sizes[0]).hint.has_value());
  EXPECT_EQ(std::get<int64_t>(expr_of(x.sizes[0]).hint->value), 4);
  EXPECT_EQ(std::get<int64_t>(x.sizes[1].value), 4);
  EXPECT_EQ(std::get<int64_t>(x.strides[0].value), 4);
  EXPECT_EQ(std::get<int64_t>(x.strides[1].value), 1);
  EXPECT_EQ(std::get<int64_t>(x.storage_offset.value), 0);
  EXPECT_EQ(g.tensor_values.at("mul").device.type, "cuda");
  EXPECT_EQ(g.tensor_values.at("mul").device.index, 0);

  ASSERT_EQ(g.sym_int_values.size(), 1u);
  const SymExpr& s = expr_of(g.sym_int_values.at("sym_size_int_1"));
  EXPECT_EQ(s.expr_str, "Symbol('s0', positive=True, integer=True)");
  EXPECT_EQ(std::get<int64_t>(s.hint->value), 4);
  EXPECT_TRUE(g.sym_bool_values.empty());

  const GraphSignature& sig = ep->graph_module.signature;
  ASSERT_EQ(sig.input_specs.size(), 2u);
  const auto* buffer = std::get_if<InputToBufferSpec>(&sig.input_specs[0]);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->arg.name, "b_cache");
  EXPECT_EQ(buffer->buffer_name, "cache");
  EXPECT_TRUE(buffer->persistent);
  const auto* user_in = std::get_if<UserInputSpec>(&sig.input_specs[1]);
  ASSERT_NE(user_in, nullptr);
  EXPECT_EQ(user_in->arg.get_if<TensorArgument>()->name, "x");
  ASSERT_EQ(sig.output_specs.size(), 2u);
  const auto* mutation = std::get_if<BufferMutationSpec>(&sig.output_specs[0]);
  ASSERT_NE(mutation, nullptr);
  EXPECT_EQ(mutation->arg.name, "slice_scatter");
  EXPECT_EQ(mutation->buffer_name, "cache");
  const auto* user_out = std::get_if<UserOutputSpec>(&sig.output_specs[1]);
  ASSERT_NE(user_out, nullptr);
  EXPECT_EQ(user_out->arg.get_if<TensorArgument>()->name, "mul");
}

TEST(SchemaProgram, IgnoresUnknownFieldsAndAcceptsOptionalOnes) {
  json doc = fixture_json("model_small.json");
  doc["a_future_field"] = {1, 2, 3};
  doc["graph_module"]["graph"]["nodes"][1]["future"] = "x";
  doc["graph_module"]["graph"]["tensor_values"]["x"]["memory_format"] = 1;
  // Optional fields of the schema (defaults apply) and module_call_graph (not read).
  doc.erase("torch_version");
  doc.erase("verifiers");
  doc["graph_module"].erase("module_call_graph");
  doc["graph_module"]["graph"].erase("sym_float_values");
  doc["graph_module"]["graph"].erase("custom_obj_values");
  doc["graph_module"]["graph"].erase("is_single_tensor_return");
  doc["graph_module"]["graph"]["nodes"][1].erase("name");
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][0].erase("kind");
  auto ep = parse_exported_program(doc.dump());
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  EXPECT_EQ(ep->torch_version, "<=2.4");
  EXPECT_EQ(ep->graph_module.graph.nodes[1].name, std::nullopt);
  EXPECT_EQ(ep->graph_module.graph.nodes[1].inputs[0].kind, std::nullopt);
  EXPECT_EQ(ep->graph_module.graph.nodes[2].inputs[1].kind, ArgumentKind::kPositional);
}

TEST(SchemaArgument, EveryKindReadsIntoItsAlternative) {
  struct Case {
    const char* json;
    size_t index;
  };
  const Case cases[] = {
      {R"({"as_none": true})", 0},
      {R"({"as_tensor": {"name": "t"}})", 1},
      {R"({"as_tensors": [{"name": "a"}, {"name": "b"}]})", 2},
      {R"({"as_int": -3})", 3},
      {R"({"as_ints": [1, -2, 3]})", 4},
      {R"({"as_float": 1.5})", 5},
      {R"({"as_floats": [0.5, "Infinity"]})", 6},
      {R"({"as_string": "mean"})", 7},
      {R"({"as_strings": ["a", "b"]})", 8},
      {R"({"as_sym_int": {"as_name": "s0"}})", 9},
      {R"({"as_sym_ints": [{"as_name": "s0"}, {"as_int": 4}]})", 10},
      {R"({"as_scalar_type": 13})", 11},
      {R"({"as_memory_format": 1})", 12},
      {R"({"as_layout": 7})", 13},
      {R"({"as_device": {"type": "cuda", "index": 1}})", 14},
      {R"({"as_bool": true})", 15},
      {R"({"as_bools": [true, false]})", 16},
      {R"({"as_sym_bool": {"as_name": "b0"}})", 17},
      {R"({"as_sym_bools": [{"as_name": "b0"}, {"as_bool": false}]})", 18},
      {R"({"as_graph": {"name": "true_graph_0", "graph": {"inputs": [], "outputs": [],
          "nodes": [], "tensor_values": {}, "sym_int_values": {}, "sym_bool_values": {}}}})",
       19},
      {R"({"as_optional_tensors": [{"as_tensor": {"name": "i"}}, {"as_none": true}]})", 20},
      {R"({"as_custom_obj": {"name": "obj0", "class_fqn": "__torch__.Foo"}})", 21},
      {R"({"as_operator": "torch.ops.aten.add.Tensor"})", 22},
      {R"({"as_sym_float": {"as_name": "f0"}})", 23},
      {R"({"as_sym_floats": [{"as_name": "f0"}, {"as_float": 0.25}]})", 24},
      {R"({"as_optional_tensor": {"as_none": true}})", 25},
      {R"({"as_complex": {"real": 1.0, "imag": -2}})", 26},
      {R"({"as_nested_tensors": [[{"name": "a"}], []]})", 27},
      {R"({"as_int_lists": [[1, 2], [3]]})", 28},
      {R"({"as_string_to_argument": {"k": {"as_int": 5}}})", 29},
  };
  ASSERT_EQ(std::size(cases), std::variant_size_v<ArgumentValue>);
  for (const Case& c : cases) {
    Argument arg = parse_argument_json(c.json);
    EXPECT_EQ(arg.value.index(), c.index) << c.json;
    // argument_kind_name gives back the JSON key, so the kind table is in variant order.
    EXPECT_EQ(json::parse(c.json).begin().key(), argument_kind_name(arg)) << c.json;
  }
}

TEST(SchemaArgument, ValuesOfEachKind) {
  EXPECT_EQ(parse_argument_json(R"({"as_tensors": [{"name": "a"}, {"name": "b"}]})")
                .get_if<TensorListArgument>()
                ->values[1]
                .name,
            "b");
  EXPECT_EQ(parse_argument_json(R"({"as_int": -3})").get_if<IntArgument>()->value, -3);
  EXPECT_EQ(parse_argument_json(R"({"as_ints": [1, -2, 3]})").get_if<IntListArgument>()->values,
            (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(parse_argument_json(R"({"as_float": 3})").get_if<FloatArgument>()->value, 3.0);
  auto floats = parse_argument_json(R"({"as_floats": [0.5, "Infinity", "-Infinity", "NaN"]})")
                    .get_if<FloatListArgument>()
                    ->values;
  ASSERT_EQ(floats.size(), 4u);
  EXPECT_EQ(floats[0], 0.5);
  EXPECT_EQ(floats[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(floats[2], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(floats[3]));
  EXPECT_EQ(parse_argument_json(R"({"as_string": "mean"})").get_if<StringArgument>()->value,
            "mean");
  EXPECT_EQ(
      parse_argument_json(R"({"as_strings": ["a", "b"]})").get_if<StringListArgument>()->values,
      (std::vector<std::string>{"a", "b"}));

  auto sym_ints = parse_argument_json(R"({"as_sym_ints": [{"as_name": "s0"}, {"as_int": 4}]})")
                      .get_if<SymIntListArgument>()
                      ->values;
  ASSERT_EQ(sym_ints.size(), 2u);
  EXPECT_EQ(std::get<std::string>(sym_ints[0].value), "s0");
  EXPECT_EQ(std::get<int64_t>(sym_ints[1].value), 4);
  EXPECT_FALSE(sym_ints[1].is_name());

  EXPECT_EQ(parse_argument_json(R"({"as_scalar_type": 13})").get_if<ScalarTypeArgument>()->value,
            13);
  EXPECT_EQ(parse_argument_json(R"({"as_memory_format": 2})").get_if<MemoryFormatArgument>()->value,
            2);
  EXPECT_EQ(parse_argument_json(R"({"as_layout": 7})").get_if<LayoutArgument>()->value, 7);
  const Argument device = parse_argument_json(R"({"as_device": {"type": "cuda", "index": 1}})");
  EXPECT_EQ(device.get_if<Device>()->type, "cuda");
  EXPECT_EQ(device.get_if<Device>()->index, 1);
  EXPECT_EQ(parse_argument_json(R"({"as_device": {"type": "cpu"}})").get_if<Device>()->index,
            std::nullopt);
  EXPECT_TRUE(parse_argument_json(R"({"as_bool": true})").get_if<BoolArgument>()->value);
  EXPECT_EQ(
      parse_argument_json(R"({"as_bools": [true, false]})").get_if<BoolListArgument>()->values,
      (std::vector<bool>{true, false}));
  EXPECT_EQ(std::get<std::string>(parse_argument_json(R"({"as_sym_bool": {"as_name": "b0"}})")
                                      .get_if<SymBoolArgument>()
                                      ->value),
            "b0");
  auto sym_bools = parse_argument_json(R"({"as_sym_bools": [{"as_bool": false}]})")
                       .get_if<SymBoolListArgument>()
                       ->values;
  EXPECT_EQ(std::get<bool>(sym_bools.at(0).value), false);
  const Argument graph = parse_argument_json(
      R"({"as_graph": {"name": "true_graph_0", "graph": {"inputs": [{"as_tensor": {"name": "x"}}],
          "outputs": [{"as_tensor": {"name": "x"}}], "nodes": [], "tensor_values": {},
          "sym_int_values": {}, "sym_bool_values": {}}}})");
  ASSERT_NE(graph.get_if<GraphArgument>(), nullptr);
  EXPECT_EQ(graph.get_if<GraphArgument>()->name, "true_graph_0");
  ASSERT_NE(graph.get_if<GraphArgument>()->graph, nullptr);
  EXPECT_EQ(graph.get_if<GraphArgument>()->graph->inputs.size(), 1u);

  auto opt = parse_argument_json(
                 R"({"as_optional_tensors": [{"as_tensor": {"name": "i"}}, {"as_none": true}]})")
                 .get_if<OptionalTensorListArgument>()
                 ->values;
  ASSERT_EQ(opt.size(), 2u);
  EXPECT_EQ(opt[0].tensor->name, "i");
  EXPECT_FALSE(opt[1].tensor.has_value());

  const Argument obj =
      parse_argument_json(R"({"as_custom_obj": {"name": "obj0", "class_fqn": "__torch__.Foo"}})");
  EXPECT_EQ(obj.get_if<CustomObjArgument>()->name, "obj0");
  EXPECT_EQ(obj.get_if<CustomObjArgument>()->class_fqn, "__torch__.Foo");
  EXPECT_EQ(parse_argument_json(R"({"as_operator": "torch.ops.aten.add.Tensor"})")
                .get_if<OperatorArgument>()
                ->name,
            "torch.ops.aten.add.Tensor");
  EXPECT_EQ(std::get<double>(parse_argument_json(R"({"as_sym_float": {"as_float": 0.25}})")
                                 .get_if<SymFloatArgument>()
                                 ->value),
            0.25);
  auto sym_floats = parse_argument_json(R"({"as_sym_floats": [{"as_name": "f0"}]})")
                        .get_if<SymFloatListArgument>()
                        ->values;
  EXPECT_EQ(std::get<std::string>(sym_floats.at(0).value), "f0");
  EXPECT_EQ(parse_argument_json(R"({"as_optional_tensor": {"as_tensor": {"name": "w"}}})")
                .get_if<OptionalTensorArgument>()
                ->tensor->name,
            "w");
  const ComplexValue c =
      *parse_argument_json(R"({"as_complex": {"real": 1.0, "imag": -2}})").get_if<ComplexValue>();
  EXPECT_EQ(c.real, 1.0);
  EXPECT_EQ(c.imag, -2.0);
  auto nested = parse_argument_json(R"({"as_nested_tensors": [[{"name": "a"}], []]})")
                    .get_if<NestedTensorListArgument>()
                    ->values;
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].at(0).name, "a");
  EXPECT_TRUE(nested[1].empty());
  EXPECT_EQ(parse_argument_json(R"({"as_int_lists": [[1, 2], [3]]})")
                .get_if<IntListListArgument>()
                ->values,
            (std::vector<std::vector<int64_t>>{{1, 2}, {3}}));
  auto map =
      parse_argument_json(
          R"({"as_string_to_argument": {"k": {"as_int": 5}, "t": {"as_tensor": {"name": "q"}}}})")
          .get_if<StringToArgumentMap>()
          ->entries;
  ASSERT_EQ(map.size(), 2u);
  EXPECT_EQ(map[0].first, "k");
  EXPECT_EQ(map[0].second.get_if<IntArgument>()->value, 5);
  EXPECT_EQ(map[1].first, "t");
  EXPECT_EQ(map[1].second.get_if<TensorArgument>()->name, "q");
}

TEST(SchemaSignature, EveryInputAndOutputSpecKind) {
  json doc = fixture_json("model_small.json");
  json& sig = doc["graph_module"]["signature"];
  sig["input_specs"] = json::parse(R"([
    {"user_input": {"arg": {"as_sym_int": {"as_name": "s0"}}}},
    {"parameter": {"arg": {"name": "p_w"}, "parameter_name": "linear.weight"}},
    {"buffer": {"arg": {"name": "b_tmp"}, "buffer_name": "tmp", "persistent": false}},
    {"tensor_constant": {"arg": {"name": "c_k"}, "tensor_constant_name": "lifted_tensor_0"}},
    {"custom_obj": {"arg": {"name": "obj", "class_fqn": "__torch__.X"}, "custom_obj_name": "o"}},
    {"token": {"arg": {"name": "token_0"}}},
    {"constant_input": {"name": "scale", "value": {"as_float": "-Infinity"}}},
    {"constant_input": {"name": "mode", "value": {"as_string": "sum"}}},
    {"constant_input": {"name": "none", "value": {"as_none": true}}}
  ])");
  sig["output_specs"] = json::parse(R"([
    {"user_output": {"arg": {"as_int": 3}}},
    {"loss_output": {"arg": {"name": "loss"}}},
    {"buffer_mutation": {"arg": {"name": "add"}, "buffer_name": "tmp"}},
    {"gradient_to_parameter": {"arg": {"name": "g"}, "parameter_name": "linear.weight"}},
    {"gradient_to_user_input": {"arg": {"name": "gx"}, "user_input_name": "x"}},
    {"user_input_mutation": {"arg": {"name": "copy"}, "user_input_name": "x"}},
    {"token": {"arg": {"name": "token_1"}}},
    {"parameter_mutation": {"arg": {"name": "upd"}, "parameter_name": "linear.weight"}}
  ])");
  auto ep = parse_exported_program(doc.dump());
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  const auto& in = ep->graph_module.signature.input_specs;
  ASSERT_EQ(in.size(), 9u);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(in[i].index(), i);
  EXPECT_EQ(std::get<InputToParameterSpec>(in[1]).parameter_name, "linear.weight");
  EXPECT_EQ(std::get<InputToParameterSpec>(in[1]).arg.name, "p_w");
  EXPECT_FALSE(std::get<InputToBufferSpec>(in[2]).persistent);
  EXPECT_EQ(std::get<InputToTensorConstantSpec>(in[3]).tensor_constant_name, "lifted_tensor_0");
  EXPECT_EQ(std::get<InputToCustomObjSpec>(in[4]).arg.class_fqn, "__torch__.X");
  EXPECT_EQ(std::get<InputToCustomObjSpec>(in[4]).custom_obj_name, "o");
  EXPECT_EQ(std::get<InputTokenSpec>(in[5]).arg.name, "token_0");
  const auto& scale = std::get<InputToConstantInputSpec>(in[6]);
  EXPECT_EQ(scale.name, "scale");
  EXPECT_EQ(std::get<double>(scale.value.value), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(std::get<std::string>(std::get<InputToConstantInputSpec>(in[7]).value.value), "sum");
  EXPECT_TRUE(
      std::holds_alternative<NoneArgument>(std::get<InputToConstantInputSpec>(in[8]).value.value));

  const auto& out = ep->graph_module.signature.output_specs;
  ASSERT_EQ(out.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out[i].index(), i);
  EXPECT_EQ(std::get<UserOutputSpec>(out[0]).arg.get_if<IntArgument>()->value, 3);
  EXPECT_EQ(std::get<LossOutputSpec>(out[1]).arg.name, "loss");
  EXPECT_EQ(std::get<GradientToParameterSpec>(out[3]).parameter_name, "linear.weight");
  EXPECT_EQ(std::get<GradientToUserInputSpec>(out[4]).user_input_name, "x");
  EXPECT_EQ(std::get<UserInputMutationSpec>(out[5]).arg.name, "copy");
  EXPECT_EQ(std::get<UserInputMutationSpec>(out[5]).user_input_name, "x");
  EXPECT_EQ(std::get<OutputTokenSpec>(out[6]).arg.name, "token_1");
  EXPECT_EQ(std::get<ParameterMutationSpec>(out[7]).arg.name, "upd");
}

TEST(SchemaRange, UnboundedForms) {
  json doc = fixture_json("model_small.json");
  doc["range_constraints"] = json::parse(R"({
    "a": {"min_val": null, "max_val": null},
    "b": {"min_val": -9223372036854775807, "max_val": 9223372036854775807},
    "c": {"min_val": "-Infinity", "max_val": "Infinity"},
    "d": {"min_val": -1e300, "max_val": 1e300},
    "e": {"min_val": 1.5, "max_val": 7.5},
    "f": {"min_val": 0, "max_val": 4611686018427387903},
    "g": {"min_val": 2, "max_val": 18446744073709551615}
  })");
  auto ep = parse_exported_program(doc.dump());
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  const auto& r = ep->range_constraints;
  for (const char* name : {"a", "b", "c", "d"}) {
    EXPECT_EQ(r.at(name).min_val, std::nullopt) << name;
    EXPECT_EQ(r.at(name).max_val, std::nullopt) << name;
  }
  // A fractional bound is rounded inward, as PyTorch's serializer does.
  EXPECT_EQ(r.at("e").min_val, 2);
  EXPECT_EQ(r.at("e").max_val, 7);
  EXPECT_EQ(r.at("f").max_val, 4611686018427387903);  // 2^62 - 1 is still a bound
  EXPECT_EQ(r.at("g").min_val, 2);
  EXPECT_EQ(r.at("g").max_val, std::nullopt);

  doc["range_constraints"] = {{"s0", {{"min_val", true}, {"max_val", 3}}}};
  EXPECT_EQ(program_error(doc),
            "range_constraints['s0'].min_val: expected an integer bound or null, got boolean true");
  doc["range_constraints"] = {{"s0", {{"min_val", 1}}}};
  EXPECT_EQ(program_error(doc), "range_constraints['s0']: missing required field 'max_val'");
}

TEST(SchemaErrors, BadJson) {
  EXPECT_EQ(error_of(parse_exported_program("{\"graph_module\": ")),
            "the program JSON is not valid JSON (17 bytes): parse error at line 1, column 18: "
            "syntax error while parsing value - unexpected end of input; expected '[', '{', or "
            "a literal");
  EXPECT_EQ(
      error_of(parse_exported_program(""))
          .rfind("the program JSON is not valid JSON (0 bytes): parse error at line 1, column 1",
                 0),
      0u);
  EXPECT_EQ(error_of(parse_exported_program("[1, 2]")),
            "expected an object (ExportedProgram), got array");
  EXPECT_EQ(
      error_of(parse_payload_config("{\"config\": {}} trailing"))
          .rfind("the payload config JSON is not valid JSON (23 bytes): parse error at line 1, "
                 "column 18",
                 0),
      0u);
}

// Issue 34: a value of the wrong type is refused where it starts, before the rest of it is
// read, so a huge array where a string belongs costs nothing.
TEST(SchemaShapes, ArrayInNodeMetadataIsRefusedWhereItStarts) {
  json doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["metadata"]["padding"] = json::array();
  std::string text = doc.dump();
  // 10^7 zeros spliced into the text (a json object of them would take seconds to build here).
  const std::string empty = "\"padding\":[]";
  size_t at = text.find(empty);
  ASSERT_NE(at, std::string::npos);
  std::string zeros;
  zeros.reserve(20'000'000);
  for (int i = 0; i < 10'000'000; ++i) zeros += i == 0 ? "0" : ",0";
  text.replace(at + empty.size() - 1, 0, zeros);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of(parse_exported_program(text)),
            "graph_module.graph.nodes[1].metadata['padding']: expected a string, got array");
  // Refused at '[': no time spent on the 20 MB after it.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

TEST(SchemaShapes, ObjectsAndArraysWhereOthersBelongAreRefusedWithTheirPath) {
  json doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["sizes"] = {{"as_int", 1}};
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x'].sizes: expected a list, got object");
  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] = json::array({1});
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.nodes[1].inputs[0].arg: expected a one-key object (Argument), "
            "got array");
  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["target"] = json::object();
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.nodes[1].target: expected a string, got object");
  doc = fixture_json("model_small.json");
  doc["schema_version"]["major"] = json::array();
  EXPECT_EQ(program_error(doc), "schema_version.major: expected an integer, got array");
}

TEST(SchemaShapes, OverlongStringsAreRefused) {
  json doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][0]["metadata"]["stack_trace"] =
      std::string((4 << 20) + 1, 'x');
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.nodes[0].metadata['stack_trace']: a string of 4194305 bytes is "
            "longer than the 4194304-byte limit for one string");
  // Keys too, and wherever they are (a dropped field included).
  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"][std::string(5 << 20, 'k')] = json::object();
  EXPECT_NE(program_error(doc).find("a string of 5242880 bytes is longer than the 4194304-byte "
                                    "limit for one string"),
            std::string::npos);
  // At the limit, it loads.
  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][0]["metadata"]["stack_trace"] = std::string(4 << 20, 'x');
  EXPECT_TRUE(parse_exported_program(doc.dump()).ok());
}

// Issue 34 item 11: an integer too large for 64 bits is that, not "not valid JSON".
TEST(SchemaShapes, IntegersTooLargeForSixtyFourBitsSaySo) {
  json doc = fixture_json("model_small.json");
  std::string text = doc.dump();
  const std::string dtype = "\"dtype\":";
  size_t at = text.find(dtype);
  ASSERT_NE(at, std::string::npos);
  size_t end = text.find_first_of(",}", at);
  std::string big(400, '9');
  text.replace(at + dtype.size(), end - at - dtype.size(), big);
  std::string message = error_of(parse_exported_program(text));
  EXPECT_NE(message.find("integer 9999999999999999999999999999999999999999... (400 characters) "
                         "does not fit in 64 bits"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(".dtype: "), std::string::npos) << message;
  // 2^64 (just past uint64) where an integer belongs.
  text = doc.dump();
  at = text.find(dtype);
  end = text.find_first_of(",}", at);
  text.replace(at + dtype.size(), end - at - dtype.size(), "18446744073709551616");
  message = error_of(parse_exported_program(text));
  EXPECT_NE(message.find("integer 18446744073709551616 does not fit in 64 bits"), std::string::npos)
      << message;
  // A range bound past 2^64 is still "unbounded", as before; past a double's range it is
  // named as such.
  doc["range_constraints"] = {{"s0", {{"min_val", 2}, {"max_val", 0}}}};
  text = doc.dump();
  at = text.find("\"max_val\":0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 10, 1, std::string(30, '9'));
  auto ep = parse_exported_program(text);
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  EXPECT_EQ(ep->range_constraints.at("s0").max_val, std::nullopt);
  text.replace(at + 10, 30, "1e999");
  EXPECT_EQ(error_of(parse_exported_program(text)),
            "range_constraints['s0'].max_val: number 1e999 is beyond the range of a 64-bit float");
}

TEST(SchemaShapes, UnknownKindsStillNamedAndUnreadFieldsDropped) {
  // An unknown union kind keeps its key (its value is not read), so the message names it.
  json doc = program_with_argument({{"as_future", json::array({1, 2, 3})}});
  EXPECT_EQ(program_error(doc), "node 'n' input 'a': unknown argument kind 'as_future'");
  doc = fixture_json("model_small.json");
  doc["graph_module"]["signature"]["input_specs"][0] = {{"future_spec", {{"x", {1, 2}}}}};
  EXPECT_EQ(program_error(doc),
            "graph_module.signature.input_specs[0]: unknown input spec kind 'future_spec'");
  // Fields no reader reads are skipped whatever they hold.
  doc = fixture_json("model_small.json");
  doc["graph_module"]["module_call_graph"] = {{"deep", {{{"x", json::array({{1}, {2}})}}}}};
  doc["graph_module"]["graph"]["nodes"][1]["future"] = {{"a", json::array()}};
  EXPECT_TRUE(parse_exported_program(doc.dump()).ok());
}

TEST(SchemaErrors, WrongSchemaMajor) {
  json doc = fixture_json("model_small.json");
  doc["schema_version"] = {{"major", 9}, {"minor", 0}};
  doc["torch_version"] = "2.13.0";
  // The version gate comes before everything else: a broken graph does not hide it.
  doc["graph_module"]["graph"].erase("nodes");
  EXPECT_EQ(program_error(doc),
            "schema version 9.0 (written by torch 2.13.0) is not supported: splice reads schema "
            "8.x, written by torch 2.5 through 2.11");
  doc["schema_version"] = {{"major", 7}, {"minor", 3}};
  doc.erase("torch_version");
  EXPECT_EQ(program_error(doc),
            "schema version 7.3 (written by torch <=2.4) is not supported: splice reads schema "
            "8.x, written by torch 2.5 through 2.11");
  doc.erase("schema_version");
  EXPECT_EQ(program_error(doc), "missing required field 'schema_version'");
}

TEST(SchemaErrors, UnknownKindsNameTheKindAndPlace) {
  json doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][1]["arg"] = {{"as_foo", 1}};
  EXPECT_EQ(program_error(doc), "node 'slice_scatter' input 'src': unknown argument kind 'as_foo'");

  // Without a node name, the node is numbered.
  doc["graph_module"]["graph"]["nodes"][1].erase("name");
  EXPECT_EQ(program_error(doc), "node #1 input 'src': unknown argument kind 'as_foo'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][0]["outputs"][0] = {{"as_sym_int", {{"as_expr", "s0"}}}};
  EXPECT_EQ(program_error(doc),
            "node 'sym_size_int_1' output #0: unknown SymIntArgument kind 'as_expr'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][2]["arg"] = {{"as_int", 0}, {"as_none", true}};
  EXPECT_EQ(program_error(doc),
            "node 'slice_scatter' input 'dim': expected a one-key object (Argument), got an "
            "object with 2 keys");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["signature"]["input_specs"][0] = {{"lifted", json::object()}};
  EXPECT_EQ(program_error(doc),
            "graph_module.signature.input_specs[0]: unknown input spec kind 'lifted'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["signature"]["output_specs"][1] = {{"user_outputs", json::object()}};
  EXPECT_EQ(program_error(doc),
            "graph_module.signature.output_specs[1]: unknown output spec kind 'user_outputs'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["sizes"][0] = {{"as_symbol", "s0"}};
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x'].sizes[0]: unknown SymInt kind 'as_symbol'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][0]["kind"] = 3;
  EXPECT_EQ(program_error(doc),
            "node 'slice_scatter' input 'self'.kind: unknown argument kind value 3 (expected 0, 1 "
            "or 2)");
}

TEST(SchemaErrors, MissingFieldsNameFieldAndPath) {
  json doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"].erase("dtype");
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x']: missing required field 'dtype'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"].erase("tensor_values");
  EXPECT_EQ(program_error(doc), "graph_module.graph: missing required field 'tensor_values'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][2].erase("target");
  EXPECT_EQ(program_error(doc), "node 'mul': missing required field 'target'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][2]["inputs"][1].erase("arg");
  EXPECT_EQ(program_error(doc), "node 'mul' input 'other': missing required field 'arg'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][2]["inputs"][1].erase("name");
  EXPECT_EQ(program_error(doc), "node 'mul'.inputs[1]: missing required field 'name'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["signature"]["input_specs"][0]["buffer"].erase("persistent");
  EXPECT_EQ(program_error(doc),
            "graph_module.signature.input_specs[0].buffer: missing required field 'persistent'");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["sym_int_values"]["sym_size_int_1"]["as_expr"].erase("expr_str");
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.sym_int_values['sym_size_int_1'].as_expr: missing required field "
            "'expr_str'");

  doc = fixture_json("model_small.json");
  doc.erase("graph_module");
  EXPECT_EQ(program_error(doc), "missing required field 'graph_module'");
}

TEST(SchemaErrors, WrongTypes) {
  json doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["dtype"] = "float32";
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x'].dtype: expected an integer, got string "
            "\"float32\"");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["sizes"][1]["as_int"] = 4.5;
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x'].sizes[1].as_int: expected an integer, got "
            "number 4.5");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][1]["inputs"][3]["arg"]["as_int"] =
      json::parse("18446744073709551615");
  EXPECT_EQ(program_error(doc),
            "node 'slice_scatter' input 'start': integer 18446744073709551615 does not fit in 64 "
            "bits");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][2]["inputs"][1]["arg"]["as_float"] = "fast";
  EXPECT_EQ(program_error(doc), "node 'mul' input 'other': expected a number, got string \"fast\"");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"] = {{"target", "x"}};
  EXPECT_EQ(program_error(doc), "graph_module.graph.nodes: expected a list, got object");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["nodes"][0]["metadata"]["line"] = 12;
  EXPECT_EQ(program_error(doc),
            "node 'sym_size_int_1'.metadata['line']: expected a string, got number 12");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["requires_grad"] = 0;
  EXPECT_EQ(
      program_error(doc),
      "graph_module.graph.tensor_values['x'].requires_grad: expected a boolean, got number 0");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["layout"] = 4294967296LL;
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x'].layout: enum value 4294967296 is out of range");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["inputs"][1] = "x";
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.inputs[1]: expected a one-key object (Argument), got string "
            "\"x\"");

  doc = fixture_json("model_small.json");
  doc["graph_module"]["graph"]["tensor_values"]["x"]["device"]["index"] = "0";
  EXPECT_EQ(program_error(doc),
            "graph_module.graph.tensor_values['x'].device.index: expected an integer, got string "
            "\"0\"");
}

TEST(SchemaErrors, DeeplyNestedArgumentsAreRefused) {
  json arg = {{"as_int", 1}};
  for (int i = 0; i < 40; ++i) arg = {{"as_string_to_argument", {{"k", arg}}}};
  json doc = program_with_argument(arg);
  std::string message = program_error(doc);
  EXPECT_NE(message.find("arguments nested deeper than 32"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("node 'n' input 'a'['k']['k']", 0), 0u) << message;
}

TEST(SchemaErrors, DeeplyNestedSubgraphsAreRefused) {
  // Each subgraph's node arguments are one level deeper than the op that holds it.
  json graph = {{"inputs", json::array()},          {"outputs", json::array()},
                {"nodes", json::array()},           {"tensor_values", json::object()},
                {"sym_int_values", json::object()}, {"sym_bool_values", json::object()}};
  for (int i = 0; i < 40; ++i) {
    json arg = {{"as_graph", {{"name", "g"}, {"graph", graph}}}};
    graph["nodes"] = json::array({{{"target", "torch.ops.higher_order.wrap_with_set_grad_enabled"},
                                   {"inputs", json::array({{{"name", ""}, {"arg", arg}}})},
                                   {"outputs", json::array()},
                                   {"metadata", json::object()}}});
  }
  json doc = program_with_argument({{"as_graph", {{"name", "g"}, {"graph", graph}}}});
  std::string message = program_error(doc);
  EXPECT_NE(message.find("arguments nested deeper than 32"), std::string::npos) << message;
}

// Replaces every value of the document, one at a time, by values of every JSON type: each
// parse must either succeed or fail with kBadArchive, never crash or throw.
void for_each_value(json& j, const std::function<void(json&)>& visit) {
  visit(j);
  if (j.is_structured()) {
    for (auto& child : j) for_each_value(child, visit);
  }
}

TEST(SchemaErrors, EveryValueReplacedByEveryTypeNeverCrashes) {
  const json replacements[] = {
      nullptr,    json(-1),      json(1.5),      json("Infinity"),
      json(true), json::array(), json::object(), json::parse(R"({"as_int": 1})")};
  json doc = fixture_json("model_small.json");
  size_t parses = 0;
  size_t failures = 0;
  for_each_value(doc, [&](json& value) {
    json saved = value;
    for (const json& r : replacements) {
      value = r;
      auto ep = parse_exported_program(doc.dump());
      ++parses;
      if (!ep.ok()) {
        ++failures;
        EXPECT_EQ(ep.error().kind(), ErrorKind::kBadArchive);
        EXPECT_FALSE(ep.error().message().empty());
      }
    }
    value = std::move(saved);
  });
  EXPECT_GT(parses, 1000u);
  EXPECT_GT(failures, parses / 2);
  // The loop restored the document.
  EXPECT_TRUE(parse_exported_program(doc.dump()).ok());
}

TEST(SchemaPayload, ParsesWeightsConfig) {
  auto config = parse_payload_config(read_fixture("model_weights_config.json"));
  ASSERT_TRUE(config.ok()) << config.error().message();
  ASSERT_EQ(config->config.size(), 3u);

  const PayloadMeta& w = config->config.at("linear.weight");
  EXPECT_EQ(w.path_name, "weight_0");
  EXPECT_TRUE(w.is_param);
  EXPECT_FALSE(w.use_pickle);
  ASSERT_TRUE(w.tensor_meta.has_value());
  EXPECT_EQ(w.tensor_meta->dtype, 13);
  EXPECT_TRUE(w.tensor_meta->requires_grad);
  ASSERT_EQ(w.tensor_meta->sizes.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(w.tensor_meta->sizes[0].value), 16);
  EXPECT_EQ(std::get<int64_t>(w.tensor_meta->sizes[1].value), 8);
  EXPECT_EQ(std::get<int64_t>(w.tensor_meta->strides[0].value), 8);

  const PayloadMeta& cache = config->config.at("cache");
  EXPECT_EQ(cache.path_name, "weight_1");
  EXPECT_FALSE(cache.is_param);
  EXPECT_EQ(cache.tensor_meta->dtype, 7);

  const PayloadMeta& pickled = config->config.at("quantized.weight");
  EXPECT_EQ(pickled.path_name, "weight_2");
  EXPECT_TRUE(pickled.use_pickle);
  EXPECT_FALSE(pickled.tensor_meta.has_value());
}

TEST(SchemaPayload, Errors) {
  json doc = fixture_json("model_weights_config.json");
  doc["config"]["cache"].erase("path_name");
  EXPECT_EQ(error_of(parse_payload_config(doc.dump())),
            "config['cache']: missing required field 'path_name'");

  doc = fixture_json("model_weights_config.json");
  doc["config"]["cache"]["use_pickle"] = "no";
  EXPECT_EQ(error_of(parse_payload_config(doc.dump())),
            "config['cache'].use_pickle: expected a boolean, got string \"no\"");

  doc = fixture_json("model_weights_config.json");
  doc["config"]["linear.weight"]["tensor_meta"]["sizes"] = 16;
  EXPECT_EQ(error_of(parse_payload_config(doc.dump())),
            "config['linear.weight'].tensor_meta.sizes: expected a list, got number 16");

  EXPECT_EQ(error_of(parse_payload_config("{}")), "missing required field 'config'");
  EXPECT_EQ(error_of(parse_payload_config(R"({"config": []})")),
            "config: expected an object, got array");

  // An empty config (a program without weights) is valid.
  auto empty = parse_payload_config(R"({"config": {}})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->config.empty());
}

}  // namespace
}  // namespace splice::pt2
