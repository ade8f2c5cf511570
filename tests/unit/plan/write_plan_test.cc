// Plan tests: for the write patterns of write-semantics.md §4–5, the planner's decision (and
// its reasons), and — running the plan on the case's recorded inputs — the bytes each step
// actually writes, so "in place" cannot silently regress to a copy. Outputs are checked
// against PyTorch's recorded values here too (the conformance suite checks every case).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "compiler/driver.h"
#include "ir/parser.h"
#include "plan/build.h"
#include "runtime/executor.h"
#include "tensor/safetensors.h"
#include "tests/conformance/compare.h"
#include "tests/test_backends.h"

namespace splice::plan {

using splice::testing::cpu_target;
namespace {

using runtime::CallStats;

const std::string kCases = std::string(SPLICE_SOURCE_DIR) + "/tests/cases/";

ir::Program load(const std::string& name) {
  auto p = compiler::load_program(kCases + name + "/model.pt2");
  EXPECT_TRUE(p.ok()) << p.error().message();
  return std::move(*p);
}

const WriteDecision& decision(const Plan& plan, const ir::Program& program,
                              const std::string& node) {
  for (const auto& d : plan.writes)
    if (program.graph.nodes()[d.node]->name() == node) return d;
  ADD_FAILURE() << "no write decision for " << node;
  static const WriteDecision kNone;
  return kNone;
}

std::string reason_for(const WriteDecision& d, const std::string& strategy) {
  for (const auto& r : d.rejected)
    if (r.strategy == strategy) return r.reason;
  return "";
}

// The plan of a program written as text IR (the patterns no recorded case isolates).
Plan plan_of(const char* text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message();
  return program.ok() ? build_plan(*program, PlanMode::kPlanned, cpu_target()) : Plan{};
}

// A prepared model of a case and a session state to run it in.
struct Runner {
  detail::ModelImpl model;
  detail::SessionState state;

  Runner(const std::string& name, PlanMode mode) {
    runtime::PrepareOptions options;
    options.mode = mode;
    auto m = runtime::prepare(load(name), options);
    EXPECT_TRUE(m.ok()) << m.error().message();
    model = std::move(*m);
    state = runtime::open_session_state(model).value();
    for (const auto& spec : model.program.signature.inputs)
      if (spec.kind == ir::InputKind::kBuffer)
        state.buffers[spec.target] =
            model.program.weights.at(spec.target).contiguous_copy().value();
  }

