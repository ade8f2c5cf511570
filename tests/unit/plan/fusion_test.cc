// Pointwise fusion (plan/fusion.h): which nodes group, what a group stores (values used
// outside it, a write's destination slice, several outputs over one iteration space), that
// naive mode and a backend without pointwise groups get none, and — running programs in the
// planned plan (groups) and the naive plan (every op its own kernel) on the same random
// inputs — that a group computes bit for bit what its ops compute one by one, across dtypes,
// casts, broadcasts and constants.
#include <gtest/gtest.h>

#include <random>

#include "compiler/driver.h"
#include "ir/parser.h"
#include "plan/build.h"
#include "plan/fusion.h"
#include "tests/test_backends.h"
#include "tests/unit/plan/write_program_generator.h"

namespace splice::plan {
namespace {

using splice::testing::cpu_target;

ir::Program parse(const std::string& text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message();
  return std::move(*program);
}

std::string program_text(const std::string& inputs, const std::string& body,
                         const std::string& outputs, int n_outputs = 1) {
  std::string sig = "signature {\n";
  for (const std::string name : {"x", "y", "z", "w"})
    if (inputs.find("%" + name + ":") != std::string::npos)
      sig += "  input %" + name + ": user_input\n";
  for (int i = 0; i < n_outputs; ++i) sig += "  output " + std::to_string(i) + ": user_output\n";
  return sig + "}\ngraph(" + inputs + ") {\n" + body + "  return (" + outputs + ")\n}\n";
}

// Member names of each group, and its outputs.
std::vector<std::vector<std::string>> groups_of(const ir::Program& p, const Plan& plan) {
  std::vector<std::vector<std::string>> out;
  for (const Group& g : plan.groups) {
    std::vector<std::string> names;
    for (int32_t n : g.nodes) names.push_back(p.graph.nodes()[n]->name());
    out.push_back(names);
  }
  return out;
}

const Placement* placement_of(const Plan& plan, const std::string& value) {
  for (const Placement& p : plan.placements)
    if (p.value == value) return &p;
  return nullptr;
}

using Names = std::vector<std::vector<std::string>>;

TEST(Fusion, ChainBetweenNonFusibleOpsIsOneGroup) {
  ir::Program p = parse(program_text("%x: f32[4, 8], %w: f32[8, 8]", R"(
  %a: f32[4, 8] = aten.mm.default(%x, %w)
  %b: f32[4, 8] = aten.mul.Tensor(%a, 2)
  %c: f32[4, 8] = aten.add.Tensor(%b, %x, alpha=1)
  %d: f32[4, 8] = aten.relu.default(%c)
  %e: f32[4, 8] = aten.mm.default(%d, %w)
)",
                                     "%e"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"b", "c", "d"}}));
  EXPECT_EQ(plan.groups[0].outputs, std::vector<std::string>{"d"});
  EXPECT_EQ(plan.totals.steps, 5);
  EXPECT_EQ(plan.totals.kernels, 3);  // mm, the group, mm
  // b and c are never stored; d has its buffer.
  EXPECT_EQ(placement_of(plan, "b"), nullptr);
  EXPECT_EQ(placement_of(plan, "c"), nullptr);
  ASSERT_NE(placement_of(plan, "d"), nullptr);
  // The group runs where its members were: between the two matmuls.
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[1].kind, StepKind::kGroup);
}

TEST(Fusion, AValueUsedOutsideTheGroupIsAnOutput) {
  ir::Program p = parse(program_text("%x: f32[4, 8], %w: f32[8, 8]", R"(
  %b: f32[4, 8] = aten.mul.Tensor(%x, 2)
  %c: f32[4, 8] = aten.exp.default(%b)
  %s: f32[4, 8] = aten.sigmoid.default(%c)
  %d: f32[4, 8] = aten.mm.default(%b, %w)
)",
                                     "%s, %d", 2));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"b", "c", "s"}}));
  // b feeds the matmul, s is returned; c stays inside.
  EXPECT_EQ(plan.groups[0].outputs, (std::vector<std::string>{"b", "s"}));
}

