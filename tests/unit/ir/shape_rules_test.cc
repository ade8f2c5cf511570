// The shape rules as a table: every op of the op table has one (a new op cannot ship without
// saying what it produces), none is left for an op the table lacks, and the rule API types a
// node the way passes use it. Rules op by op are tested against PyTorch in
// tests/shape_rules/*.txt (shape_rules_golden_test.cc) and against every recorded case
// (ShapeRules.EveryRecordedCaseAgreesWithTheRules in the conformance suite).
#include <gtest/gtest.h>

#include "ir/ops.h"
#include "ir/parser.h"
#include "ir/shape_rules.h"

namespace splice::ir {
namespace {

TEST(ShapeRules, EveryOpOfTheTableHasARule) {
  std::string missing;
  for (const OpSchema* op : all_ops())
    if (!has_shape_rule(op->id)) missing += "\n  " + op->target;
  EXPECT_TRUE(missing.empty()) << "ops of the op table without a shape rule:" << missing;
  EXPECT_GT(all_ops().size(), 250u);
}

TEST(ShapeRules, NoRuleForAnIdOutsideTheTable) { EXPECT_FALSE(has_shape_rule(OpId::kCount)); }

TEST(ShapeRules, InferTypesGivesTheOutputsOfANode) {
  auto p = parse_program(R"(symbols {
  s0: [2, 64]
}
graph(%x: f32[s0, 1, 8], %y: i32[4, 1]) {
  %add: f32[s0, 4, 8] = aten.add.Tensor(%x, %y, alpha=1)
  %a: f32[s0, 4, 3], %b: f32[s0, 4, 5] = aten.split_with_sizes.default(%add, [3, 5], -1)
  %size: SymInt(s0) = aten.sym_size.int(%x, 0)
  return (%a, %b, %size)
}
)");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ShapeEnv env(*p);
  const auto& nodes = p->graph.nodes();
  auto add = infer_types(*nodes[0], env);
  ASSERT_TRUE(add.ok()) << add.error().message();
  ASSERT_EQ(add->size(), 1u);
  EXPECT_EQ((*add)[0].to_string(), "f32[s0, 4, 8]");
  auto split = infer_types(*nodes[1], env);
  ASSERT_TRUE(split.ok()) << split.error().message();
  ASSERT_EQ(split->size(), 2u);
  EXPECT_EQ((*split)[1].to_string(), "f32[s0, 4, 5]");
  // A SymInt result is an output of infer_outputs, not a tensor type.
  EXPECT_FALSE(infer_types(*nodes[2], env).ok());
  auto size = infer_outputs(*nodes[2], env);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ((*size)[0].kind, ValueKind::kSymInt);
  EXPECT_EQ((*size)[0].expr->to_string(), "s0");
  EXPECT_TRUE(env.checks().empty());
}

// Sizes only a run can tell are fresh symbols, distinct from every symbol of the program.
TEST(ShapeRules, DataDependentSizesAreFreshSymbols) {
  auto p = parse_program(R"(graph(%r: i64[3], %x: f32[4, 3], %m: bool[4]) {
  %repeat_interleave: i64[u0] = aten.repeat_interleave.Tensor(%r, output_size=None)
  %index: f32[u1, 3] = aten.index.Tensor(%x, [%m])
  return (%repeat_interleave, %index)
}
)");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ShapeEnv env(*p);
  auto r = infer_types(*p->graph.nodes()[0], env);
  auto i = infer_types(*p->graph.nodes()[1], env);
  ASSERT_TRUE(r.ok() && i.ok());
  const SymExpr& a = (*r)[0].sizes[0];
  const SymExpr& b = (*i)[0].sizes[0];
  EXPECT_TRUE(env.is_fresh(a));
  EXPECT_TRUE(env.is_fresh(b));
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.to_string(), "u0");
  EXPECT_NE(a.to_string(), "u1");
  EXPECT_NE(b.to_string(), "u0");
  EXPECT_NE(b.to_string(), "u1");
}

}  // namespace
}  // namespace splice::ir
