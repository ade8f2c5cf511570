// Inlining of wrap_with_set_grad_enabled subgraphs: the subgraph's nodes take the op's place,
// operands and results bound by name (or through aten.alias where the names differ), and every
// malformed region is refused naming the node. The end-to-end check against PyTorch is the
// f_no_grad_region case (train and strict forms) and the M2M100 sweep (docs/model-coverage.md).
#include "frontend/pt2/inline_subgraphs.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace splice::pt2 {
namespace {

Argument tensor(const std::string& name) { return Argument{TensorArgument{name}}; }
Argument sym(const std::string& name) { return Argument{SymIntArgument{name}}; }

TensorMeta meta() {
  TensorMeta m;
  m.dtype = 7;  // float32
  m.sizes = {SymInt{int64_t{2}}};
  m.strides = {SymInt{int64_t{1}}};
  return m;
}

Node op(const std::string& target, std::vector<std::string> in, const std::string& out) {
  Node n;
  n.target = target;
  for (const std::string& name : in)
    n.inputs.push_back(NamedArgument{"self", tensor(name), ArgumentKind::kPositional});
  n.outputs.push_back(tensor(out));
  n.name = out;
  return n;
}

// `region(enabled, subgraph, *operands) -> outputs` over `sub`.
Node region(Graph sub, std::vector<Argument> operands, std::vector<Argument> outputs) {
  Node n;
  n.target = std::string(kSetGradEnabledTarget);
  n.name = "wrap_with_set_grad_enabled";
  n.inputs.push_back(NamedArgument{"", Argument{BoolArgument{false}}, ArgumentKind::kPositional});
  n.inputs.push_back(NamedArgument{
      "", Argument{GraphArgument{"submod_1", std::make_shared<const Graph>(std::move(sub))}},
      ArgumentKind::kPositional});
  for (Argument& a : operands)
    n.inputs.push_back(NamedArgument{"", std::move(a), ArgumentKind::kPositional});
  n.outputs = std::move(outputs);
  return n;
}

// A subgraph: p -> neg(p) as `q`, with its own metadata.
Graph negate(const std::string& p, const std::string& q) {
  Graph sub;
  sub.inputs = {tensor(p)};
  sub.outputs = {tensor(q)};
  sub.nodes = {op("torch.ops.aten.neg.default", {p}, q)};
  sub.tensor_values = {{p, meta()}, {q, meta()}};
  return sub;
}

std::vector<std::string> targets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes) out.push_back(n.target);
  return out;
}

std::string error_of(Graph g) {
  auto r = inline_grad_mode_regions(g);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message();
}

TEST(InlineGradModeRegions, SameNamesInlineInPlace) {
  Graph g;
  g.tensor_values = {{"x", meta()}, {"y", meta()}, {"z", meta()}};
  g.nodes = {region(negate("x", "y"), {tensor("x")}, {tensor("y")}),
             op("torch.ops.aten.relu.default", {"y"}, "z")};
  ASSERT_TRUE(inline_grad_mode_regions(g).ok());
  EXPECT_EQ(targets(g), (std::vector<std::string>{"torch.ops.aten.neg.default",
                                                  "torch.ops.aten.relu.default"}));
}

TEST(InlineGradModeRegions, DifferentNamesAreBoundThroughAliases) {
  // M2M100's form: the subgraph names its input `p` and its result `q`; the op passes `x` and
  // calls the result `getitem`.
  Graph g;
  g.tensor_values = {{"x", meta()}, {"getitem", meta()}};
  g.nodes = {region(negate("p", "q"), {tensor("x")}, {tensor("getitem")})};
  ASSERT_TRUE(inline_grad_mode_regions(g).ok());
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].target, "torch.ops.aten.alias.default");
  EXPECT_EQ(g.nodes[0].inputs[0].arg.get_if<TensorArgument>()->name, "x");
  EXPECT_EQ(g.nodes[0].outputs[0].get_if<TensorArgument>()->name, "p");
  EXPECT_EQ(g.nodes[1].target, "torch.ops.aten.neg.default");
  EXPECT_EQ(g.nodes[2].inputs[0].arg.get_if<TensorArgument>()->name, "q");
  EXPECT_EQ(g.nodes[2].outputs[0].get_if<TensorArgument>()->name, "getitem");
  EXPECT_TRUE(g.tensor_values.contains("p"));
  EXPECT_TRUE(g.tensor_values.contains("q"));
}

TEST(InlineGradModeRegions, NestedRegionsAreInlined) {
  Graph inner_region;
  inner_region.inputs = {tensor("x")};
  inner_region.outputs = {tensor("y")};
  inner_region.nodes = {region(negate("x", "y"), {tensor("x")}, {tensor("y")})};
  inner_region.tensor_values = {{"x", meta()}, {"y", meta()}};
  Graph g;
  g.tensor_values = {{"x", meta()}, {"y", meta()}};
  g.nodes = {region(inner_region, {tensor("x")}, {tensor("y")})};
  ASSERT_TRUE(inline_grad_mode_regions(g).ok());
  EXPECT_EQ(targets(g), (std::vector<std::string>{"torch.ops.aten.neg.default"}));
}

TEST(InlineGradModeRegions, MalformedRegionsAreRefusedNamingTheNode) {
  const std::string node =
      "node 'wrap_with_set_grad_enabled' (" + std::string(kSetGradEnabledTarget) + "): ";
  {
    Graph g;
    Node n = region(negate("x", "y"), {tensor("x")}, {tensor("y")});
    n.inputs.resize(1);
    g.nodes = {n};
    EXPECT_EQ(error_of(g),
              node + "expected (enabled, subgraph, *operands) with a subgraph as argument 2");
  }
  {
    Graph g;
    g.nodes = {region(negate("x", "y"), {tensor("x"), tensor("w")}, {tensor("y")})};
    EXPECT_EQ(error_of(g), node + "subgraph 'submod_1' takes 1 input(s) but the op passes 2");
  }
  {
    Graph g;
    g.nodes = {region(negate("x", "y"), {tensor("x")}, {tensor("y"), tensor("w")})};
    EXPECT_EQ(error_of(g),
              node + "subgraph 'submod_1' returns 1 value(s) but the op has 2 output(s)");
  }
  {
    Graph g;  // a symbol cannot be renamed
    Graph sub = negate("x", "y");
    sub.inputs = {sym("s0")};
    g.nodes = {region(sub, {sym("s1")}, {tensor("y")})};
    EXPECT_EQ(error_of(g), node +
                               "subgraph 'submod_1' input 0 ('s0', as_sym_int) cannot take the "
                               "op's operand (as_sym_int)");
  }
  {
    Graph g;  // a symbolic result named differently outside
    Graph sub = negate("x", "y");
    sub.inputs = {sym("s0")};
    sub.outputs = {sym("s0")};
    sub.nodes.clear();
    g.nodes = {region(sub, {sym("s0")}, {sym("s1")})};
    EXPECT_EQ(error_of(g), node +
                               "subgraph 'submod_1' output 0 is as_sym_int, named 's1' outside: "
                               "only tensors can be renamed");
  }
  {
    Graph g;  // the subgraph's private value `y` shadows the program's
    g.tensor_values = {{"x", meta()}, {"y", meta()}, {"r", meta()}};
    g.nodes = {region(negate("x", "y"), {tensor("x")}, {tensor("r")})};
    EXPECT_EQ(error_of(g), node + "the subgraph's value 'y' has the name of a value outside it");
  }
}

}  // namespace
}  // namespace splice::pt2