TEST(Fusion, ANarrowChainWidensIntoItsBroadcastReader) {
  // RMSNorm's tail: b and c over [4, 1] feed only d over [4, 8], so the group widens to
  // [4, 8], computes b and c at every element they broadcast to, and stores only e.
  ir::Program p = parse(program_text("%x: f32[4, 1], %z: f32[4, 8]", R"(
  %b: f32[4, 1] = aten.add.Tensor(%x, 1e-06, alpha=1)
  %c: f32[4, 1] = aten.rsqrt.default(%b)
  %d: f32[4, 8] = aten.mul.Tensor(%z, %c)
  %e: f32[4, 8] = aten.neg.default(%d)
)",
                                     "%e"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"b", "c", "d", "e"}}));
  EXPECT_EQ(plan.groups[0].outputs, std::vector<std::string>{"e"});
  EXPECT_EQ(plan.totals.kernels, 1);
  EXPECT_EQ(placement_of(plan, "c"), nullptr);
}

TEST(Fusion, OtherIterationSpacesStartAnotherGroup) {
  // c is read outside the group too (returned), so it is stored over its own [4, 8] and the
  // [2, 4, 8] ops start another group; a transposed space does not broadcast at all.
  ir::Program p = parse(program_text("%x: f32[4, 8], %z: f32[2, 4, 8]", R"(
  %b: f32[4, 8] = aten.mul.Tensor(%x, 2)
  %c: f32[4, 8] = aten.exp.default(%b)
  %d: f32[2, 4, 8] = aten.add.Tensor(%c, %z, alpha=1)
  %e: f32[2, 4, 8] = aten.neg.default(%d)
  %t: f32[8, 4] = aten.permute.default(%x, [1, 0])
  %f: f32[8, 4] = aten.exp.default(%t)
  %g: f32[8, 4] = aten.neg.default(%f)
)",
                                     "%e, %c, %g", 3));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"b", "c"}, {"d", "e"}, {"f", "g"}}));
  EXPECT_EQ(plan.groups[0].outputs, std::vector<std::string>{"c"});
  EXPECT_EQ(plan.totals.kernels, 3);
}

TEST(Fusion, AGroupStaysWithinItsKernelsOperands) {
  // A backend whose group kernel takes 4 operands (the GPU's takes 24): b reads x, y and z
  // and stores one value; c would read w too, so it starts the next group. Without a limit
  // the chain is one group.
  ir::Program p = parse(program_text("%x: f32[4, 8], %y: f32[4, 8], %z: f32[4, 8], %w: f32[4, 8]",
                                     R"(
  %a: f32[4, 8] = aten.add.Tensor(%x, %y, alpha=1)
  %b: f32[4, 8] = aten.add.Tensor(%a, %z, alpha=1)
  %c: f32[4, 8] = aten.add.Tensor(%b, %w, alpha=1)
  %d: f32[4, 8] = aten.neg.default(%c)
)",
                                     "%d"));
  EXPECT_EQ(groups_of(p, build_plan(p, PlanMode::kPlanned, cpu_target())),
            (Names{{"a", "b", "c", "d"}}));
  backend::Target four = cpu_target();
  four.pointwise_max_operands = 4;
  EXPECT_EQ(groups_of(p, build_plan(p, PlanMode::kPlanned, four)), (Names{{"a", "b"}, {"c", "d"}}));
}

TEST(Fusion, AGroupStaysWithinItsKernelsConstants) {
  ir::Program p = parse(program_text("%x: f32[4, 8]", R"(
  %a: f32[4, 8] = aten.mul.Tensor(%x, 2)
  %b: f32[4, 8] = aten.mul.Tensor(%a, 3)
  %c: f32[4, 8] = aten.mul.Tensor(%b, 4)
  %d: f32[4, 8] = aten.mul.Tensor(%c, 5)
)",
                                     "%d"));
  backend::Target two = cpu_target();
  two.pointwise_max_constants = 2;
  EXPECT_EQ(groups_of(p, build_plan(p, PlanMode::kPlanned, two)), (Names{{"a", "b"}, {"c", "d"}}));
}

