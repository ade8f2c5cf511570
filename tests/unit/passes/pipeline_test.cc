// The default pipeline end to end on the forms torch.export 2.11 writes for slice and select
// writes (tests/cases/*.default), and its error reporting.
#include <gtest/gtest.h>

#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "tensor/tensor.h"

namespace splice::passes {
namespace {

// Parses a program; one written without a signature gets a plain one (every graph input a
// user input, every output a user output), as run_pipeline verifies the whole program.
ir::Program parse(std::string_view text) {
  auto p = ir::parse_program(text);
  EXPECT_TRUE(p.ok()) << p.error().message();
  if (!p.ok()) return ir::Program{};
  ir::Signature& sig = p->signature;
  if (sig.inputs.empty() && sig.outputs.empty()) {
    for (ir::Value* v : p->graph.inputs()) {
      ir::InputSpec spec;
      spec.value = v;
      sig.inputs.push_back(spec);
    }
    sig.outputs.resize(p->graph.outputs().size());
  }
  return std::move(*p);
}

// tests/cases/user_input_mutation_select_write.default: `x[0] = 5` (a lifted constant) on a
// mutated i32 user input, in its where-mask form.
constexpr std::string_view kSelectWriteOnMutatedInput = R"(signature {
  input %c_lifted_tensor_0: tensor_constant "lifted_tensor_0"
  input %x: user_input
  input %y: user_input
  output 0: user_input_mutation "x"
  output 1: user_output
}
graph(%c_lifted_tensor_0: i32[], %x: i32[3, 4], %y: i32[3, 4]) {
  %clone: i32[] = aten.clone.default(%c_lifted_tensor_0, memory_format=None)
  %select: i32[4] = aten.select.int(%x, 0, 0)
  %copy: i32[4] = aten.copy.default(%select, %clone, False)
  %arange: i64[3] = aten.arange.start_step(0, 3, 1, dtype=None, layout="strided", device="cpu", pin_memory=False)
  %view: i64[3, 1] = aten.view.default(%arange, [-1, 1])
  %eq: bool[3, 1] = aten.eq.Scalar(%view, 0)
  %unsqueeze: i32[1, 4] = aten.unsqueeze.default(%copy, 0)
  %expand: i32[3, 4] = aten.expand.default(%unsqueeze, [3, 4], implicit=False)
  %where: i32[3, 4] = aten.where.self(%eq, %expand, %x)
  %add: i32[3, 4] = aten.add.Tensor(%where, %y, alpha=1)
  return (%where, %add)
}
)";

TEST(Pipeline, WhereMaskSelectWriteBecomesOneSliceScatter) {
  ir::Program p = parse(kSelectWriteOnMutatedInput);
  auto r = run_pipeline(p);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(ir::print_graph(p.graph),
            R"(graph(%c_lifted_tensor_0: i32[], %x: i32[3, 4], %y: i32[3, 4]) {
  %clone: i32[] = aten.clone.default(%c_lifted_tensor_0, memory_format=None)
  %clone_expand: i32[4] = aten.expand.default(%clone, [4], implicit=False)
  %unsqueeze: i32[1, 4] = aten.unsqueeze.default(%clone_expand, 0)
  %where: i32[3, 4] = aten.slice_scatter.default(%x, %unsqueeze, 0, 0, 1, 1)
  %add: i32[3, 4] = aten.add.Tensor(%where, %y, alpha=1)
  return (%where, %add)
}
)");
  // The mutation output is still the write's value.
  EXPECT_EQ(p.graph.outputs()[0].as<ir::Value*>()->name(), "where");
}