  // Runs recorded call k, checks every output against PyTorch's, keeps new state.
  runtime::CallOutputs call(const std::string& name, int k, CallStats* stats) {
    auto inputs =
        read_safetensors(kCases + name + "/call" + std::to_string(k) + ".inputs.safetensors");
    EXPECT_TRUE(inputs.ok());
    runtime::TensorMap in(inputs->begin(), inputs->end());
    auto out = runtime::execute(model, in, state, stats);
    EXPECT_TRUE(out.ok()) << out.error().message();
    auto expected =
        read_safetensors(kCases + name + "/call" + std::to_string(k) + ".outputs.safetensors");
    EXPECT_TRUE(expected.ok());
    for (size_t i = 0; i < out->user_outputs.size(); ++i) {
      auto e = expected->find("output." + std::to_string(i));
      if (e == expected->end() || !out->user_outputs[i]) continue;
      EXPECT_EQ(testing::compare_tensors(e->second, *out->user_outputs[i]), "") << "output " << i;
    }
    for (auto& [fqn, t] : out->new_buffers) state.buffers[fqn] = t;
    return std::move(*out);
  }
};

TEST(WritePlan, RotaryHalvesIntoEmptyLikeAreStoredByTheirProducersAndCopyNothing) {
  const std::string name = "rotary_halves_into_empty_like.default";
  Runner r(name, PlanMode::kPlanned);
  const Plan& plan = r.model.plan;
  for (const char* node : {"slice_scatter", "slice_scatter_1"}) {
    const WriteDecision& d = decision(plan, r.model.program, node);
    EXPECT_EQ(d.strategy, WriteStrategy::kReuseBase) << node;
    EXPECT_EQ(d.src, SrcMode::kProducerWrites) << node;
    EXPECT_EQ(d.bytes, 0) << node;
  }
  EXPECT_EQ(plan.totals.copy_bytes, 0);

  CallStats stats;
  auto out = r.call(name, 0, &stats);
  ASSERT_TRUE(out.user_outputs[0].has_value());
  const Tensor& result = *out.user_outputs[0];
  EXPECT_EQ(stats.copy_bytes(), 0);
  // Each output byte is written exactly once: by sub (first half) and add (second half).
  EXPECT_EQ(stats.bytes_into(result.storage().get()), static_cast<int64_t>(result.nbytes()));
}

TEST(WritePlan, NaivePlanCopiesTheBaseOfEveryWrite) {
  const std::string name = "rotary_halves_into_empty_like.default";
  Runner r(name, PlanMode::kNaive);
  for (const auto& d : r.model.plan.writes) {
    EXPECT_EQ(d.strategy, WriteStrategy::kCopyThenWrite);
    EXPECT_EQ(d.src, SrcMode::kCopied);
    EXPECT_EQ(reason_for(d, "reuse_base"), "naive plan mode");
  }
  CallStats stats;
  auto out = r.call(name, 0, &stats);
  const Tensor& result = *out.user_outputs[0];
  // Two writes, each copying the whole base and its half: 2 × (1 + 0.5) × the output.
  EXPECT_EQ(stats.copy_bytes(), 3 * static_cast<int64_t>(result.nbytes()));
  EXPECT_EQ(r.model.plan.totals.copy_bytes, stats.copy_bytes());
}

TEST(WritePlan, KvCacheUpdateFromAnInputWritesOnlyTheUpdateIntoTheStateInPlace) {
  const std::string name = "kv_cache_reads_old_state.default";
  Runner r(name, PlanMode::kPlanned);
  const WriteDecision& d = decision(r.model.plan, r.model.program, "index_put");
  EXPECT_EQ(d.strategy, WriteStrategy::kInPlaceState);
  EXPECT_EQ(d.src, SrcMode::kCopied);
  EXPECT_EQ(d.bytes, 1 * 2 * 1 * 4 * 4);  // k: f32[1, 2, 1, 4]
  EXPECT_TRUE(r.model.state_written_in_place.count("cache"));

  const Storage* cache = r.state.buffers.at("cache").storage().get();
  for (int k = 0; k < 3; ++k) {
    CallStats stats;
    auto out = r.call(name, k, &stats);
    EXPECT_EQ(stats.copy_bytes(), d.bytes) << "call " << k;
    EXPECT_EQ(stats.bytes_into(cache), d.bytes) << "call " << k;
    // The new state is the same storage, updated where k went.
    EXPECT_EQ(out.new_buffers.at("cache").storage().get(), cache) << "call " << k;
  }
}

TEST(WritePlan, WriteWhoseBaseIsReadLaterCopiesTheBaseOnce) {
  const std::string name = "w_rank2.default";
  Runner r(name, PlanMode::kPlanned);
  const WriteDecision& d = decision(r.model.plan, r.model.program, "slice_scatter");
  EXPECT_EQ(d.strategy, WriteStrategy::kCopyThenWrite);
  EXPECT_NE(reason_for(d, "reuse_base").find("reads the base after the write"), std::string::npos)
      << reason_for(d, "reuse_base");
  CallStats stats;
  r.call(name, 0, &stats);
  int64_t copied = 0;
  int copies = 0;
  for (const auto& s : stats.steps)
    if (s.node == "slice_scatter" && s.kind == "copy") copied += s.bytes, ++copies;
  EXPECT_EQ(copies, 2);  // the base once, then src into its slice
  EXPECT_EQ(copied, d.bytes);
}

TEST(WritePlan, ShiftedSelfCopyComputesFromTheOldValuesThenCopies) {
  // y = x.clone(); y[:, 1:] = y[:, :-1] * 2: mul reads the storage it would write into.
  const std::string name = "w_src_overlaps_dst.default";
  Runner r(name, PlanMode::kPlanned);
  const WriteDecision& d = decision(r.model.plan, r.model.program, "slice_scatter");
  EXPECT_EQ(d.strategy, WriteStrategy::kReuseBase);
  EXPECT_EQ(d.src, SrcMode::kCopied);
  EXPECT_NE(reason_for(d, "producer_writes").find("src overlaps the destination"),
            std::string::npos);
  CallStats stats;
  r.call(name, 0, &stats);  // outputs compared with PyTorch's inside
}

TEST(WritePlan, ProducerWithOtherReadersIsCopiedNotPlaced) {
  const std::string name = "w_producer_with_other_readers.default";
  Runner r(name, PlanMode::kPlanned);
  for (const auto& d : r.model.plan.writes) {
    EXPECT_EQ(d.src, SrcMode::kCopied);
    EXPECT_NE(reason_for(d, "producer_writes").find("src is also read by"), std::string::npos);
  }
  r.call(name, 0, nullptr);
}

TEST(WritePlan, OneValuePlacedTwiceIsNeverStoredByItsProducer) {
  const std::string name = "w_value_placed_twice.default";
  Runner r(name, PlanMode::kPlanned);
  for (const auto& d : r.model.plan.writes) EXPECT_EQ(d.src, SrcMode::kCopied);
  r.call(name, 0, nullptr);
}

TEST(WritePlan, OverlappingWritesInProgramOrderLastWins) {
  const std::string name = "slice_scatter_overlapping_writes.default";
  Runner r(name, PlanMode::kPlanned);
  EXPECT_EQ(decision(r.model.plan, r.model.program, "slice_scatter_1").strategy,
            WriteStrategy::kReuseBase);
  r.call(name, 0, nullptr);
}

TEST(WritePlan, StateReadAfterTheWriteIsNotUpdatedInPlace) {
  // The old cache is returned as well as updated: the update must not touch it.
  const char* text = R"(signature {
  input %b_cache: buffer "cache" persistent
  input %k: user_input
  output 0: buffer_mutation "cache"
  output 1: user_output
}
graph(%b_cache: f32[4, 8], %k: f32[4, 2]) {
  %slice_scatter: f32[4, 8] = aten.slice_scatter.default(%b_cache, %k, 1, 2, 4, 1)
  %mul: f32[4, 8] = aten.mul.Tensor(%b_cache, 2)
  return (%slice_scatter, %mul)
}
)";
  const Plan plan = plan_of(text);
  ASSERT_EQ(plan.writes.size(), 1u);
  EXPECT_EQ(plan.writes[0].strategy, WriteStrategy::kCopyThenWrite);
  EXPECT_NE(reason_for(plan.writes[0], "in_place_state").find("node 'mul' reads the old state"),
            std::string::npos)
      << reason_for(plan.writes[0], "in_place_state");
}