TEST(Fusion, GroupStoresIntoAWriteDestination) {
  ir::Program p = parse(program_text("%x: f32[4, 8], %y: f32[4, 2]", R"(
  %base: f32[4, 8] = aten.clone.default(%x, memory_format=None)
  %a: f32[4, 2] = aten.mul.Tensor(%y, 2)
  %b: f32[4, 2] = aten.add.Tensor(%a, 1, alpha=1)
  %s: f32[4, 8] = aten.slice_scatter.default(%base, %b, 1, 0, 2, 1)
)",
                                     "%s"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"a", "b"}}));
  EXPECT_EQ(plan.groups[0].outputs, std::vector<std::string>{"b"});
  ASSERT_EQ(plan.writes.size(), 1u);
  EXPECT_EQ(plan.writes[0].src, SrcMode::kProducerWrites);
  const Placement* b = placement_of(plan, "b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->kind, PlacementKind::kRegion);
}

TEST(Fusion, RotaryHalvesAreOneGroupStoringBothHalves) {
  auto loaded =
      compiler::load_program(std::string(SPLICE_SOURCE_DIR) +
                             "/tests/cases/rotary_halves_into_empty_like.default/model.pt2");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  Plan plan = build_plan(*loaded, PlanMode::kPlanned, cpu_target());
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].nodes.size(), 6u);
  EXPECT_EQ(plan.groups[0].outputs, (std::vector<std::string>{"sub", "add"}));
  for (const std::string v : {"sub", "add"}) {
    const Placement* p = placement_of(plan, v);
    ASSERT_NE(p, nullptr) << v;
    EXPECT_EQ(p->kind, PlacementKind::kRegion) << v;
  }
  EXPECT_EQ(plan.totals.kernels, 1);
  // x, cos and sin are read by one loop: the program's inputs are x's two halves, cos, sin.
  auto gp = group_program(loaded->graph, plan.groups[0]);
  ASSERT_TRUE(gp.ok()) << gp.error().message();
  EXPECT_EQ(gp->inputs.size(), 4u);
  EXPECT_EQ(gp->program.outputs.size(), 2u);
}

TEST(Fusion, NaiveModeAndBackendsWithoutGroupsFormNone) {
  const std::string text = program_text("%x: f32[4, 8]", R"(
  %b: f32[4, 8] = aten.mul.Tensor(%x, 2)
  %c: f32[4, 8] = aten.exp.default(%b)
)",
                                        "%c");
  ir::Program p = parse(text);
  Plan naive = build_plan(p, PlanMode::kNaive, cpu_target());
  EXPECT_TRUE(naive.groups.empty());
  EXPECT_EQ(naive.totals.kernels, naive.totals.steps);
  backend::Target no_groups = cpu_target();
  no_groups.pointwise_classes.clear();
  EXPECT_TRUE(build_plan(p, PlanMode::kPlanned, no_groups).groups.empty());
  // A function the backend does not run in a group keeps its node out of groups.
  backend::Target no_exp = cpu_target();
  no_exp.pointwise_classes[static_cast<size_t>(ir::PointwiseFn::kExp)] = 0;
  EXPECT_TRUE(build_plan(p, PlanMode::kPlanned, no_exp).groups.empty());
  EXPECT_EQ(build_plan(p, PlanMode::kPlanned, cpu_target()).groups.size(), 1u);
}

TEST(Fusion, AViewOfAMemberRunsAfterTheGroupAndItsReaderStartsAnother) {
  ir::Program p = parse(program_text("%x: f32[4, 8]", R"(
  %a: f32[4, 8] = aten.mul.Tensor(%x, 2)
  %t: f32[8, 4] = aten.t.default(%a)
  %b: f32[4, 8] = aten.exp.default(%a)
  %c: f32[8, 4] = aten.neg.default(%t)
  %d: f32[8, 4] = aten.sigmoid.default(%c)
)",
                                     "%b, %d", 2));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"a", "b"}, {"c", "d"}}));
  // a is viewed by t: stored. The order: group 0, then t, then group 1.
  EXPECT_EQ(plan.groups[0].outputs, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].kind, StepKind::kGroup);
  EXPECT_EQ(plan.steps[1].kind, StepKind::kNode);
  EXPECT_EQ(p.graph.nodes()[plan.steps[1].index]->name(), "t");
  EXPECT_EQ(plan.steps[2].kind, StepKind::kGroup);
}