// tests/cases/slice_scatter_dtype_cast.default plus a select_scatter from the `keep` form.
constexpr std::string_view kMixedDtypeWrites =
    R"(graph(%x: f32[3, 8], %h: f16[3, 4], %i: i32[3, 8], %v: f32[3]) {
  %clone: f32[3, 8] = aten.clone.default(%x, memory_format=None)
  %slice_1: f32[3, 4] = aten.slice.Tensor(%clone, -1, None, 4, 1)
  %copy: f32[3, 4] = aten.copy.default(%slice_1, %h, False)
  %slice_scatter: f32[3, 8] = aten.slice_scatter.default(%clone, %copy, -1, None, 4, 1)
  %clone_1: i32[3, 8] = aten.clone.default(%i, memory_format=None)
  %select_scatter: i32[3, 8] = aten.select_scatter.default(%clone_1, %v, 1, -1)
  return (%slice_scatter, %select_scatter)
}
)";

TEST(Pipeline, WritesEndInCanonicalFormWithExplicitCasts) {
  ir::Program p = parse(kMixedDtypeWrites);
  auto r = run_pipeline(p);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(ir::print_graph(p.graph),
            R"(graph(%x: f32[3, 8], %h: f16[3, 4], %i: i32[3, 8], %v: f32[3]) {
  %v_unsqueeze: f32[3, 1] = aten.unsqueeze.default(%v, 1)
  %clone: f32[3, 8] = aten.clone.default(%x, memory_format=None)
  %h_to_f32: f32[3, 4] = aten._to_copy.default(%h, dtype=f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %slice_scatter: f32[3, 8] = aten.slice_scatter.default(%clone, %h_to_f32, 1, 0, 4, 1)
  %clone_1: i32[3, 8] = aten.clone.default(%i, memory_format=None)
  %v_unsqueeze_to_i32: i32[3, 1] = aten._to_copy.default(%v_unsqueeze, dtype=i32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %select_scatter: i32[3, 8] = aten.slice_scatter.default(%clone_1, %v_unsqueeze_to_i32, 1, 7, 8, 1)
  return (%slice_scatter, %select_scatter)
}
)");
  // A second run is a fixed point.
  std::string once = ir::print_graph(p.graph);
  ASSERT_TRUE(run_pipeline(p).ok());
  EXPECT_EQ(ir::print_graph(p.graph), once);
}

// The write checks the passes used to make are the ops' shape rules now: the verifier makes
// them before any pass runs, naming the node and the numbers.
TEST(Pipeline, WriteArgumentErrorsAreFoundBeforeAnyPass) {
  ir::Program p = parse(R"(graph(%x: f32[4, 6], %v: f32[4]) {
  %select_scatter: f32[4, 6] = aten.select_scatter.default(%x, %v, 1, -7)
  return (%select_scatter)
}
)");
  auto r = run_pipeline(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(r.error().message(),
            "verifier before the passes: node 'select_scatter' (aten.select_scatter.default): "
            "index -7 is out of range for dim 1 of size 6");
}

TEST(Pipeline, RejectsAnUnverifiedProgramBeforeAnyPass) {
  ir::Program p = parse(R"(graph(%x: f32[4, 6], %v: f32[4]) {
  %slice_scatter: f32[4, 6] = aten.slice_scatter.default(%x, %v, 1, 0, 1, 1)
  return (%slice_scatter)
}
)");
  auto r = run_pipeline(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
  EXPECT_NE(r.error().message().find("before the passes"), std::string::npos)
      << r.error().message();
}

TEST(Pipeline, ShapeMismatchOnTheSlicedDimIsReported) {
  ir::Program p = parse(R"(graph(%x: f32[4, 8], %s: f32[4, 3]) {
  %slice_scatter: f32[4, 8] = aten.slice_scatter.default(%x, %s, 1, -2, None, 1)
  return (%slice_scatter)
}
)");
  auto r = run_pipeline(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(r.error().message(),
            "verifier before the passes: node 'slice_scatter' (aten.slice_scatter.default): src "
            "has shape [4, 3] but the slice of self is [4, 2]");
}

// q/k/v-style projections with their weights' data: the joined weight holds each weight's rows
// in order (the second one strided, as a transposed view in an archive can be), the originals
// are gone, and the record names the parts and their columns.
TEST(ConcatSiblingMatmuls, JoinsTheWeightsRowsInOrder) {
  ir::Program p = parse(R"(signature {
  input %p_a: parameter "a.weight"
  input %p_b: parameter "b.weight"
  input %x: user_input
  output 0: user_output
  output 1: user_output
}
graph(%p_a: f32[2, 3], %p_b: f32[1, 3], %x: f32[4, 3]) {
  %linear: f32[4, 2] = aten.linear.default(%x, %p_a, None)
  %linear_1: f32[4, 1] = aten.linear.default(%x, %p_b, None)
  %neg: f32[4, 2] = aten.neg.default(%linear)
  %neg_1: f32[4, 1] = aten.neg.default(%linear_1)
  return (%neg, %neg_1)
}
)");
  auto a = Tensor::empty(DType::kFloat32, {2, 3});
  auto b_storage = Tensor::empty(DType::kFloat32, {6});
  ASSERT_TRUE(a.ok() && b_storage.ok());
  for (int i = 0; i < 6; ++i) a->data<float>()[i] = static_cast<float>(i);
  for (int i = 0; i < 3; ++i) b_storage->data<float>()[2 * i] = static_cast<float>(10 + i);
  p.weights.emplace("a.weight", *a);
  // [1, 3] reading every other element: not contiguous.
  p.weights.emplace("b.weight", b_storage->view_as({1, 3}, {6, 2}, 0));
  auto r = run_pipeline(p);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(p.weights.count("a.weight") + p.weights.count("b.weight"), 0u);
  auto it = p.weights.find("concat(a.weight,b.weight)");
  ASSERT_NE(it, p.weights.end());
  ASSERT_EQ(it->second.sizes(), (Shape{3, 3}));
  ASSERT_TRUE(it->second.is_contiguous());
  const float* w = it->second.data<float>();
  EXPECT_EQ(std::vector<float>(w, w + 9), (std::vector<float>{0, 1, 2, 3, 4, 5, 10, 11, 12}));
  ASSERT_EQ(p.concatenated.size(), 1u);
  EXPECT_EQ(p.concatenated[0].weight, "concat(a.weight,b.weight)");
  ASSERT_EQ(p.concatenated[0].parts.size(), 2u);
  EXPECT_EQ(p.concatenated[0].parts[1].node, "linear_1");
  EXPECT_EQ(p.concatenated[0].parts[1].start, 2);
  EXPECT_EQ(p.concatenated[0].parts[1].end, 3);
  EXPECT_EQ(p.graph.inputs().size(), 2u);
  EXPECT_EQ(p.signature.inputs.size(), 2u);
}