TEST(WritePlan, ProducerBeforeAnOverlappingEarlierWriteIsNotPlaced) {
  // b's producer runs before the first write lands [0, 4); storing b into [2, 6) then would be
  // overwritten by a's copy: the last write must win, so b is copied at its write.
  const char* text = R"(signature {
  input %x: user_input
  input %a: user_input
  output 0: user_output
}
graph(%x: f32[2, 8], %a: f32[2, 4]) {
  %clone: f32[2, 8] = aten.clone.default(%x, memory_format=None)
  %b: f32[2, 4] = aten.mul.Tensor(%a, 3)
  %w1: f32[2, 8] = aten.slice_scatter.default(%clone, %a, 1, 0, 4, 1)
  %w2: f32[2, 8] = aten.slice_scatter.default(%w1, %b, 1, 2, 6, 1)
  return (%w2)
}
)";
  const Plan plan = plan_of(text);
  ASSERT_EQ(plan.writes.size(), 2u);
  EXPECT_EQ(plan.writes[1].src, SrcMode::kCopied);
  EXPECT_NE(reason_for(plan.writes[1], "producer_writes").find("writes the destination between"),
            std::string::npos)
      << reason_for(plan.writes[1], "producer_writes");
}

TEST(WritePlan, DisjointHalvesWithProducersFirstAreBothPlaced) {
  const char* text = R"(signature {
  input %x: user_input
  output 0: user_output
}
graph(%x: f32[2, 8]) {
  %e: f32[2, 8] = aten.empty_like.default(%x, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None)
  %lo: f32[2, 4] = aten.slice.Tensor(%x, 1, 0, 4, 1)
  %hi: f32[2, 4] = aten.slice.Tensor(%x, 1, 4, 8, 1)
  %a: f32[2, 4] = aten.neg.default(%hi)
  %b: f32[2, 4] = aten.mul.Tensor(%lo, 2)
  %w1: f32[2, 8] = aten.slice_scatter.default(%e, %a, 1, 0, 4, 1)
  %w2: f32[2, 8] = aten.slice_scatter.default(%w1, %b, 1, 4, 8, 1)
  return (%w2)
}
)";
  const Plan plan = plan_of(text);
  ASSERT_EQ(plan.writes.size(), 2u);
  for (const auto& d : plan.writes) {
    EXPECT_EQ(d.strategy, WriteStrategy::kReuseBase);
    EXPECT_EQ(d.src, SrcMode::kProducerWrites);
    EXPECT_EQ(d.dest_value, "e");  // the chain's first base holds both halves
  }
  EXPECT_EQ(plan.totals.copy_bytes, 0);
}