// A rotary embedding's q * cos: alone where it stands (the neg of the other half, of other
// sizes, closes its group), read only by the sum of the later group.
const char* kLoneProducer = R"(
  %y1: f32[4, 1] = aten.slice.Tensor(%y, 1, 0, 1, 1)
  %a: f32[4, 8] = aten.mul.Tensor(%x, %y1)
  %h1: f32[4, 4] = aten.slice.Tensor(%x, 1, 0, 4, 1)
  %h2: f32[4, 4] = aten.slice.Tensor(%x, 1, 4, 8, 1)
  %n: f32[4, 4] = aten.neg.default(%h2)
  %r: f32[4, 8] = aten.cat.default([%n, %h1], -1)
  %b: f32[4, 8] = aten.mul.Tensor(%r, %y1)
  %c: f32[4, 8] = aten.add.Tensor(%a, %b, alpha=1)
)";

TEST(Fusion, ALoneProducerJoinsTheGroupThatReadsItsValue) {
  ir::Program p = parse(program_text("%x: f32[4, 8], %y: f32[4, 2]", kLoneProducer, "%c"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"a", "b", "c"}}));
  EXPECT_EQ(plan.groups[0].outputs, (std::vector<std::string>{"c"}));
  // Read by another node too (here: returned), it stays a kernel of its own.
  ir::Program q = parse(program_text("%x: f32[4, 8], %y: f32[4, 2]", kLoneProducer, "%c, %a", 2));
  EXPECT_EQ(groups_of(q, build_plan(q, PlanMode::kPlanned, cpu_target())), (Names{{"b", "c"}}));
}

// The same, but x is written in place between the lone mul and the group: the mul must read
// x before the write, so it stays where it is.
const char* kLoneProducerBeforeAWrite = R"(signature {
  input %x: user_input
  input %y: user_input
  output 0: user_input_mutation "x"
  output 1: user_output
}
graph(%x: f32[4, 8], %y: f32[4, 2]) {
  %y1: f32[4, 1] = aten.slice.Tensor(%y, 1, 0, 1, 1)
  %a: f32[4, 8] = aten.mul.Tensor(%x, %y1)
  %n: f32[4, 2] = aten.neg.default(%y)
  %x2: f32[4, 8] = aten.slice_scatter.default(%x, %n, 1, 0, 2, 1)
  %b: f32[4, 8] = aten.mul.Tensor(%x2, %y1)
  %c: f32[4, 8] = aten.add.Tensor(%a, %b, alpha=1)
  return (%x2, %c)
}
)";

TEST(Fusion, ALoneProducerStaysBeforeAWriteIntoWhatItReads) {
  ir::Program p = parse(kLoneProducerBeforeAWrite);
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  ASSERT_EQ(plan.writes.size(), 1u);
  EXPECT_EQ(plan.writes[0].strategy, WriteStrategy::kInPlaceState);
  EXPECT_EQ(groups_of(p, plan), (Names{{"b", "c"}}));
}

// An identity view (same sizes and dtype: the same elements) between two members: it joins
// the group and computes nothing; the member after it reads the member before it.
const char* kViewBetweenMembers = R"(
  %a: f32[4, 8] = aten.mul.Tensor(%x, 2)
  %v: f32[4, 8] = aten.view.default(%a, [4, 8])
  %b: f32[4, 8] = aten.exp.default(%v)
)";

TEST(Fusion, AnIdentityViewOfAMemberJoinsTheGroup) {
  ir::Program p = parse(program_text("%x: f32[4, 8]", kViewBetweenMembers, "%b"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"a", "v", "b"}}));
  EXPECT_EQ(plan.groups[0].outputs, std::vector<std::string>{"b"});
  EXPECT_EQ(plan.totals.kernels, 1);
  EXPECT_EQ(placement_of(plan, "a"), nullptr);
  auto gp = group_program(p.graph, plan.groups[0]);
  ASSERT_TRUE(gp.ok()) << gp.error().message();
  EXPECT_EQ(gp->inputs.size(), 1u);  // x only: v is a, not an input
  // Returned, the view runs as a view after the group, which stores a for it.
  ir::Program q = parse(program_text("%x: f32[4, 8]", kViewBetweenMembers, "%b, %v", 2));
  Plan plan_q = build_plan(q, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(q, plan_q), (Names{{"a", "b"}}));
  EXPECT_EQ(plan_q.groups[0].outputs, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(plan_q.steps.size(), 2u);
  EXPECT_EQ(q.graph.nodes()[plan_q.steps[1].index]->name(), "v");
}