// Weights with data for some parts only cannot be joined: the group is left as it is.
TEST(ConcatSiblingMatmuls, LeavesAGroupWithPartialDataAlone) {
  ir::Program p = parse(R"(signature {
  input %p_a: parameter "a.weight"
  input %p_b: parameter "b.weight"
  input %x: user_input
  output 0: user_output
}
graph(%p_a: f32[2, 3], %p_b: f32[1, 3], %x: f32[4, 3]) {
  %linear: f32[4, 2] = aten.linear.default(%x, %p_a, None)
  %linear_1: f32[4, 1] = aten.linear.default(%x, %p_b, None)
  %sum: f32[4] = aten.sum.dim_IntList(%linear, [1], False, dtype=None)
  %sum_1: f32[4] = aten.sum.dim_IntList(%linear_1, [1], False, dtype=None)
  %add: f32[4] = aten.add.Tensor(%sum, %sum_1, alpha=1)
  return (%add)
}
)");
  auto a = Tensor::empty(DType::kFloat32, {2, 3});
  ASSERT_TRUE(a.ok());
  p.weights.emplace("a.weight", *a);
  auto r = run_pipeline(p);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(p.concatenated.empty());
  EXPECT_EQ(p.weights.count("a.weight"), 1u);
}

}  // namespace
}  // namespace splice::passes
