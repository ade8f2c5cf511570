// Text IR round trips (print → parse → print is a fixed point and parse rebuilds the same
// structure) and parser error messages.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ir/ops.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace splice::ir {
namespace {

Program parse_ok(std::string_view text) {
  auto p = parse_program(text);
  EXPECT_TRUE(p.ok()) << p.error().message();
  if (!p.ok()) return Program{};
  return std::move(*p);
}

// Parses canonical text and expects printing to give it back unchanged, twice.
Program expect_round_trip(std::string_view text) {
  Program p = parse_ok(text);
  std::string printed = print_program(p);
  EXPECT_EQ(printed, text);
  Program again = parse_ok(printed);
  EXPECT_EQ(print_program(again), printed);
  return p;
}

const Node& node_at(const Program& p, size_t i) { return *p.graph.nodes().at(i); }

constexpr std::string_view kSliceScatterProgram = R"(symbols {
  s0: [2, 64] hint 4
  u0: [0, inf]
}
signature {
  input %x: user_input
  input %p_w: parameter "layers.0.w"
  input %b_kc: buffer "kc" persistent
  input %b_tmp: buffer "tmp" non_persistent
  input %c_lifted_tensor_0: tensor_constant "lifted_tensor_0"
  input constant "flag" = True
  output 0: buffer_mutation "kc"
  output 1: user_output
  output 2: user_output
}
graph(%x: f32[s0, 8], %p_w: f32[8, 8], %b_kc: f32[4, 8], %b_tmp: f32[2], %c_lifted_tensor_0: i64[]) {
  %slice_1: f32[s0, 4] = aten.slice.Tensor(%x, 1, 0, 4, 1)
  %sym_size_int: SymInt(s0) = aten.sym_size.int(%x, 0)
  %slice_2: f32[2, 8] = aten.slice.Tensor(%x, 0, 0, 2, 1)
  %slice_scatter: f32[4, 8] = aten.slice_scatter.default(%b_kc, %slice_2, 0, 2, 4, 1)
  %slice_scatter_1: f32[4, 8] = aten.slice_scatter.default(%slice_scatter, %slice_2, 0, %sym_size_int, None, 1)
  return (%slice_scatter_1, %slice_1, %sym_size_int)
}
)";

TEST(TextIr, SliceScatterChainRoundTrips) {
  Program p = expect_round_trip(kSliceScatterProgram);
  ASSERT_EQ(p.ranges.size(), 2u);
  EXPECT_EQ(p.ranges.at("s0").min, 2);
  EXPECT_EQ(p.ranges.at("s0").max, 64);
  EXPECT_FALSE(p.ranges.at("u0").max.has_value());
  EXPECT_EQ(p.hints.at("s0"), 4);
  EXPECT_EQ(p.hints.count("u0"), 0u);

  // Signature and graph inputs: the constant input is a null graph input.
  ASSERT_EQ(p.signature.inputs.size(), 6u);
  ASSERT_EQ(p.graph.inputs().size(), 6u);
  EXPECT_EQ(p.graph.inputs()[5], nullptr);
  EXPECT_EQ(p.signature.inputs[5].kind, InputKind::kConstantInput);
  EXPECT_EQ(p.signature.inputs[5].target, "flag");
  EXPECT_TRUE(p.signature.inputs[5].constant.is<bool>());
  EXPECT_EQ(p.signature.inputs[1].kind, InputKind::kParameter);
  EXPECT_EQ(p.signature.inputs[1].target, "layers.0.w");
  EXPECT_EQ(p.signature.inputs[1].value, p.graph.inputs()[1]);
  EXPECT_TRUE(p.signature.inputs[2].persistent);
  EXPECT_FALSE(p.signature.inputs[3].persistent);
  EXPECT_EQ(p.signature.outputs[0].kind, OutputKind::kBufferMutation);
  EXPECT_EQ(p.signature.outputs[0].target, "kc");

  const Value* x = p.graph.inputs()[0];
  EXPECT_EQ(x->type().dtype, DType::kFloat32);
  ASSERT_EQ(x->type().rank(), 2);
  EXPECT_EQ(x->type().sizes[0], SymExpr::symbol("s0"));
  EXPECT_EQ(x->type().sizes[1], SymExpr(8));
  EXPECT_EQ(p.graph.inputs()[4]->type().rank(), 0);

  ASSERT_EQ(p.graph.nodes().size(), 5u);
  const Node& size = node_at(p, 1);
  EXPECT_EQ(size.name(), "sym_size_int");
  EXPECT_EQ(size.output()->kind(), ValueKind::kSymInt);
  EXPECT_EQ(*size.output()->expr(), SymExpr::symbol("s0"));
  EXPECT_EQ(size.output()->producer(), &size);
  const Node& scatter = node_at(p, 4);
  EXPECT_EQ(scatter.target(), "aten.slice_scatter.default");
  EXPECT_EQ(scatter.arg("start").as<Value*>(), size.output());
  EXPECT_TRUE(scatter.arg("end").is_none());
  EXPECT_EQ(scatter.arg("step").as<int64_t>(), 1);
  EXPECT_EQ(scatter.arg("self").as<Value*>(), node_at(p, 3).output());
  ASSERT_EQ(p.graph.outputs().size(), 3u);
  EXPECT_EQ(p.graph.outputs()[2].as<Value*>(), size.output());
  EXPECT_TRUE(verify(p).ok()) << verify(p).error().message();
}