// kLoneProducer with the lone product seen through an identity view by the sum.
const char* kLoneProducerThroughAView = R"(
  %y1: f32[4, 1] = aten.slice.Tensor(%y, 1, 0, 1, 1)
  %a: f32[4, 8] = aten.mul.Tensor(%x, %y1)
  %av: f32[4, 8] = aten.view.default(%a, [4, 8])
  %h1: f32[4, 4] = aten.slice.Tensor(%x, 1, 0, 4, 1)
  %h2: f32[4, 4] = aten.slice.Tensor(%x, 1, 4, 8, 1)
  %n: f32[4, 4] = aten.neg.default(%h2)
  %r: f32[4, 8] = aten.cat.default([%n, %h1], -1)
  %b: f32[4, 8] = aten.mul.Tensor(%r, %y1)
  %c: f32[4, 8] = aten.add.Tensor(%av, %b, alpha=1)
)";

TEST(Fusion, ALoneProducerJoinsItsReadersGroupThroughAnIdentityView) {
  const std::string in = "%x: f32[4, 8], %y: f32[4, 2]";
  ir::Program p = parse(program_text(in, kLoneProducerThroughAView, "%c"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"a", "av", "b", "c"}}));
  EXPECT_EQ(plan.groups[0].outputs, std::vector<std::string>{"c"});
  // The view returned too: a is needed as it is, and stays a kernel.
  ir::Program q = parse(program_text(in, kLoneProducerThroughAView, "%c, %av", 2));
  EXPECT_EQ(groups_of(q, build_plan(q, PlanMode::kPlanned, cpu_target())), (Names{{"b", "c"}}));
  // A transpose keeps a square matrix's sizes but moves its elements: not seen through.
  ir::Program t = parse(program_text("%x: f32[4, 4], %y: f32[4, 2]", R"(
  %y1: f32[4, 1] = aten.slice.Tensor(%y, 1, 0, 1, 1)
  %a: f32[4, 4] = aten.mul.Tensor(%x, %y1)
  %at: f32[4, 4] = aten.t.default(%a)
  %n: f32[4, 2] = aten.neg.default(%y)
  %r: f32[4, 4] = aten.cat.default([%n, %n], -1)
  %b: f32[4, 4] = aten.mul.Tensor(%r, %y1)
  %c: f32[4, 4] = aten.add.Tensor(%at, %b, alpha=1)
)",
                                     "%c"));
  EXPECT_EQ(groups_of(t, build_plan(t, PlanMode::kPlanned, cpu_target())), (Names{{"b", "c"}}));
}

