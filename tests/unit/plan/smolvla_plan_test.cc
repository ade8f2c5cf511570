// SmolVLA's rotary embeddings, as splice plans them (issue 36): lerobot's apply_rope writes each
// half of the rotated q and k into an empty_like buffer (copy_ into slices; slice_scatter after
// run_decompositions()), 544 writes in the full model, the scatters of the TensorRT result splice
// starts from. Every one of them must be planned without a scatter and without a copy: its
// producer stores straight into its slice of a buffer nobody else reads. Checked on the tiny
// model the cases commit (bench/smolvla/generate.py --size tiny: every structure of the full
// model, 2 VLM and 2 expert layers, the 10 flow-matching steps), both forms and both dtype
// layouts, with a plan that needs no GPU. Also: the prefix keys and values each step
// re-projects are projected once (issue 36 item 4), and its written-out attention runs fused
// (item 3).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "compiler/driver.h"
#include "plan/build.h"
#include "tests/test_backends.h"

namespace splice::plan {
namespace {

namespace fs = std::filesystem;
using splice::testing::cpu_target;

const fs::path kCases = fs::path(SPLICE_SOURCE_DIR) / "tests/cases";

class SmolVlaPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(SmolVlaPlan, EveryRotaryHalfWriteIsStoredByItsProducerWithoutACopy) {
  const fs::path pt2 = kCases / GetParam() / "model.pt2";
  auto program = compiler::load_program(pt2.string());
  ASSERT_TRUE(program.ok()) << pt2 << ": " << program.error().message();
  const Plan plan = build_plan(*program, PlanMode::kPlanned, cpu_target());
  const auto& nodes = program->graph.nodes();
  // Every write of this program is a rotary half (2 VLM layers' q and k once, the expert's
  // in each of the 10 steps): 68 in the tiny model.
  EXPECT_EQ(plan.writes.size(), 68u);
  for (const WriteDecision& w : plan.writes) {
    SCOPED_TRACE(nodes[w.node]->name());
    EXPECT_EQ(nodes[w.node]->target(), "aten.slice_scatter.default");
    EXPECT_EQ(w.strategy, WriteStrategy::kReuseBase);
    EXPECT_EQ(w.src, SrcMode::kProducerWrites);
    EXPECT_GE(w.producer, 0);
    EXPECT_EQ(w.bytes, 0);
  }
}

// The expert's cross-attention layer projects the VLM's prefix keys and values through its own
// k_proj and v_proj in each of the 10 steps, the same inputs every time:
// share_identical_computations keeps one projection of each (2 matmuls) and drops the other
// 9 x 2.
TEST_P(SmolVlaPlan, PrefixKeysAndValuesAreProjectedOnce) {
  const fs::path pt2 = kCases / GetParam() / "model.pt2";
  auto program = compiler::load_program(pt2.string());
  ASSERT_TRUE(program.ok()) << pt2 << ": " << program.error().message();
  const Plan plan = build_plan(*program, PlanMode::kPlanned, cpu_target());
  size_t kept = 0, dropped = 0;
  for (const ir::SharedComputation& c : plan.shared) {
    if (c.target != "aten.mm.default" && c.target != "aten.linear.default") continue;
    ++kept;
    dropped += c.duplicates.size();
  }
  EXPECT_EQ(kept, 2u);
  EXPECT_EQ(dropped, 18u);
}

// SmolVLA writes its text and expert attention out (matmul, scale, where with finfo.min,
// softmax, cast, matmul; grouped heads repeated by hand): 2 VLM layers once and 2 expert layers
// in each of the 10 steps, 22 in the tiny model. fuse_written_attention makes each one
// scaled_dot_product_attention and read_grouped_kv_heads lets each read its 2 KV heads without
// the repeat (issue 36 item 3); the vision encoder's own SDPA (1 layer) is the 23rd.
TEST_P(SmolVlaPlan, WrittenOutAttentionRunsAsFusedAttentionOverGroupedHeads) {
  const fs::path pt2 = kCases / GetParam() / "model.pt2";
  auto program = compiler::load_program(pt2.string());
  ASSERT_TRUE(program.ok()) << pt2 << ": " << program.error().message();
  size_t fused = 0, grouped = 0, softmaxes = 0;
  for (const auto& node : program->graph.nodes()) {
    const ir::OpId op = node->op_id();
    softmaxes += op == ir::OpId::softmax_int || op == ir::OpId::_softmax;
    if (op != ir::OpId::scaled_dot_product_attention) continue;
    ++fused;
    const ir::Arg& gqa = node->arg("enable_gqa");
    grouped += gqa.is<bool>() && gqa.as<bool>();
  }
  // The decomposed form spells the vision encoder's SDPA out as well (scales on q and kᵀ, the
  // "safe softmax" guard of rows with no visible key): fused back into one.
  EXPECT_EQ(fused, 23u);
  EXPECT_EQ(grouped, 22u);
  EXPECT_EQ(softmaxes, 0u);
}

INSTANTIATE_TEST_SUITE_P(TinyModel, SmolVlaPlan,
                         ::testing::Values("smolvla_tiny.train", "smolvla_tiny.default",
                                           "smolvla_tiny_bf16.train", "smolvla_tiny_bf16.default"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace splice::plan