constexpr std::string_view kMultiOutputProgram = R"(graph(%x: f32[4, 8], %q: f32[1, 4, 8, 16]) {
  %a: f32[2, 8], %b: f32[2, 8] = aten.split_with_sizes.default(%x, [2, 2], 0) @split_with_sizes
  _, %lse: f32[1, 4, 8] = aten._scaled_dot_product_flash_attention_for_cpu.default(%q, %q, %q, 0.0, True, attn_mask=None, scale=0.25)
  %values: f32[4], %indices: i64[4] = aten.max.dim(%x, 1, False)
  %cp: f16[2, 8] = aten._to_copy.default(%a, dtype=f16, layout=None, device="cpu", pin_memory=None, non_blocking=False, memory_format=None)
  return (%b, %lse, %cp, %indices)
}
)";

// A size whose canonical form starts with a negated parenthesis (chunk's last piece of a
// symbolic size) reads back: it is no token of the text IR, so the parser must not lex it.
TEST(TextIr, SizesStartingWithANegatedParenthesisRoundTrip) {
  constexpr std::string_view kText = R"(symbols {
  s0: [2, 64]
}
graph(%y: f32[s0, 4]) {
  %size: SymInt(-((s0 + 1) // 2) + s0) = aten.sym_size.int(%y, 0)
  %a: f32[(s0 + 1) // 2, 4], %b: f32[-((s0 + 1) // 2) + s0, 4] = aten.split.Tensor(%y, 2, 0)
  return (%b, %size)
}
)";
  auto p = parse_program(kText);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(print_program(*p), kText);
}

TEST(TextIr, MultiOutputNodesRoundTrip) {
  Program p = expect_round_trip(kMultiOutputProgram);
  ASSERT_EQ(p.graph.nodes().size(), 4u);
  const Node& split = node_at(p, 0);
  EXPECT_EQ(split.name(), "split_with_sizes");  // from the trailing @name
  ASSERT_EQ(split.outputs().size(), 2u);
  EXPECT_EQ(split.output(1)->name(), "b");
  EXPECT_EQ(split.output(1)->producer(), &split);
  const auto& sizes = split.arg("split_sizes").as<std::vector<SymIntArg>>();
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(sizes[1]), 2);

  const Node& flash = node_at(p, 1);
  EXPECT_EQ(flash.name(), "lse");  // default: the first used output's name
  EXPECT_EQ(flash.output(0), nullptr);
  EXPECT_EQ(flash.output(1)->type().rank(), 3);
  EXPECT_TRUE(flash.arg("dropout_p").is<double>());
  EXPECT_TRUE(flash.arg("is_causal").as<bool>());
  EXPECT_DOUBLE_EQ(flash.arg("scale").as<double>(), 0.25);

  const Node& cp = node_at(p, 3);
  EXPECT_EQ(cp.arg("dtype").as<DType>(), DType::kFloat16);
  EXPECT_EQ(cp.arg("device").as<std::string>(), "cpu");
  EXPECT_TRUE(cp.arg("layout").is_none());
  EXPECT_EQ(cp.output()->type().dtype, DType::kFloat16);
  EXPECT_TRUE(verify_graph(p.graph).ok()) << verify_graph(p.graph).error().message();
}