TEST(Fusion, ALoneNodeReadOnlyByANodeWithoutOutputsStaysAlone) {
  // The lone reader of `n` is an assertion with no value of its own (once a crash: the
  // reader's output was looked at before whether it has one).
  ir::Program p = parse(program_text("%x: f32[4, 8]", R"(
  %a: f32[4, 8] = aten.abs.default(%x)
  %g: bool[4, 8] = aten.ge.Scalar(%a, 0)
  %any: bool[] = aten.any.dims(%g, None, False)
  %n: bool[] = aten.logical_not.default(%any)
  aten._assert_async.msg(%n, "non-negative") @check
  %m: f32[4, 8] = aten.mul.Tensor(%x, 2)
)",
                                     "%m"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_EQ(groups_of(p, plan), (Names{{"a", "g"}}));
}

// Runs `text` planned (with groups) and naive (op by op) on random inputs x: f32[4, 8] and
// y: f32[4, 2] (not integers: rounding shows) and compares the outputs bit for bit (the
// user outputs; a mutated input is compared through the value the program also returns).
void expect_groups_match_ops(const std::string& text, size_t min_groups) {
  SCOPED_TRACE(text);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  auto random = [&](const Shape& s) {
    Tensor t = Tensor::empty(DType::kFloat32, s).value();
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    return t;
  };
  auto planned = differential::prepare_mode(text, 0), naive = differential::prepare_mode(text, 1);
  ASSERT_TRUE(planned.ok()) << planned.error().message();
  ASSERT_TRUE(naive.ok()) << naive.error().message();
  EXPECT_GE(planned->plan.groups.size(), min_groups);
  EXPECT_TRUE(naive->plan.groups.empty());
  auto s0 = runtime::open_session_state(*planned).value();
  auto s1 = runtime::open_session_state(*naive).value();
  for (int call = 0; call < 2; ++call) {
    runtime::TensorMap inputs = {{"x", random({4, 8})}, {"y", random({4, 2})}};
    // Each plan gets its own copies: a program may write its inputs.
    runtime::TensorMap copies;
    for (const auto& [name, t] : inputs) copies.emplace(name, t.contiguous_copy().value());
    auto a = runtime::execute(*planned, inputs, s0);
    auto b = runtime::execute(*naive, copies, s1);
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    ASSERT_EQ(a->user_outputs.size(), b->user_outputs.size());
    for (size_t i = 0; i < a->user_outputs.size(); ++i)
      EXPECT_TRUE(differential::same_bytes(*a->user_outputs[i], *b->user_outputs[i]))
          << "output " << i << " of call " << call;
  }
}

TEST(FusionExec, GroupsComputeWhatTheOpsComputeOneByOne) {
  const std::string in = "%x: f32[4, 8], %y: f32[4, 2]";
  // Float math, a broadcast operand ([4, 1] of y), Python numbers, two outputs.
  expect_groups_match_ops(program_text(in, R"(
  %y1: f32[4, 1] = aten.slice.Tensor(%y, 1, 0, 1, 1)
  %a: f32[4, 8] = aten.mul.Tensor(%x, %y1)
  %b: f32[4, 8] = aten.sub.Tensor(%a, 0.3, alpha=2)
  %c: f32[4, 8] = aten.silu.default(%b)
  %e: f32[4, 8] = aten.gelu.default(%c, approximate="tanh")
  %f: f32[4, 8] = aten.div.Tensor(%e, %x)
  %g: f32[4, 8] = aten.rsqrt.default(%f)
)",
                                       "%c, %g", 2),
                          1);
  // Casts: through float16 and bfloat16 (each node rounds to its dtype), back to float32.
  expect_groups_match_ops(program_text(in, R"(
  %h: f16[4, 8] = aten._to_copy.default(%x, dtype=f16, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %a: f16[4, 8] = aten.mul.Tensor(%h, 0.1)
  %b: f16[4, 8] = aten.exp.default(%a)
  %c: bf16[4, 8] = aten._to_copy.default(%b, dtype=bf16, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %d: bf16[4, 8] = aten.add.Tensor(%c, %c, alpha=1)
  %e: f32[4, 8] = aten._to_copy.default(%d, dtype=f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %f: f32[4, 8] = aten.tanh.default(%e)
)",
                                       "%f"),
                          1);
  // Integers, comparisons and where: float → int truncation, wrapping arithmetic, bool masks.
  expect_groups_match_ops(program_text(in, R"(
  %s: f32[4, 8] = aten.mul.Tensor(%x, 1000)
  %i: i32[4, 8] = aten._to_copy.default(%s, dtype=i32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %j: i32[4, 8] = aten.mul.Tensor(%i, %i)
  %k: i32[4, 8] = aten.sub.Tensor(%j, 7, alpha=3)
  %m: bool[4, 8] = aten.gt.Scalar(%k, 100)
  %n: f32[4, 8] = aten.where.self(%m, %x, %s)
  %u: u8[4, 8] = aten._to_copy.default(%n, dtype=u8, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
)",
                                       "%n, %u", 2),
                          1);
  // A widened group: [4, 1] members computed again at every element of [4, 8] they
  // broadcast to.
  expect_groups_match_ops(program_text(in, R"(
  %y1: f32[4, 1] = aten.slice.Tensor(%y, 1, 0, 1, 1)
  %y2: f32[4, 1] = aten.abs.default(%y1)
  %a: f32[4, 1] = aten.add.Tensor(%y2, 0.5, alpha=1)
  %b: f32[4, 1] = aten.rsqrt.default(%a)
  %c: f32[4, 8] = aten.mul.Tensor(%x, %b)
  %d: f32[4, 8] = aten.mul.Tensor(%c, 3)
)",
                                       "%d"),
                          1);
  // A lone producer joined to its reader's group; one kept out of it by a write in between.
  expect_groups_match_ops(program_text(in, kLoneProducer, "%c"), 1);
  // Identity views seen through: inside an open group, and by a lone producer's group.
  expect_groups_match_ops(program_text(in, kViewBetweenMembers, "%b"), 1);
  expect_groups_match_ops(program_text(in, kViewBetweenMembers, "%b, %v", 2), 1);
  expect_groups_match_ops(program_text(in, kLoneProducerThroughAView, "%c"), 1);
  expect_groups_match_ops(program_text(in, kLoneProducerThroughAView, "%c, %av", 2), 1);
  expect_groups_match_ops(kLoneProducerBeforeAWrite, 1);
  // A joined producer reads t at the group's step (with_group_reads, plan/build.cc): t's
  // buffer must not go to m, allocated in between, although no node between u and the group
  // reads t.
  const std::string joined = program_text(in, R"(
  %t: f32[4, 8] = aten.cat.default([%x], 0)
  %th: f32[4, 4] = aten.slice.Tensor(%t, 1, 0, 4, 1)
  %a: f32[4, 4] = aten.mul.Tensor(%th, 2)
  %n: f32[4, 2] = aten.neg.default(%y)
  %u: f32[8, 8] = aten.cat.default([%t, %t], 0)
  %m: f32[4, 8] = aten.cat.default([%n, %n, %n, %n], 1)
  %mh: f32[4, 4] = aten.slice.Tensor(%m, 1, 4, 8, 1)
  %b: f32[4, 4] = aten.mul.Tensor(%mh, 5)
  %c: f32[4, 4] = aten.add.Tensor(%a, %b, alpha=1)
)",
                                          "%c, %u", 2);
  EXPECT_EQ(groups_of(parse(joined), build_plan(parse(joined), PlanMode::kPlanned, cpu_target())),
            (Names{{"a", "b", "c"}}));
  expect_groups_match_ops(joined, 1);
}

TEST(FusionExec, AGroupWithANodeThatIsNotPointwiseIsRefusedAtLoad) {
  ir::Program p = parse(program_text("%x: f32[4, 8], %w: f32[8, 8]", R"(
  %a: f32[4, 8] = aten.mm.default(%x, %w)
  %b: f32[4, 8] = aten.mul.Tensor(%a, 2)
  %c: f32[4, 8] = aten.exp.default(%b)
)",
                                     "%c"));
  Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  ASSERT_EQ(plan.groups.size(), 1u);
  plan.groups[0].nodes.insert(plan.groups[0].nodes.begin(), 0);  // the matmul
  plan.steps = {{StepKind::kGroup, 0}};
  auto m = runtime::prepare(std::move(p), runtime::PrepareOptions{}, plan);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(m.error().message(), "plan: group member 'a' (aten.mm.default) is not pointwise");
}

