// Planning as one call (see build.h).
#include "plan/build.h"

#include <map>

#include "ir/ops.h"
#include "plan/dataflow.h"
#include "plan/fusion.h"
#include "plan/matmul_kernels.h"
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

// df with a group's reads where the group runs: every value a member or a node moved after the
// group reads is read at the group's last member's position, so the memory planner keeps it
// (and never hands its storage to a group output) until the group is done.
DataFlow with_group_reads(const DataFlow& df, const ir::Program& program,
                          const FusionPlan& fusion) {
  if (fusion.groups.empty()) return df;
  DataFlow out = df;
  const auto& nodes = program.graph.nodes();
  auto read_at = [&](const ir::Node& node, int pos) {
    for (const ir::Value* v : node.operands())
      if (v != nullptr && v->is_tensor()) out.reads[v].push_back(pos);
  };
  int last = -1;  // the last member of the latest group in the order
  for (const OrderItem& item : fusion.order) {
    if (item.group) {
      const Group& g = fusion.groups[item.index];
      last = g.nodes.back();
      for (int32_t pos : g.nodes) read_at(*nodes[pos], last);
    } else if (item.index < last) {
      read_at(*nodes[item.index], last);  // moved after the group
    }
  }
  return out;
}

bool all_sizes_constant(const ir::Program& program) {
  auto constant = [](const ir::Value* v) {
    if (v == nullptr || !v->is_tensor()) return true;
    for (const SymExpr& d : v->type().sizes)
      if (!d.is_constant()) return false;
    return true;
  };
  for (const ir::Value* v : program.graph.inputs())
    if (!constant(v)) return false;
  for (const auto& node : program.graph.nodes())
    for (const ir::Value* v : node->outputs())
      if (!constant(v)) return false;
  return true;
}

}  // namespace

Result<void> check_static_peak(const ir::Program& program, const Plan& plan) {
  constexpr int64_t kMaxStaticPeakBytes = int64_t{1} << 44;
  if (plan.totals.peak_bytes <= kMaxStaticPeakBytes || !all_sizes_constant(program))
    return ok_result();
  return make_error(ErrorKind::kBadArchive,
                    "the plan holds {} bytes of intermediates at once, more than splice's limit "
                    "of 2^44 bytes (16 TiB)",
                    plan.totals.peak_bytes);
}

Plan build_plan(const ir::Program& program, PlanMode mode, const backend::Target& target) {
  const DataFlow df = analyse(program, target);
  WritePlanResult wp = plan_writes(df, mode);
  FusionPlan fusion = plan_fusion(df, wp, mode);
  const DataFlow fused = with_group_reads(df, program, fusion);
  MemoryPlan mem = plan_memory(fused, wp, mode, fusion);

  Plan plan;
  plan.mode = mode;
  plan.backend = target.name;
  plan.buffers = std::move(mem.buffers);
  plan.placements = std::move(mem.placements);
  plan.totals.peak_bytes = mem.peak_bytes;
  plan.groups = fusion.groups;
  plan.shared = program.shared;
  plan.concatenated = program.concatenated;
  plan.fusion_notes = fusion.notes;
  plan.matmuls = plan_matmuls(program, target);

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
  // Work one node does when it runs as its own step (0 for views, host nodes, planned empty
  // factories and writes whose producer stored src). copy_bytes counts the program's copy ops
  // whether or not a group fuses them (the figure compares plans across backends).
  auto node_work = [&](int pos) -> int64_t {
    const ir::Node& node = *nodes[pos];
    if (wp.decision_at[pos] >= 0) {
      const WriteDecision& d = wp.writes[wp.decision_at[pos]];
      t.copy_bytes += d.bytes;
      return write_launches(d);
    }
    if (node.op().runs_on_host() || node.op().may_view()) return 0;
    const ir::Value* out = node.outputs().empty() ? nullptr : node.output(0);
    if (node.op().is_empty_factory() && out != nullptr && in_buffer.count(out->name()))
      return 0;  // planned storage: nothing to run
    if (node.op().is_copy() && out != nullptr) t.copy_bytes += example_bytes(program, *out);
    return 1;
  };
  for (const OrderItem& item : fusion.order) {
    if (item.group) {
      const Group& g = fusion.groups[item.index];
      for (int32_t pos : g.nodes) {
        for (int32_t d : base_copies[pos]) {
          plan.steps.push_back({StepKind::kBaseCopy, d});
          t.steps += 1;
          t.kernels += 1;
        }
        t.steps += node_work(pos);
      }
      plan.steps.push_back({StepKind::kGroup, item.index});
      t.kernels += 1;
      continue;
    }
    const int pos = item.index;
    for (int32_t d : base_copies[pos]) {
      plan.steps.push_back({StepKind::kBaseCopy, d});
      t.steps += 1;
      t.kernels += 1;
    }
    plan.steps.push_back({StepKind::kNode, pos});
    const int64_t work = node_work(pos);
    t.steps += work;
    t.kernels += work;
  }
  plan.writes = std::move(wp.writes);
  return plan;
}

}  // namespace splice::plan
