// Verifier rules, one broken program per rule: valid programs come from text, then the Graph
// API breaks them (the parser itself refuses most of these).
#include <gtest/gtest.h>

#include "ir/ops.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace splice::ir {
namespace {

constexpr std::string_view kBase = R"(signature {
  input %x: user_input
  input %b_kc: buffer "kc" persistent
  input %n: user_input
  input constant "flag" = 3
  output 0: buffer_mutation "kc"
  output 1: user_output
}
graph(%x: f32[4, 8], %b_kc: f32[4, 8], %n: SymInt) {
  %neg: f32[4, 8] = aten.neg.default(%x)
  %add_1: f32[4, 8] = aten.add.Tensor(%neg, %x, alpha=1)
  %slice: f32[2, 8] = aten.slice.Tensor(%add_1, 0, 0, %n, 1)
  %slice_scatter: f32[4, 8] = aten.slice_scatter.default(%b_kc, %slice, 0, 0, 2, 1)
  %eq: bool[4, 8] = aten.eq.Tensor(%neg, %x)
  %size: SymInt = aten.sym_size.int(%x, 0)
  %a: f32[2, 8], %b: f32[2, 8] = aten.split_with_sizes.default(%x, [2, 2], 0)
  %ia: i64[2, 8] = aten._to_copy.default(%a, dtype=i64)
  %idx: f32[4, 8] = aten.index_put.default(%x, [None, %ia], %a, False)
  %full: f32[2] = aten.full.default([%size], %n, dtype=f32, layout=None, device=None, pin_memory=None)
  return (%slice_scatter, %add_1)
}
)";

Program base() {
  auto p = parse_program(kBase);
  EXPECT_TRUE(p.ok()) << p.error().message();
  return std::move(*p);
}

Node* node(Program& p, std::string_view name) {
  for (const auto& n : p.graph.nodes())
    if (n->name() == name) return n.get();
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

std::string verify_error(const Program& p) {
  auto r = verify(p);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
  return r.error().message();
}

TEST(Verifier, AcceptsValidProgram) {
  Program p = base();
  auto r = verify(p);
  EXPECT_TRUE(r.ok()) << r.error().message();
}

TEST(Verifier, OpNotInTable) {
  Program p = base();
  auto fake = parse_op_schema("aten.fake.default", "(Tensor self) -> Tensor");
  ASSERT_TRUE(fake.ok());
  Node* n = p.graph.add_node(&*fake, "fake");
  n->args().push_back(Arg{p.graph.inputs()[0]});
  EXPECT_EQ(verify_error(p), "node 'fake' (aten.fake.default): op is not in the op table");
}

TEST(Verifier, ArgumentCount) {
  Program p = base();
  node(p, "add_1")->args().pop_back();
  EXPECT_EQ(verify_error(p),
            "node 'add_1' (aten.add.Tensor): has 2 arguments but the schema has 3");
}

TEST(Verifier, ArgumentTypes) {
  struct Case {
    std::string node;
    size_t arg;
    Arg value;
    std::string message;
  };
  Program p = base();
  Value* x = p.graph.inputs()[0];
  Value* n = p.graph.inputs()[2];
  std::vector<Case> cases = {
      {"add_1", 1, Arg{std::string("3")},
       "node 'add_1' (aten.add.Tensor): argument 'other' expects Tensor, got str"},
      {"add_1", 1, Arg{Arg::None{}},
       "node 'add_1' (aten.add.Tensor): argument 'other' expects Tensor, got None"},
      {"add_1", 1, Arg{std::vector<double>{1.0}},
       "node 'add_1' (aten.add.Tensor): argument 'other' expects Tensor, got float list"},
      {"add_1", 2, Arg{std::string("1")},
       "node 'add_1' (aten.add.Tensor): argument 'alpha' expects Scalar, got str"},
      {"slice", 1, Arg{n},
       "node 'slice' (aten.slice.Tensor): argument 'dim' expects int, got SymInt %n"},
      {"slice", 4, Arg{x},
       "node 'slice' (aten.slice.Tensor): argument 'step' expects SymInt, got Tensor %x"},
      {"slice", 4, Arg{2.0},
       "node 'slice' (aten.slice.Tensor): argument 'step' expects SymInt, got float"},
      {"idx", 1, Arg{std::vector<Value*>{nullptr, n}},
       "node 'idx' (aten.index_put.default): argument 'indices' expects Tensor?[], got SymInt "
       "%n at element 1"},
      {"idx", 1, Arg{Arg::None{}},
       "node 'idx' (aten.index_put.default): argument 'indices' expects Tensor?[], got None"},
      {"full", 0, Arg{std::vector<SymIntArg>{int64_t{2}, x}},
       "node 'full' (aten.full.default): argument 'size' expects SymInt[], got Tensor %x at "
       "element 1"},
      {"full", 2, Arg{std::string("f32")},
       "node 'full' (aten.full.default): argument 'dtype' expects ScalarType?, got str"},
      {"full", 4, Arg{int64_t{0}},
       "node 'full' (aten.full.default): argument 'device' expects Device?, got int"},
      {"split_with_sizes", 1, Arg{std::vector<double>{2.0}},
       "node 'a' (aten.split_with_sizes.default): argument 'split_sizes' expects SymInt[], "
       "got float list"},
      {"size", 0, Arg{std::string("size")},
       "node 'size' (aten.sym_size.int): argument 'self' expects Tensor, got str"},
  };
  for (const Case& c : cases) {
    Program q = base();
    // Values of `p` are not in `q`: translate by name.
    auto translate = [&](Arg a) {
      auto tr = [&](Value* v) { return v ? q.graph.find_value(v->name()) : nullptr; };
      if (auto* v = std::get_if<Value*>(&a.data)) *v = tr(*v);
      if (auto* l = std::get_if<std::vector<Value*>>(&a.data))
        for (auto& e : *l) e = tr(e);
      if (auto* l = std::get_if<std::vector<SymIntArg>>(&a.data))
        for (auto& e : *l)
          if (auto* ev = std::get_if<Value*>(&e)) *ev = tr(*ev);
      return a;
    };
    std::string name = c.node == "split_with_sizes" ? "a" : c.node;
    node(q, name)->args()[c.arg] = translate(c.value);
    EXPECT_EQ(verify_error(q), c.message);
  }
}

TEST(Verifier, OptionalAndSymbolicArgumentsAccepted) {
  Program p = base();
  Value* n = p.graph.inputs()[2];
  node(p, "slice")->args()[2] = Arg{Arg::None{}};  // SymInt? start
  node(p, "add_1")->args()[2] = Arg{n};            // Scalar alpha from a SymInt
  node(p, "full")->args()[1] = Arg{true};          // Scalar fill_value: bool
  auto r = verify(p);
  EXPECT_TRUE(r.ok()) << r.error().message();
}

TEST(Verifier, TensorListWithoutOptionalElements) {
  auto p = parse_program(R"(graph(%x: f32[2]) {
  %cat: f32[4] = aten.cat.default([%x, %x], 0)
  return (%cat)
}
)");
  ASSERT_TRUE(p.ok());
  p->graph.nodes()[0]->args()[0] = Arg{std::vector<Value*>{p->graph.inputs()[0], nullptr}};
  auto r = verify_graph(p->graph);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "node 'cat' (aten.cat.default): argument 'tensors' expects Tensor[], got None at "
            "element 1");
}