TEST(TextIr, SymbolicChainWithAssert) {
  constexpr std::string_view text = R"(graph(%x: f32[s0, 8], %n: SymInt(s1)) {
  %sym_size_int: SymInt(s0) = aten.sym_size.int(%x, 0)
  %add: SymInt = _operator.add(%sym_size_int, %n)
  %ge: SymBool(s0 >= 2) = _operator.ge(%sym_size_int, 2)
  %t: SymFloat = _operator.truediv(%add, 2)
  aten._assert_scalar.default(%ge, "Runtime assertion failed for expression u0 >= 0")
  return (%add, %t)
}
)";
  Program p = expect_round_trip(text);
  const Node& add = node_at(p, 1);
  EXPECT_EQ(add.target(), "_operator.add");
  EXPECT_EQ(add.output()->kind(), ValueKind::kSymInt);
  EXPECT_FALSE(add.output()->expr().has_value());
  EXPECT_EQ(add.arg(1).as<Value*>(), p.graph.inputs()[1]);
  EXPECT_EQ(p.graph.inputs()[1]->kind(), ValueKind::kSymInt);
  EXPECT_EQ(*p.graph.inputs()[1]->expr(), SymExpr::symbol("s1"));
  const Node& ge = node_at(p, 2);
  EXPECT_EQ(ge.output()->kind(), ValueKind::kSymBool);
  EXPECT_TRUE(ge.output()->expr()->is_boolean());
  EXPECT_EQ(ge.arg(1).as<int64_t>(), 2);  // a Scalar keeps its int
  const Node& assert_node = node_at(p, 4);
  EXPECT_EQ(assert_node.name(), "aten._assert_scalar.default");
  EXPECT_TRUE(assert_node.outputs().empty());
  EXPECT_EQ(assert_node.arg("assert_msg").as<std::string>(),
            "Runtime assertion failed for expression u0 >= 0");
  EXPECT_EQ(node_at(p, 3).output()->kind(), ValueKind::kSymFloat);
  EXPECT_TRUE(verify_graph(p.graph).ok()) << verify_graph(p.graph).error().message();
}

