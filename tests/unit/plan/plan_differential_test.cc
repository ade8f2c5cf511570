// Differential test of the planner: random programs of slice writes, index writes, views,
// clones and pointwise ops over shared bases and a mutated buffer, each run for several calls
// with the planned plan and with the naive plan (every write copies its base: trivially
// correct), which must agree bit for bit on every output, on the state after each call, and
// leave the inputs untouched. The recorded cases check the planner against PyTorch on the
// patterns of write-semantics.md; this one looks for orderings nobody thought to record. The
// generator and the check are shared with the libFuzzer target fuzz_plan_differential
// (write_program_generator.h), which draws the choices from the fuzzer's bytes instead.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "tests/unit/plan/write_program_generator.h"

namespace splice::plan {
namespace {

using namespace differential;

TEST(PlanDifferential, PlannedAndNaivePlansAgreeOnRandomWritePrograms) {
  constexpr int kPrograms = 1000;
  int in_place = 0, placed = 0, state_in_place = 0;
  for (uint32_t seed = 1; seed <= kPrograms; ++seed) {
    const std::string text = ProgramGenerator(seeded_picker(seed)).generate();
    SCOPED_TRACE(fmt::format("seed {}:\n{}", seed, text));
    std::mt19937 rng(seed);
    Plan planned;
    ASSERT_EQ(planned_vs_naive(text, rng, 3, &planned), "");
    for (const auto& d : planned.writes) {
      in_place +=
          d.strategy == WriteStrategy::kReuseBase || d.strategy == WriteStrategy::kInPlaceState;
      placed += d.src == SrcMode::kProducerWrites;
      state_in_place += d.strategy == WriteStrategy::kInPlaceState;
    }
  }
  // The programs must exercise the interesting plans, not only copies.
  EXPECT_GT(in_place, kPrograms / 4);
  EXPECT_GT(placed, kPrograms / 4);
  EXPECT_GT(state_in_place, kPrograms / 20);
}

TEST(PlanDifferential, AProducerOfALaterLinkRunsBeforeItsBaseExists) {
  // Found by the random programs (seed 236): p2 stores into v7's destination at position 2,
  // before v6 (v7's base, the previous link of the in-place chain) exists; the destination is
  // the chain's first base v1, and v6 must not be needed to find it.
  const char* text = R"(signature {
  input %x: user_input
  input %y: user_input
  output 0: user_output
}
graph(%x: f32[4, 8], %y: f32[4, 2]) {
  %v1: f32[4, 8] = aten.clone.default(%x, memory_format=None)
  %p2: f32[4, 2] = aten.mul.Tensor(%y, 2)
  %p4: f32[4, 2] = aten.neg.default(%y)
  %v6: f32[4, 8] = aten.slice_scatter.default(%v1, %p4, 1, 6, 8, 1)
  %v7: f32[4, 8] = aten.slice_scatter.default(%v6, %p2, 1, 2, 4, 1)
  return (%v7)
}
)";
  std::mt19937 rng(236);
  runtime::TensorMap inputs = {{"x", random_tensor(rng, DType::kFloat32, {4, 8})},
                               {"y", random_tensor(rng, DType::kFloat32, {4, 2})}};
  std::array<Tensor, 2> results;
  for (int m = 0; m < 2; ++m) {
    auto model = prepare_mode(text, m);
    ASSERT_TRUE(model.ok()) << model.error().message();
    if (m == 0) {
      ASSERT_EQ(model->plan.writes.size(), 2u);
      EXPECT_EQ(model->plan.writes[1].src, SrcMode::kProducerWrites);
      EXPECT_EQ(model->plan.writes[1].dest_value, "v1");
    }
    detail::SessionState state = runtime::open_session_state(*model).value();
    auto r = runtime::execute(*model, inputs, state);
    ASSERT_TRUE(r.ok()) << r.error().message();
    results[m] = *r->user_outputs[0];
  }
  EXPECT_TRUE(same_bytes(results[0], results[1]));
}

TEST(PlanDifferential, TwoProducersStoringIntoOneRegionStoreInProgramOrder) {
  // Found by fuzz_plan_differential: both negs store straight into column 7 of the mutated
  // buffer; the later write (v7) must win, as in the naive plan.
  const char* text = R"(signature {
  input %b_buf: buffer "buf" persistent
  input %x: user_input
  input %y: user_input
  input %idx: user_input
  output 0: buffer_mutation "buf"
  output 1: user_output
  output 2: user_output
  output 3: user_output
}
graph(%b_buf: f32[4, 8], %x: f32[4, 8], %y: f32[4, 2], %idx: i64[2]) {
  %s0: f32[4] = aten.select.int(%x, 1, 2)
  %p1: f32[4] = aten.neg.default(%s0)
  %u2: f32[4, 1] = aten.unsqueeze.default(%p1, 1)
  %v3: f32[4, 8] = aten.slice_scatter.default(%b_buf, %u2, 1, 7, 8, 1)
  %s4: f32[4] = aten.select.int(%x, 1, 7)
  %p5: f32[4] = aten.neg.default(%s4)
  %u6: f32[4, 1] = aten.unsqueeze.default(%p5, 1)
  %v7: f32[4, 8] = aten.slice_scatter.default(%v3, %u6, 1, 7, 8, 1)
  return (%v7, %y, %y, %v7)
}
)";
  std::mt19937 rng(7);
  EXPECT_EQ(planned_vs_naive(text, rng, 2), "");
}

}  // namespace
}  // namespace splice::plan