TEST(Verifier, UseBeforeDefinition) {
  Program p = base();
  Value* slice_scatter = node(p, "slice_scatter")->output();
  node(p, "neg")->args()[0] = Arg{slice_scatter};
  EXPECT_EQ(verify_error(p),
            "node 'neg' (aten.neg.default): value %slice_scatter is used before it is defined");
}

TEST(Verifier, ValueFromNowhere) {
  Program p = base();
  Value* ghost = p.graph.add_value("ghost", ValueKind::kTensor);
  node(p, "add_1")->args()[1] = Arg{ghost};
  EXPECT_EQ(verify_error(p),
            "node 'add_1' (aten.add.Tensor): value %ghost is not defined by any node or graph "
            "input");
  // Also inside a SymInt list.
  Program q = base();
  Value* s = q.graph.add_value("s_ghost", ValueKind::kSymInt);
  node(q, "full")->args()[0] = Arg{std::vector<SymIntArg>{s}};
  EXPECT_EQ(verify_error(q),
            "node 'full' (aten.full.default): value %s_ghost is not defined by any node or graph "
            "input");
}

TEST(Verifier, ValueProducedTwice) {
  Program p = base();
  Node* add = node(p, "add_1");
  add->outputs()[0] = node(p, "neg")->output();
  EXPECT_EQ(verify_error(p),
            "node 'add_1' (aten.add.Tensor): value %neg is produced more than once");
  Program q = base();
  q.graph.nodes()[0]->outputs()[0] = q.graph.inputs()[0];
  EXPECT_EQ(verify_error(q), "node 'neg' (aten.neg.default): value %x is produced more than once");
}

TEST(Verifier, ProducerMismatch) {
  Program p = base();
  node(p, "neg")->output()->set_producer(node(p, "add_1"));
  EXPECT_EQ(verify_error(p),
            "node 'neg' (aten.neg.default): output %neg records node 'add_1' as its producer");
}

TEST(Verifier, OutputCounts) {
  Program p = base();
  node(p, "neg")->outputs().push_back(nullptr);
  EXPECT_EQ(verify_error(p), "node 'neg' (aten.neg.default): has 2 outputs but the op returns 1");
  // A Tensor[] return takes any number of outputs, none included.
  Program q = base();
  node(q, "a")->outputs().push_back(nullptr);
  EXPECT_TRUE(verify(q).ok());
  Program r = base();
  Node* split = node(r, "a");
  for (Value* v : split->outputs()) v->set_producer(nullptr);
  split->outputs().clear();
  // %a is now produced by nothing; _to_copy reads it.
  EXPECT_EQ(verify_error(r),
            "node 'ia' (aten._to_copy.default): value %a is not defined by any node or graph "
            "input");
}