TEST(FusionExec, AMalformedGroupIsRefusedWithItsReason) {
  // What an engine file's plan could name: a node that does not exist, no node at all, a
  // member wider than the group's last (its iteration space), an output narrower than it.
  ir::Program p = parse(program_text("%x: f32[4, 1], %z: f32[4, 8]", R"(
  %b: f32[4, 1] = aten.rsqrt.default(%x)
  %d: f32[4, 8] = aten.mul.Tensor(%z, %b)
)",
                                     "%d"));
  auto error_of = [&](Group g) {
    auto gp = group_program(p.graph, g);
    return gp.ok() ? std::string("ok") : gp.error().message();
  };
  EXPECT_EQ(error_of({{0, 99}, {"d"}}), "plan: a group names node 99");
  EXPECT_EQ(error_of({{}, {}}), "plan: an empty group");
  EXPECT_EQ(error_of({{1, 0}, {"b"}}),
            "plan: group member 'd' has sizes f32[4, 8] outside the group's iteration space");
  EXPECT_EQ(error_of({{0, 1}, {"b", "d"}}),
            "plan: group output 'b' is narrower than the group's iteration space");
  EXPECT_EQ(error_of({{0, 1}, {"d"}}), "ok");  // the widened group itself
}

}  // namespace
}  // namespace splice::plan
