// Planning as one call (see build.h).
#include "plan/build.h"

#include <map>

#include "ir/ops.h"
#include "plan/dataflow.h"
#include "plan/memory_planner.h"
#include "plan/write_planner.h"

namespace splice::plan {

namespace {

// Kernel launches a write's own step makes (base copies of a producer_writes plan are their
// own step).
int64_t write_launches(const WriteDecision& d) {
  switch (d.strategy) {
    case WriteStrategy::kFullOverwrite:
      return 0;
    case WriteStrategy::kCopyThenWrite:
      return d.src == SrcMode::kCopied ? 2 : 0;  // base copy + src copy
    default:
      return d.src == SrcMode::kCopied ? 1 : 0;
  }
}

}  // namespace

Plan build_plan(const ir::Program& program, PlanMode mode, const backend::Target& target) {
  const DataFlow df = analyse(program, target);
  WritePlanResult wp = plan_writes(df, mode);
  MemoryPlan mem = plan_memory(df, wp, mode);

  Plan plan;
  plan.mode = mode;
  plan.backend = target.name;
  plan.buffers = std::move(mem.buffers);
  plan.placements = std::move(mem.placements);
  plan.totals.peak_bytes = mem.peak_bytes;

  // A copy_then_write whose producer stores into the new buffer copies the base just before.
  std::map<int, std::vector<int32_t>> base_copies;  // producer position → decisions
  for (size_t i = 0; i < wp.writes.size(); ++i) {
    const WriteDecision& d = wp.writes[i];
    if (d.strategy == WriteStrategy::kCopyThenWrite && d.src == SrcMode::kProducerWrites)
      base_copies[d.producer].push_back(static_cast<int32_t>(i));
  }
  std::unordered_map<std::string, bool> in_buffer;
  for (const Placement& p : plan.placements)
    if (p.kind == PlacementKind::kBuffer) in_buffer[p.value] = true;

  const auto& nodes = program.graph.nodes();
  Totals& t = plan.totals;
  for (int pos = 0; pos < df.end; ++pos) {
    for (int32_t d : base_copies[pos]) {
      plan.steps.push_back({StepKind::kBaseCopy, d});
      t.steps += 1;
    }
    plan.steps.push_back({StepKind::kNode, pos});
    const ir::Node& node = *nodes[pos];
    if (wp.decision_at[pos] >= 0) {
      const WriteDecision& d = wp.writes[wp.decision_at[pos]];
      t.steps += write_launches(d);
      t.copy_bytes += d.bytes;
      continue;
    }
    if (node.op().runs_on_host() || node.op().may_view()) continue;
    const ir::Value* out = node.outputs().empty() ? nullptr : node.output(0);
    if (node.op().is_empty_factory() && out != nullptr && in_buffer.count(out->name()))
      continue;  // planned storage: nothing to run
    t.steps += 1;
    if (node.op().is_copy() && out != nullptr) t.copy_bytes += example_bytes(program, *out);
  }
  plan.writes = std::move(wp.writes);
  return plan;
}

}  // namespace splice::plan