TEST(Verifier, OutputKinds) {
  Program p = base();
  Node* neg = node(p, "neg");
  Value* s = p.graph.add_value("s", ValueKind::kSymInt);
  s->set_producer(neg);
  neg->outputs()[0] = s;
  EXPECT_EQ(verify_error(p), "node 'neg' (aten.neg.default): output 0 SymInt %s should be Tensor");
  Program q = base();
  Node* size = node(q, "size");
  Value* t = q.graph.add_value("t", ValueKind::kTensor);
  t->set_producer(size);
  size->outputs()[0] = t;
  EXPECT_EQ(verify_error(q),
            "node 'size' (aten.sym_size.int): output 0 Tensor %t should be SymInt");
}

TEST(Verifier, GraphOutputs) {
  Program p = base();
  p.graph.outputs()[1] = Arg{p.graph.add_value("ghost", ValueKind::kTensor)};
  EXPECT_EQ(verify_error(p),
            "graph output 1: value %ghost is not defined by any node or graph input");
  Program q = base();
  q.graph.outputs()[1] = Arg{static_cast<Value*>(nullptr)};
  EXPECT_EQ(verify_error(q), "graph output 1 is a null value");
}

TEST(Verifier, SignatureSizes) {
  Program p = base();
  p.signature.inputs.pop_back();
  EXPECT_EQ(verify_error(p), "signature has 3 inputs but the graph has 4");
  Program q = base();
  q.graph.outputs().push_back(Arg{int64_t{3}});
  EXPECT_EQ(verify_error(q), "signature has 2 outputs but the graph has 3");
  Program r = base();
  r.signature.inputs[0].value = r.graph.inputs()[2];
  EXPECT_EQ(verify_error(r),
            "signature input 0 (user_input): its value is not the graph's input 0");
}

TEST(Verifier, MutationTargets) {
  Program p = base();
  p.signature.outputs[0].target = "nope";
  EXPECT_EQ(verify_error(p),
            "signature output 0 (buffer_mutation \"nope\"): no buffer input of that name");
  Program q = base();
  q.signature.outputs[1] = OutputSpec{OutputKind::kUserInputMutation, "x"};
  EXPECT_TRUE(verify(q).ok()) << verify(q).error().message();
  q.signature.outputs[1].target = "b_kc";  // a buffer, not a user input
  EXPECT_EQ(verify_error(q),
            "signature output 1 (user_input_mutation \"b_kc\"): no user_input input of that name");
  Program r = base();
  r.graph.outputs()[0] = Arg{int64_t{1}};
  EXPECT_EQ(verify_error(r),
            "signature output 0 (buffer_mutation \"kc\"): graph output is int, not a tensor");
}

// The type rules run in the verifier (type_check.h; its own tests are type_check_test.cc).
TEST(Verifier, ComparisonProducesBool) {
  Program p = base();
  Value* eq = node(p, "eq")->output();
  eq->set_type(TensorType{DType::kFloat32, eq->type().sizes});
  EXPECT_EQ(verify_error(p),
            "node 'eq' (aten.eq.Tensor): output 'eq' is recorded as f32[4, 8], but the op gives "
            "bool[4, 8]");
}

TEST(Verifier, WritesKeepSelfDtype) {
  Program p = base();
  Value* out = node(p, "slice_scatter")->output();
  out->set_type(TensorType{DType::kFloat16, out->type().sizes});
  EXPECT_EQ(verify_error(p),
            "node 'slice_scatter' (aten.slice_scatter.default): output 'slice_scatter' is "
            "recorded as f16[4, 8], but the op gives f32[4, 8]");
  Program q = base();
  Value* idx = node(q, "idx")->output();
  idx->set_type(TensorType{DType::kInt64, idx->type().sizes});
  EXPECT_EQ(verify_error(q),
            "node 'idx' (aten.index_put.default): output 'idx' is recorded as i64[4, 8], but the "
            "op gives f32[4, 8]");
}

TEST(Verifier, SliceScatterShapes) {
  Program p = base();
  Node* write = node(p, "slice_scatter");
  write->args()[1] = Arg{p.graph.inputs()[0]};  // %x: f32[4, 8] into a slice of 2 rows
  EXPECT_EQ(verify_error(p),
            "node 'slice_scatter' (aten.slice_scatter.default): src has shape [4, 8] but the "
            "slice of self is [2, 8]");
}

}  // namespace
}  // namespace splice::ir

namespace splice::ir {
namespace {
// `x * 2` exports as mul.Tensor(x, 2): a Python number (literal or symbolic) where a tensor
// is expected is a wrapped number, which the verifier must accept.
TEST(Verifier, WrappedNumbersAcceptedForTensorArguments) {
  for (Arg number : {Arg{int64_t{3}}, Arg{2.5}, Arg{true}}) {
    Program p = base();
    node(p, "add_1")->args()[1] = number;
    auto r = verify(p);
    EXPECT_TRUE(r.ok()) << r.error().message();
  }
  Program p = base();
  node(p, "add_1")->args()[1] = Arg{p.graph.inputs()[2]};  // SymInt %n
  auto r = verify(p);
  EXPECT_TRUE(r.ok()) << r.error().message();
}
}  // namespace
}  // namespace splice::ir
