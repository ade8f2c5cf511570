// concat_sibling_matmuls on real exported programs, through the whole pipeline (issue 35 item
// 2): transformers' Llama layer (the committed hf_llama cases, every form) joins its q/k/v
// projections into one product and gate/up into another; SmolVLA's tiny model joins its VLM
// layers' projections once and its expert's in each of the 10 flow-matching steps over one
// joined weight per projection group. Plans need no GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "compiler/driver.h"
#include "plan/build.h"
#include "tests/test_backends.h"

namespace splice::plan {
namespace {

namespace fs = std::filesystem;
using splice::testing::cpu_target;

const fs::path kCases = fs::path(SPLICE_SOURCE_DIR) / "tests/cases";

Plan plan_of(const std::string& name) {
  const fs::path pt2 = kCases / name / "model.pt2";
  auto program = compiler::load_program(pt2.string());
  EXPECT_TRUE(program.ok()) << pt2 << ": " << program.error().message();
  if (!program.ok()) return Plan{};
  return build_plan(*program, PlanMode::kPlanned, cpu_target());
}

class LlamaConcat : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaConcat, QkvAndGateUpAreOneProductEach) {
  const Plan plan = plan_of(GetParam());
  ASSERT_EQ(plan.concatenated.size(), 2u);
  const ir::ConcatenatedMatmul& qkv = plan.concatenated[0];
  const ir::ConcatenatedMatmul& mlp = plan.concatenated[1];
  ASSERT_EQ(qkv.parts.size(), 3u);
  ASSERT_EQ(mlp.parts.size(), 2u);
  // The training IR's linear, or run_decompositions()' mm of a transposed weight.
  EXPECT_EQ(qkv.target,
            GetParam().ends_with(".default") ? "aten.mm.default" : "aten.linear.default");
  EXPECT_NE(qkv.weight.find("q_proj.weight,"), std::string::npos) << qkv.weight;
  EXPECT_NE(qkv.weight.find("v_proj.weight)"), std::string::npos) << qkv.weight;
  EXPECT_NE(mlp.weight.find("gate_proj.weight,"), std::string::npos) << mlp.weight;
  EXPECT_EQ(qkv.parts[0].start, 0);
  EXPECT_EQ(qkv.parts[1].start, qkv.parts[0].end);
  EXPECT_EQ(qkv.parts[2].start, qkv.parts[1].end);
  EXPECT_EQ(mlp.parts[0].end - mlp.parts[0].start, mlp.parts[1].end - mlp.parts[1].start);
}

INSTANTIATE_TEST_SUITE_P(HfLlama, LlamaConcat,
                         ::testing::Values("hf_llama.train", "hf_llama.keep", "hf_llama.default"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });

// The expert's self-attention q/k/v and both expert layers' gate/up run in each of the 10
// steps: one joined weight each, read by 10 products. The vision layer's q/k/v and each of the
// 2 text layers' q/k/v and gate/up run once.
TEST(SmolVlaConcat, TheExpertsProjectionsAreJoinedOnceForAllTenSteps) {
  for (const char* name : {"smolvla_tiny.train", "smolvla_tiny.default"}) {
    SCOPED_TRACE(name);
    const Plan plan = plan_of(name);
    std::map<std::string, int> products_per_weight;
    for (const ir::ConcatenatedMatmul& c : plan.concatenated) ++products_per_weight[c.weight];
    int once = 0, every_step = 0;
    for (const auto& [weight, n] : products_per_weight) {
      if (n == 1) ++once;
      if (n == 10) ++every_step;
    }
    EXPECT_EQ(once, 5);
    EXPECT_EQ(every_step, 3);
    EXPECT_EQ(plan.concatenated.size(), 35u);
  }
}

}  // namespace
}  // namespace splice::plan