TEST(TextIr, LiteralsOfEveryKind) {
  constexpr std::string_view text = R"(graph(%x: f32[2, 3], %i: i64[2], %s: SymInt) {
  %full: f32[2] = aten.full.default([2], -0.0, dtype=f32, layout=None, device=None, pin_memory=None)
  %full_1: f32[2] = aten.full.default([%s], inf, dtype=None, layout=None, device=None, pin_memory=None)
  %full_2: f64[2] = aten.full.default([2], -inf, dtype=f64, layout=None, device=None, pin_memory=None)
  %full_3: f32[2] = aten.full.default([2], nan, dtype=None, layout=None, device=None, pin_memory=None)
  %full_4: i64[2] = aten.full.default([2], -9223372036854775808, dtype=i64, layout=None, device=None, pin_memory=None)
  %full_5: bool[2] = aten.full.default([2], True, dtype=bool, layout=None, device=None, pin_memory=None)
  %mul: f32[2, 3] = aten.mul.Scalar(%x, 1e+300)
  %mul_1: f32[2, 3] = aten.mul.Scalar(%x, 5e-324)
  %mul_2: f32[2, 3] = aten.mul.Scalar(%x, 0.1)
  %mul_3: f32[2, 3] = aten.mul.Scalar(%x, 123456789.0)
  %slice: f32[2, 3] = aten.slice.Tensor(%x, 0, -9223372036854775808, 9223372036854775807, 1)
  %index_put: f32[2, 3] = aten.index_put.default(%x, [None, %i], %full, False)
  %cat: f32[4, 3] = aten.cat.default([%x, %x], 0)
  %gelu: f32[2, 3] = aten.gelu.default(%x, approximate="tanh")
  aten._assert_scalar.default(True, "quote \" backslash \\ newline \n tab \t bell \u0007 é")
  return ([1.5, 2.0], [True, False], [1, %s], [], -3, None, 2.5, "s", bf16, %"odd name")
}
)";
  // %"odd name" is not defined: fix the text to define it first.
  std::string fixed(text);
  fixed.replace(fixed.find("%s: SymInt)"), 11, "%s: SymInt, %\"odd name\": f32[])");
  Program p = expect_round_trip(fixed);
  auto fill = [&](size_t i) { return node_at(p, i).arg("fill_value"); };
  EXPECT_TRUE(fill(0).is<double>());
  EXPECT_EQ(fill(0).as<double>(), 0.0);
  EXPECT_TRUE(std::signbit(fill(0).as<double>()));
  EXPECT_EQ(fill(1).as<double>(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(fill(2).as<double>(), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(fill(3).as<double>()));
  EXPECT_EQ(fill(4).as<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(fill(5).as<bool>());
  EXPECT_EQ(node_at(p, 6).arg("other").as<double>(), 1e300);
  EXPECT_EQ(node_at(p, 7).arg("other").as<double>(), 5e-324);
  EXPECT_EQ(node_at(p, 8).arg("other").as<double>(), 0.1);
  EXPECT_EQ(node_at(p, 10).arg("end").as<int64_t>(), std::numeric_limits<int64_t>::max());
  const auto& indices = node_at(p, 11).arg("indices").as<std::vector<Value*>>();
  ASSERT_EQ(indices.size(), 2u);
  EXPECT_EQ(indices[0], nullptr);
  EXPECT_EQ(indices[1], p.graph.inputs()[1]);
  EXPECT_EQ(node_at(p, 12).arg("tensors").as<std::vector<Value*>>().size(), 2u);
  EXPECT_EQ(node_at(p, 14).arg("assert_msg").as<std::string>(),
            "quote \" backslash \\ newline \n tab \t bell \x07 \xc3\xa9");
  const auto& outs = p.graph.outputs();
  ASSERT_EQ(outs.size(), 10u);
  EXPECT_EQ(outs[0].as<std::vector<double>>(), (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(outs[1].as<std::vector<bool>>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(std::get<Value*>(outs[2].as<std::vector<SymIntArg>>()[1]), p.graph.inputs()[2]);
  EXPECT_TRUE(outs[3].as<std::vector<SymIntArg>>().empty());
  EXPECT_EQ(outs[4].as<int64_t>(), -3);
  EXPECT_TRUE(outs[5].is_none());
  EXPECT_EQ(outs[6].as<double>(), 2.5);
  EXPECT_EQ(outs[7].as<std::string>(), "s");
  EXPECT_EQ(outs[8].as<DType>(), DType::kBFloat16);
  EXPECT_EQ(outs[9].as<Value*>()->name(), "odd name");
  EXPECT_TRUE(verify_graph(p.graph).ok()) << verify_graph(p.graph).error().message();
}

TEST(TextIr, LiteralsConvertToTheSchemaType) {
  // Comments, arguments by name, a default left out, an int given to a float argument.
  Program p = parse_ok(R"(# a comment line
graph(%x: f32[2, 8]) {  # trailing comment
  %ln_0: f32[2, 8], _, _ = aten.native_layer_norm.default(%x, [8], None, None, 1)
  %add: f32[2, 8] = aten.add.Scalar(%x, 2)
  %add_1: f32[2, 8] = aten.add.Scalar(alpha=2.0, other=3, self=%x)
  %s: f32[2, 8] = aten.slice.Tensor(%x)
  return (%ln_0)
}
)");
  const Node& ln = node_at(p, 0);
  EXPECT_TRUE(ln.arg("eps").is<double>());
  EXPECT_EQ(ln.arg("eps").as<double>(), 1.0);
  EXPECT_EQ(node_at(p, 1).arg("other").as<int64_t>(), 2);
  EXPECT_TRUE(node_at(p, 1).arg("alpha").is<int64_t>());  // the schema default
  EXPECT_EQ(node_at(p, 2).arg("alpha").as<double>(), 2.0);
  EXPECT_EQ(node_at(p, 2).arg("other").as<int64_t>(), 3);
  const Node& s = node_at(p, 3);
  EXPECT_EQ(s.arg("dim").as<int64_t>(), 0);
  EXPECT_TRUE(s.arg("start").is_none());
  EXPECT_EQ(s.arg("step").as<int64_t>(), 1);
  EXPECT_EQ(print_program(p), R"(graph(%x: f32[2, 8]) {
  %ln_0: f32[2, 8], _, _ = aten.native_layer_norm.default(%x, [8], None, None, 1.0)
  %add: f32[2, 8] = aten.add.Scalar(%x, 2, 1)
  %add_1: f32[2, 8] = aten.add.Scalar(%x, 3, 2.0)
  %s: f32[2, 8] = aten.slice.Tensor(%x, 0, None, None, 1)
  return (%ln_0)
}
)");
}

TEST(TextIr, SymbolicSizesRoundTrip) {
  Program p = parse_ok(R"(graph(%x: f32[s0 + 2, Max(1, u0), (s0*4)//3, 8]) {
  return (%x)
}
)");
  const auto& sizes = p.graph.inputs()[0]->type().sizes;
  ASSERT_EQ(sizes.size(), 4u);
  EXPECT_EQ(sizes[0], SymExpr::symbol("s0") + SymExpr(2));
  EXPECT_EQ(sizes[1], sym_max(SymExpr(1), SymExpr::symbol("u0")));
  EXPECT_EQ(sizes[2], floor_div(SymExpr::symbol("s0") * SymExpr(4), SymExpr(3)));
  std::string printed = print_program(p);
  EXPECT_EQ(print_program(parse_ok(printed)), printed);
}

TEST(TextIr, BuiltProgramRoundTrips) {
  // Built through the Graph API rather than text, then printed and parsed back.
  Program p;
  Value* x = p.graph.add_value("x", ValueKind::kTensor);
  x->set_type(TensorType{DType::kBFloat16, {SymExpr::symbol("s0"), SymExpr(4)}});
  p.graph.inputs().push_back(x);
  Node* n = p.graph.add_node(find_op("aten.neg.default"), "neg_node");
  n->args().push_back(Arg{x});
  Value* y = p.graph.add_value("y", ValueKind::kTensor);
  y->set_type(x->type());
  y->set_producer(n);
  n->outputs().push_back(y);
  p.graph.outputs().push_back(Arg{y});
  p.ranges["s0"] = SymRange{1, std::nullopt};
  std::string text = print_program(p);
  EXPECT_EQ(text, R"(symbols {
  s0: [1, inf]
}
graph(%x: bf16[s0, 4]) {
  %y: bf16[s0, 4] = aten.neg.default(%x) @neg_node
  return (%y)
}
)");
  Program back = parse_ok(text);
  EXPECT_EQ(node_at(back, 0).name(), "neg_node");
  EXPECT_EQ(print_program(back), text);
}

TEST(TextIr, FormatDouble) {
  EXPECT_EQ(format_double(1.0), "1.0");
  EXPECT_EQ(format_double(-0.0), "-0.0");
  EXPECT_EQ(format_double(1e20), "1e+20");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(quote_string("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
  EXPECT_EQ(format_value_name("a.b_1"), "%a.b_1");
  EXPECT_EQ(format_value_name("a b"), "%\"a b\"");
}

// ---- parser errors ----

Error parse_error(std::string_view text) {
  auto p = parse_program(text);
  EXPECT_FALSE(p.ok());
  if (p.ok()) return Error(ErrorKind::kInternal, "parsed");
  return p.error();
}

TEST(TextIrErrors, UnknownOp) {
  Error e =
      parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.bogus.default(%x)\n  return (%y)\n}\n");
  EXPECT_EQ(e.kind(), ErrorKind::kUnsupportedOp);
  EXPECT_EQ(e.message(), "line 2, col 16: unknown op 'aten.bogus.default'");
}

TEST(TextIrErrors, UndefinedValue) {
  Error e =
      parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.neg.default(%z)\n  return (%y)\n}\n");
  EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  EXPECT_EQ(e.message(), "line 2, col 33: undefined value '%z'");
  // A node cannot read its own output.
  e = parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.neg.default(%y)\n  return (%y)\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 33: undefined value '%y'");
  e = parse_error("graph(%x: f32[2]) {\n  return (%w)\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 11: undefined value '%w'");
}

TEST(TextIrErrors, BadTokens) {
  Error e = parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.mm.default(%x,, %x)\n}\n");
  EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  EXPECT_EQ(e.message(), "line 2, col 35: expected a value or literal but found ','");
  e = parse_error("graph(%x: f32[2] {\n");
  EXPECT_EQ(e.message(), "line 1, col 18: expected ',' or ')' but found '{'");
  e = parse_error("graph(%x: f32[2]) {\n  return (%x\n}\n");
  EXPECT_EQ(e.message(), "line 3, col 1: expected ',' or ')' but found '}'");
  e = parse_error("graph(%x: f32[2]) {\n  return (99999999999999999999)\n}\n");
  EXPECT_EQ(e.message(),
            "line 2, col 11: integer literal '99999999999999999999' does not fit in int64");
  e = parse_error("graph(%x: f32[2]) {\n  return (\"abc)\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 16: control character in a string (write it as an escape)");
  e = parse_error("graph(%x: f99[2]) {\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 1, col 11: unknown type 'f99'");
  e = parse_error("graph(%x: f32[s0 +]) {\n  return ()\n}\n");
  EXPECT_NE(e.message().find("line 1, col 15: bad size 's0 +'"), std::string::npos) << e.message();
  e = parse_error("graph() {\n  return ()\n}\nextra");
  EXPECT_EQ(e.message(), "line 4, col 1: expected end of input but found 'extra'");
}

TEST(TextIrErrors, WrongArguments) {
  Error e =
      parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.neg.default(%x, %x)\n  return ()\n}\n");
  EXPECT_EQ(e.message(),
            "line 2, col 37: too many positional arguments for aten.neg.default: it takes 1");
  e = parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.mm.default(%x)\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 16: missing argument 'mat2' of aten.mm.default");
  e = parse_error(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.neg.default(%x, bogus=1)\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 37: aten.neg.default has no argument 'bogus'");
  e = parse_error(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.neg.default(%x, self=%x)\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 37: argument 'self' of aten.neg.default is given twice");
  // Keyword-only arguments cannot be given by position.
  e = parse_error(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.add.Tensor(%x, %x, 2)\n  return ()\n}\n");
  EXPECT_EQ(e.message(),
            "line 2, col 40: too many positional arguments for aten.add.Tensor: it takes 2");
  e = parse_error(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.cat.default([%x, 1], 0)\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 38: this element does not fit a list of Tensor");
}

TEST(TextIrErrors, DefinitionsAndSignature) {
  Error e = parse_error("graph(%x: f32[2], %x: f32[2]) {\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 1, col 19: value '%x' is defined twice");
  e = parse_error("graph(%x: f32[2]) {\n  %x: f32[2] = aten.neg.default(%x)\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 3: value '%x' is defined twice");
  e = parse_error("signature {\n  input %a: user_input\n}\ngraph(%x: f32[2]) {\n  return ()\n}\n");
  EXPECT_EQ(e.message(),
            "line 4, col 1: signature input 0 is '%a' but the graph's input 0 is '%x'");
  e = parse_error("signature {\n  input %a: weird\n}\ngraph() {\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 13: unknown input kind 'weird'");
  e = parse_error("symbols {\n  s0: [4, 2]\n}\ngraph() {\n  return ()\n}\n");
  EXPECT_EQ(e.message(), "line 2, col 11: range of 's0' is empty: [4, 2]");
}

TEST(TextIr, ParseGraphInto) {
  Graph g;
  auto r = parse_graph_into(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.relu.default(%x)\n  return (%y)\n}\n", g);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(print_graph(g),
            "graph(%x: f32[2]) {\n  %y: f32[2] = aten.relu.default(%x)\n  return (%y)\n}\n");
  Graph g2;
  EXPECT_FALSE(parse_graph_into("symbols {\n}\ngraph() {\n  return ()\n}\n", g2).ok());
}

}  // namespace
}  // namespace splice::ir

