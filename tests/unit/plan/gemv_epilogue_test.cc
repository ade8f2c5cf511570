// GEMV-epilogue groups (plan/gemv_epilogue.h): which products join the pointwise group that
// reads them on a backend that runs them (Target::gemv_epilogue) — SiLU·mul over two slices of
// a joined gate/up product, a residual add after a projection, both export forms — which do
// not (a returned product, a GEMM-shaped one, a backend without the kernel), that the group's
// kind survives an engine file, and that a backend without the kernel refuses it at load.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "plan/build.h"
#include "plan/gemv_epilogue.h"
#include "plan/plan_json.h"
#include "runtime/executor.h"
#include "tests/test_backends.h"
#include "tests/unit/plan/gemv_epilogue_programs.h"

namespace splice::plan {
namespace {

using splice::testing::gemv_epilogue_program;
using Kind = splice::testing::GemvEpilogueProgram::Kind;

ir::Program parse(const std::string& text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message() << "\n" << text;
  return std::move(*program);
}

// The CPU's planning target, as if it had GEMV kernels with epilogues: planning needs neither.
backend::Target epilogue_target() {
  backend::Target t = splice::testing::cpu_target();
  t.gemv_max_rows = 16;
  t.gemm_library = "cublaslt";
  t.gemv_epilogue = true;
  t.fused_rms_norm = true;
  return t;
}

std::vector<std::string> names(const ir::Program& p, const std::vector<int32_t>& nodes) {
  std::vector<std::string> out;
  for (int32_t n : nodes) out.push_back(p.graph.nodes()[n]->name());
  return out;
}

const Group* epilogue_group(const Plan& plan) {
  for (const Group& g : plan.groups)
    if (g.kind == GroupKind::kGemvEpilogue) return &g;
  return nullptr;
}

TEST(GemvEpilogue, SiluMulOverTwoSlicesOfOneProductIsOneKernel) {
  ir::Program p = parse(gemv_epilogue_program({}));
  const Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
  const Group* g = epilogue_group(plan);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(names(p, g->nodes), (std::vector<std::string>{"gu", "g", "u", "s", "y"}));
  EXPECT_EQ(g->outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(plan.totals.kernels, 1);
  // The runtime's view: the product, its two slices, and the epilogue.
  auto of = gemv_epilogue_of(p.graph, *g);
  ASSERT_TRUE(of.ok()) << of.error().message();
  EXPECT_EQ(p.graph.nodes()[of->product]->name(), "gu");
  EXPECT_EQ(names(p, of->slices), (std::vector<std::string>{"g", "u"}));
  EXPECT_EQ(names(p, of->pointwise.nodes), (std::vector<std::string>{"s", "y"}));
  const ir::Node& product = *p.graph.nodes()[of->product];
  EXPECT_EQ(product_column(*p.graph.find_value("u"), product), 128);
  EXPECT_EQ(product_column(*p.graph.find_value("gu"), product), 0);
  EXPECT_EQ(product_column(*p.graph.find_value("y"), product), std::nullopt);
  // The product's value is never stored.
  for (const Placement& pl : plan.placements) EXPECT_NE(pl.value, "gu");
}

TEST(GemvEpilogue, AProductJoinsOnlyAGroupWithinTheKernelsOperands) {
  // The SiLU·mul group with its product reads x and the weight and stores y: 3 operands.
  ir::Program p = parse(gemv_epilogue_program({}));
  backend::Target t = epilogue_target();
  t.gemv_epilogue_max_operands = 3;
  EXPECT_NE(epilogue_group(build_plan(p, PlanMode::kPlanned, t)), nullptr);
  t.gemv_epilogue_max_operands = 2;
  const Plan plan = build_plan(p, PlanMode::kPlanned, t);
  EXPECT_EQ(epilogue_group(plan), nullptr);
  EXPECT_EQ(plan.totals.kernels, 2);  // the product, then the SiLU·mul group
}

TEST(GemvEpilogue, AResidualAddAfterAProjectionInBothExportForms) {
  {
    ir::Program p = parse(gemv_epilogue_program({.kind = Kind::kResidual}));
    const Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
    const Group* g = epilogue_group(plan);
    ASSERT_NE(g, nullptr);
    // neg joins too: the group is the add and what reads it.
    EXPECT_EQ(names(p, g->nodes), (std::vector<std::string>{"gu", "h", "y"}));
    EXPECT_EQ(g->outputs, (std::vector<std::string>{"h", "y"}));
    EXPECT_EQ(plan.totals.kernels, 1);
  }
  {
    ir::Program p = parse(gemv_epilogue_program({.kind = Kind::kMm, .dtype = DType::kBFloat16}));
    const Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
    const Group* g = epilogue_group(plan);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(names(p, g->nodes), (std::vector<std::string>{"gu", "h"}));
    EXPECT_EQ(plan.totals.kernels, 1);
  }
}

TEST(GemvEpilogue, ANormBetweenTwoProductsIsTheSecondsPrologueAndItsAddTheFirstsEpilogue) {
  ir::Program p = parse(gemv_epilogue_program({.kind = Kind::kNormBlock}));
  const Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
  ASSERT_EQ(plan.groups.size(), 2u);
  for (const Group& g : plan.groups) EXPECT_EQ(g.kind, GroupKind::kGemvEpilogue);
  const bool first_is_o = p.graph.nodes()[plan.groups[0].nodes.front()]->name() == "o";
  const Group& add = plan.groups[first_is_o ? 0 : 1];
  const Group& mlp = plan.groups[first_is_o ? 1 : 0];
  EXPECT_EQ(names(p, add.nodes), (std::vector<std::string>{"o", "h"}));
  EXPECT_EQ(add.outputs, (std::vector<std::string>{"h"}));
  EXPECT_EQ(names(p, mlp.nodes), (std::vector<std::string>{"hf", "sq", "m", "v", "rs", "yn", "yt",
                                                           "nrm", "gu", "g", "u", "s", "y"}));
  EXPECT_EQ(mlp.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(plan.totals.kernels, 2);
  auto of = gemv_epilogue_of(p.graph, mlp);
  ASSERT_TRUE(of.ok()) << of.error().message();
  EXPECT_EQ(p.graph.nodes()[of->product]->name(), "gu");
  EXPECT_EQ(of->prologue.nodes.size(), 8u);
  // A target without the epilogues keeps the add in the norm's kernel.
  backend::Target norm_only = epilogue_target();
  norm_only.gemv_epilogue = false;
  norm_only.fused_rms_norm = true;
  const Plan before = build_plan(p, PlanMode::kPlanned, norm_only);
  EXPECT_EQ(before.totals.kernels, 4);  // o, the add and norm, gu, silu * mul
}

TEST(GemvEpilogue, ProductsTheGroupMayNotTakeStayTheirOwnKernel) {
  struct Case {
    std::string why;
    splice::testing::GemvEpilogueProgram program;
    backend::Target target;
  };
  backend::Target no_kernel = epilogue_target();
  no_kernel.gemv_epilogue = false;
  for (const Case& c : {Case{"the product is returned", {.returned = true}, epilogue_target()},
                        Case{"32 rows: a GEMM", {.rows = 32}, epilogue_target()},
                        Case{"a backend without the kernel", {}, no_kernel},
                        Case{"the CPU", {}, splice::testing::cpu_target()}}) {
    SCOPED_TRACE(c.why);
    ir::Program p = parse(gemv_epilogue_program(c.program));
    const Plan plan = build_plan(p, PlanMode::kPlanned, c.target);
    EXPECT_EQ(epilogue_group(plan), nullptr);
  }
}

TEST(GemvEpilogue, TheGroupKindSurvivesTheEngineFile) {
  ir::Program p = parse(gemv_epilogue_program({}));
  const Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
  auto back = plan_from_json(plan_to_json(plan), p.graph);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, plan);
  EXPECT_EQ(std::string(group_kind_name(GroupKind::kGemvEpilogue)), "gemv_epilogue");
}

TEST(GemvEpilogue, ABackendWithoutTheKernelRefusesTheGroupAtLoad) {
  ir::Program p = parse(gemv_epilogue_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
  plan.backend = "cpu";
  auto m = runtime::prepare(std::move(p), runtime::PrepareOptions{}, plan);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(m.error().message(),
            "plan: group 0 is a GEMV epilogue, which the cpu backend does not run");
}

TEST(GemvEpilogue, AGroupWithoutItsProductIsRefused) {
  ir::Program p = parse(gemv_epilogue_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
  Group g = *epilogue_group(plan);
  g.nodes.erase(g.nodes.begin());
  auto of = gemv_epilogue_of(p.graph, g);
  ASSERT_FALSE(of.ok());
  EXPECT_EQ(of.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(of.error().message(), "plan: a GEMV-epilogue group has no product");
}

TEST(GemvEpilogue, AGroupOfAProductAloneIsRefused) {
  ir::Program p = parse(gemv_epilogue_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, epilogue_target());
  Group g = *epilogue_group(plan);
  g.nodes.resize(1);  // the product
  auto of = gemv_epilogue_of(p.graph, g);
  ASSERT_FALSE(of.ok());
  EXPECT_EQ(of.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(of.error().message(),
            "plan: GEMV-epilogue group at 'gu' has neither a prologue nor an epilogue");
}

}  // namespace
}  // namespace splice::plan
