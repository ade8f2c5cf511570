// RMSNorm groups (plan/norm_fusion.h): which chains become one kernel on a backend that runs
// them (Target::fused_rms_norm), with the residual add before them; which do not, each with
// the reason `inspect --plan` prints; that a backend without the kernel (the CPU) plans as
// before; that the group's kind survives an engine file; and that a backend without the kernel
// refuses such a plan at load.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "plan/build.h"
#include "plan/norm_fusion.h"
#include "plan/plan_json.h"
#include "runtime/executor.h"
#include "tests/test_backends.h"
#include "tests/unit/plan/norm_programs.h"

namespace splice::plan {
namespace {

using splice::testing::norm_program;
using splice::testing::NormProgram;

ir::Program parse(const std::string& text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message();
  return std::move(*program);
}

// The CPU's planning target, as if it ran RMSNorm groups: planning needs no kernel.
backend::Target norm_target() {
  backend::Target t = splice::testing::cpu_target();
  t.fused_rms_norm = true;
  return t;
}

std::vector<std::string> names(const ir::Program& p, const std::vector<int32_t>& nodes) {
  std::vector<std::string> out;
  for (int32_t n : nodes) out.push_back(p.graph.nodes()[n]->name());
  return out;
}

const Group* norm_group(const Plan& plan) {
  for (const Group& g : plan.groups)
    if (g.kind == GroupKind::kRmsNorm) return &g;
  return nullptr;
}

TEST(NormFusion, TheChainWithItsResidualAddIsOneKernelStoringTheSumAndTheNorm) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    ir::Program p = parse(norm_program({.dtype = dtype}));
    Plan plan = build_plan(p, PlanMode::kPlanned, norm_target());
    const Group* g = norm_group(plan);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(names(p, g->nodes),
              (std::vector<std::string>{"a", "xf", "sq", "m", "v", "rs", "y", "yt", "o"}));
    EXPECT_EQ(g->outputs, (std::vector<std::string>{"a", "o"}));
    EXPECT_EQ(plan.totals.kernels, 2);  // the norm, and neg
    EXPECT_TRUE(plan.fusion_notes.empty());
    // The kernel's operands, as the runtime reads them from the group.
    auto chain = rms_norm_of(p.graph, *g);
    ASSERT_TRUE(chain.ok()) << chain.error().message();
    EXPECT_EQ(chain->x->name(), "x");
    EXPECT_EQ(chain->residual->name(), "r");
    EXPECT_EQ(chain->weight->name(), "w");
    EXPECT_EQ(chain->stat, DType::kFloat32);
    EXPECT_EQ(chain->cast, dtype);
    EXPECT_FLOAT_EQ(chain->eps, 1e-5);
  }
  // Without casts (float32, or a float16 model that computes its norm in float16), with the
  // weight first, without the add.
  for (NormProgram np : {NormProgram{.dtype = DType::kFloat32, .stat = DType::kFloat32},
                         NormProgram{.dtype = DType::kFloat16, .stat = DType::kFloat16},
                         NormProgram{.weight_first = true}, NormProgram{.residual = false}}) {
    ir::Program p = parse(norm_program(np));
    Plan plan = build_plan(p, PlanMode::kPlanned, norm_target());
    const Group* g = norm_group(plan);
    ASSERT_NE(g, nullptr) << norm_program(np);
    EXPECT_EQ(plan.totals.kernels, 2);
    auto chain = rms_norm_of(p.graph, *g);
    ASSERT_TRUE(chain.ok()) << chain.error().message();
    EXPECT_EQ(chain->stat, np.stat);
    EXPECT_EQ(chain->residual != nullptr, np.residual);
  }
}

TEST(NormFusion, ABackendWithoutTheKernelPlansAsBefore) {
  ir::Program p = parse(norm_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, splice::testing::cpu_target());
  EXPECT_EQ(norm_group(plan), nullptr);
  EXPECT_TRUE(plan.fusion_notes.empty());
  // Two pointwise groups around the mean (neg joins the second).
  EXPECT_EQ(plan.totals.kernels, 3);
  EXPECT_EQ(norm_group(build_plan(p, PlanMode::kNaive, norm_target())), nullptr);
}

// Each refusal, as inspect --plan prints it.
TEST(NormFusion, AChainThatIsNotAnRmsNormSaysWhy) {
  const std::string base = norm_program({});
  auto note_of = [](const std::string& text) {
    ir::Program p = parse(text);
    Plan plan = build_plan(p, PlanMode::kPlanned, norm_target());
    EXPECT_EQ(norm_group(plan), nullptr) << text;
    return plan.fusion_notes.size() == 1 ? plan.fusion_notes[0] : std::string("(none)");
  };
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string t = base;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  // The squares read by something else too.
  EXPECT_EQ(note_of(edit("  return (%o, %n)", "  return (%o, %sq)")),
            "'m' is not an RMSNorm's mean: 'sq' is needed outside the chain");
  // A mean in another dtype than its input's.
  EXPECT_EQ(note_of(edit("[-1], True, dtype=None", "[-1], True, dtype=f32")),
            "'m' is not an RMSNorm's mean: it names a dtype");
  // A node running between the members.
  EXPECT_EQ(note_of(edit("  %v: f32[3, 1] =",
                         "  %z: f16[3, 64] = aten.neg.default(%x)\n"
                         "  %v: f32[3, 1] =")),
            "'m' is not an RMSNorm's mean: 'z' runs between its members");
  // rsqrt replaced by sqrt.
  EXPECT_EQ(note_of(edit("aten.rsqrt.default", "aten.sqrt.default")),
            "'m' is not an RMSNorm's mean: 'rs' is not rsqrt in f32");
}

TEST(NormFusion, TheGroupKindSurvivesTheEngineFile) {
  ir::Program p = parse(norm_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, norm_target());
  auto back = plan_from_json(plan_to_json(plan), p.graph);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, plan);
  EXPECT_EQ(std::string(group_kind_name(GroupKind::kRmsNorm)), "rms_norm");
}

TEST(NormFusion, ABackendWithoutTheKernelRefusesTheGroupAtLoad) {
  ir::Program p = parse(norm_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, norm_target());
  plan.backend = "cpu";
  auto m = runtime::prepare(std::move(p), runtime::PrepareOptions{}, plan);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(m.error().message(),
            "plan: group 0 is an RMSNorm, which the cpu backend does not run as one kernel");
}

TEST(NormFusion, AGroupThatIsNotTheChainIsRefusedAtLoad) {
  ir::Program p = parse(norm_program({}));
  Plan plan = build_plan(p, PlanMode::kPlanned, norm_target());
  Group& g = plan.groups.at(0);
  ASSERT_EQ(g.kind, GroupKind::kRmsNorm);
  g.nodes.erase(g.nodes.begin());  // without the add, whose value it still names as an output
  auto chain = rms_norm_of(p.graph, g);
  ASSERT_TRUE(chain.ok()) << chain.error().message();  // the chain without the add
  g.nodes.pop_back();                                  // and without the weight's multiply
  chain = rms_norm_of(p.graph, g);
  ASSERT_FALSE(chain.ok());
  EXPECT_EQ(chain.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(chain.error().message(), "plan: RMSNorm group at 'm': its members are not the chain's");
}

}  // namespace
}  // namespace splice::plan