namespace splice::ir {
namespace {

// One node per op of the table with arguments of every schema type: each prints, parses back
// to the same text and verifies.
TEST(TextIr, EveryOpRoundTrips) {
  for (const OpSchema* op : all_ops()) {
    Program p;
    Value* x = p.graph.add_value("x", ValueKind::kTensor);
    x->set_type(TensorType{DType::kFloat32, {SymExpr(2), SymExpr::symbol("s0")}});
    Value* n = p.graph.add_value("n", ValueKind::kSymInt);
    p.graph.inputs() = {x, n};
    Node* node = p.graph.add_node(op, "node");
    for (const ArgSchema& a : op->args) {
      Arg arg;
      if (a.default_value) {
        arg = *a.default_value;
      } else if (a.list) {
        if (a.type == ArgType::kTensor) arg = Arg{std::vector<Value*>{x}};
        if (a.type == ArgType::kInt || a.type == ArgType::kSymInt)
          arg = Arg{std::vector<SymIntArg>{
              int64_t{1}, a.type == ArgType::kSymInt ? SymIntArg{n} : SymIntArg{int64_t{-1}}}};
      } else {
        switch (a.type) {
          case ArgType::kTensor:
            arg = Arg{x};
            break;
          case ArgType::kInt:
            arg = Arg{int64_t{1}};
            break;
          case ArgType::kSymInt:
            arg = Arg{n};
            break;
          case ArgType::kFloat:
            arg = Arg{0.5};
            break;
          case ArgType::kBool:
            arg = Arg{true};
            break;
          case ArgType::kScalar:
            arg = Arg{2.5};
            break;
          case ArgType::kScalarType:
            arg = Arg{DType::kBFloat16};
            break;
          case ArgType::kString:
            arg = Arg{std::string("msg \"q\"")};
            break;
          case ArgType::kDevice:
            arg = Arg{std::string("cuda:0")};  // a required Device (to.device)
            break;
          default:
            break;  // None
        }
      }
      node->args().push_back(std::move(arg));
    }
    int counter = 0;
    auto output = [&](ValueKind kind) {
      Value* v = p.graph.add_value("out_" + std::to_string(counter++), kind);
      v->set_type(TensorType{DType::kBool, {SymExpr(2), SymExpr::symbol("s0")}});
      v->set_producer(node);
      node->outputs().push_back(v);
    };
    for (const ReturnSchema& r : op->returns) {
      if (r.list) {
        output(ValueKind::kTensor);
        output(ValueKind::kTensor);
      } else if (r.type == ArgType::kTensor) {
        output(ValueKind::kTensor);
      } else if (r.type == ArgType::kSymInt) {
        output(ValueKind::kSymInt);
      } else {
        output(ValueKind::kSymFloat);
      }
    }
    if (!node->outputs().empty()) p.graph.outputs().push_back(Arg{node->output(0)});
    std::string text = print_program(p);
    auto back = parse_program(text);
    ASSERT_TRUE(back.ok()) << op->target << ": " << back.error().message() << "\n" << text;
    EXPECT_EQ(print_program(*back), text) << op->target;
    ASSERT_EQ(back->graph.nodes().size(), 1u);
    const Node& parsed = *back->graph.nodes()[0];
    ASSERT_EQ(parsed.args().size(), node->args().size());
    for (size_t i = 0; i < parsed.args().size(); ++i) {
      EXPECT_EQ(parsed.args()[i].data.index(), node->args()[i].data.index())
          << op->target << " argument " << op->args[i].name;
    }
    // Only the shape rules may object (outputs are bool tensors of one shape here): never the
    // structural checks of arguments and outputs.
    auto r = verify_graph(back->graph);
    if (!r.ok()) {
      const std::string& m = r.error().message();
      EXPECT_TRUE(m.find("argument '") == std::string::npos ||
                  m.find("' expects ") == std::string::npos)
          << m;
      EXPECT_EQ(r.error().message().find("outputs but the op returns"), std::string::npos)
          << r.error().message();
    }
  }
}

}  // namespace
}  // namespace splice::ir