TEST(WritePlan, SelectWriteIsStoredByItsValuesProducerThroughTheUnsqueeze) {
  // x[..., -1] = v: canonically slice_scatter(clone, unsqueeze(v_to_i32, 2), 2, 4, 5); the
  // cast stores straight into the last column of the clone.
  const std::string name = "w_select_ellipsis_last.default";
  Runner r(name, PlanMode::kPlanned);
  const WriteDecision& d = decision(r.model.plan, r.model.program, "where");
  EXPECT_EQ(d.strategy, WriteStrategy::kReuseBase);
  EXPECT_EQ(d.src, SrcMode::kProducerWrites);
  EXPECT_EQ(r.model.program.graph.nodes()[d.producer]->name(), "v_to_i32");
  bool squeezed = false;
  for (const auto& p : r.model.plan.placements)
    squeezed |= p.value == "v_to_i32" && p.kind == PlacementKind::kRegion && p.squeeze_dim == 2;
  EXPECT_TRUE(squeezed) << "v_to_i32 is placed in the destination with dim 2 dropped";
  CallStats stats;
  auto out = r.call(name, 0, &stats);
  const Tensor& result = *out.user_outputs[0];
  // The clone (a program copy) writes the whole result, the cast its last column: no more.
  EXPECT_EQ(stats.bytes_into(result.storage().get()),
            static_cast<int64_t>(result.nbytes() + result.nbytes() / 5));
  for (const auto& s : stats.steps) EXPECT_NE(s.node, "where") << "the write itself moves nothing";
}

// Products, softmax, embedding and cat (kStoresIntoContiguousDestination on the CPU) get a
// buffer the session keeps: their kernels store into it, nothing is copied after them, and a
// later call (other input sizes) stores into the same storage again. Before the capability
// their outputs were allocated by the kernel on every call.
TEST(MemoryPlan, ProductsAndSoftmaxStoreIntoBuffersTheSessionKeeps) {
  const std::string name = "hf_llama.default";
  Runner r(name, PlanMode::kPlanned);
  std::set<std::string> placed;
  for (const auto& p : r.model.plan.placements)
    if (p.kind == PlacementKind::kBuffer) placed.insert(p.value);
  std::set<std::string> producers;  // nodes whose output the plan stores into a kept buffer
  for (const auto& node : r.model.program.graph.nodes()) {
    const ir::OpId op = node->op_id();
    if (op != ir::OpId::mm && op != ir::OpId::bmm && op != ir::OpId::_softmax &&
        op != ir::OpId::embedding && op != ir::OpId::scaled_dot_product_attention)
      continue;
    if (placed.count(node->output(0)->name())) producers.insert(node->name());
  }
  // Every product and the embedding of the one-layer model (q/k/v and gate/up are one product
  // each: concat_sibling_matmuls; the attention's two bmms and softmax, as run_decompositions()
  // spells SDPA out, are one scaled_dot_product_attention again: fuse_written_attention).
  EXPECT_GE(producers.size(), 6u);
  {
    // Scores that are also returned keep their bmm and softmax, which get kept buffers too.
    Runner scores("attn_written_scores_returned.default", PlanMode::kPlanned);
    std::set<std::string> kept;
    for (const auto& p : scores.model.plan.placements)
      if (p.kind == PlacementKind::kBuffer) kept.insert(p.value);
    size_t stored = 0;
    for (const auto& node : scores.model.program.graph.nodes()) {
      const ir::OpId op = node->op_id();
      if (op == ir::OpId::bmm || op == ir::OpId::_softmax)
        stored += kept.count(node->output(0)->name());
    }
    EXPECT_EQ(stored, 3u);  // two bmms, one softmax
  }
  CallStats first, second;
  const runtime::CallOutputs out = r.call(name, 0, &first);  // T = 8
  r.call(name, 1, &second);  // T = 5: the same buffers are large enough
  // A buffer that leaves the call as an output (the logits) is the caller's now: the next
  // call stores into a new one.
  std::set<const Storage*> returned;
  for (const auto& t : out.user_outputs)
    if (t) returned.insert(t->storage().get());
  auto storage_of = [](const CallStats& stats, const std::string& node) -> const Storage* {
    for (const auto& s : stats.steps)
      if (s.node == node) {
        EXPECT_EQ(s.kind, "kernel") << node << " was copied after its kernel";
        return s.storage;
      }
    ADD_FAILURE() << "no step for " << node;
    return nullptr;
  };
  for (const std::string& node : producers) {
    const Storage* a = storage_of(first, node);
    const Storage* b = storage_of(second, node);
    EXPECT_NE(a, nullptr);
    if (returned.count(a) == 0) {
      EXPECT_EQ(a, b) << node << " did not store into its kept buffer";
    }
  }
}

}  // namespace
}  // namespace splice::plan
