// The plan report (see report.h).
#include "plan/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "plan/gemv_epilogue.h"
#include "plan/plan_json.h"

namespace splice::plan {

nlohmann::json plan_report_json(const ir::Program& program, const Plan& plan) {
  const auto& nodes = program.graph.nodes();
  nlohmann::json writes = nlohmann::json::array();
  for (const WriteDecision& d : plan.writes) {
    nlohmann::json rejected = nlohmann::json::array();
    for (const Rejection& r : d.rejected)
      rejected.push_back({{"strategy", r.strategy}, {"reason", r.reason}});
    writes.push_back({{"node", nodes[d.node]->name()},
                      {"target", nodes[d.node]->target()},
                      {"strategy", strategy_name(d.strategy)},
                      {"src", src_mode_name(d.src)},
                      {"rejected", std::move(rejected)},
                      {"bytes", d.bytes}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const Group& g : plan.groups) {
    nlohmann::json members = nlohmann::json::array();
    for (int32_t n : g.nodes) members.push_back(nodes[n]->name());
    groups.push_back(
        {{"nodes", std::move(members)}, {"outputs", g.outputs}, {"kind", group_kind_name(g.kind)}});
  }
  nlohmann::json shared = nlohmann::json::array();
  int64_t shared_nodes = 0;
  for (const ir::SharedComputation& c : plan.shared) {
    shared.push_back({{"node", c.node}, {"target", c.target}, {"duplicates", c.duplicates}});
    shared_nodes += static_cast<int64_t>(c.duplicates.size());
  }
  nlohmann::json matmuls = nlohmann::json::array();
  for (const MatmulDecision& m : plan.matmuls)
    matmuls.push_back({{"node", nodes[m.node]->name()},
                       {"target", nodes[m.node]->target()},
                       {"kernel", m.kernel},
                       {"reason", m.reason}});
  nlohmann::json report = {{"mode", plan_mode_name(plan.mode)},
                           {"backend", plan.backend},
                           {"writes", std::move(writes)},
                           {"groups", std::move(groups)},
                           {"shared", std::move(shared)},
                           {"concatenated", concatenated_json(plan.concatenated)},
                           {"fusion_notes", plan.fusion_notes},
                           {"totals",
                            {{"steps", plan.totals.steps},
                             {"kernels", plan.totals.kernels},
                             {"copy_bytes", plan.totals.copy_bytes},
                             {"peak_bytes", plan.totals.peak_bytes},
                             {"shared_nodes", shared_nodes}}}};
  // Only where the backend chooses between kernels: other plans' JSON stays as it was.
  if (!plan.matmuls.empty()) report["matmuls"] = std::move(matmuls);
  return report;
}

std::string plan_report_text(const ir::Program& program, const Plan& plan) {
  const auto& nodes = program.graph.nodes();
  std::string out = fmt::format("# plan ({} mode, {} backend): {} write(s)\n",
                                plan_mode_name(plan.mode), plan.backend, plan.writes.size());
  for (const WriteDecision& d : plan.writes) {
    const ir::Node& node = *nodes[d.node];
    out += fmt::format("{} ({})\n  {} + {}, {} bytes\n", node.name(), node.target(),
                       strategy_name(d.strategy), src_mode_name(d.src), d.bytes);
    if (d.src == SrcMode::kProducerWrites && d.producer >= 0)
      out +=
          fmt::format("  src is stored into the destination by '{}'\n", nodes[d.producer]->name());
    for (const Rejection& r : d.rejected)
      out += fmt::format("  not {}: {}\n", r.strategy, r.reason);
  }
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const Group& g = plan.groups[i];
    std::string members, outputs;
    for (int32_t n : g.nodes)
      members += fmt::format("{}{} ({})", members.empty() ? "" : ", ", nodes[n]->name(),
                             nodes[n]->target());
    for (const std::string& o : g.outputs) outputs += (outputs.empty() ? "" : ", ") + o;
    if (g.kind == GroupKind::kRmsNorm) {
      out += fmt::format(
          "group {}: RMSNorm as one row kernel ({} ops: the sum of squares, rsqrt, the weight "
          "and casts{}), storing {}\n  {}\n",
          i, g.nodes.size(), g.outputs.size() > 1 ? ", after the residual add it also stores" : "",
          outputs, members);
    } else if (g.kind == GroupKind::kGemvEpilogue) {
      auto of = gemv_epilogue_of(program.graph, g);
      std::string parts;
      if (of.ok() && !of->prologue.nodes.empty())
        parts += fmt::format(", after an RMSNorm of {} ops it applies as it reads x",
                             of->prologue.nodes.size());
      if (of.ok() && !of->pointwise.nodes.empty())
        parts += fmt::format(", with {} pointwise ops as its epilogue",
                             of->pointwise.nodes.size() + of->slices.size());
      out += fmt::format("group {}: GEMV '{}' as one kernel{}, storing {}\n  {}\n", i,
                         of.ok() ? nodes[of->product]->name() : "?", parts, outputs, members);
    } else {
      out += fmt::format("group {}: {} pointwise ops as one loop nest, storing {}\n  {}\n", i,
                         g.nodes.size(), outputs, members);
    }
  }
  if (!plan.concatenated.empty()) {
    out +=
        "concatenated (products of one input over their weights joined; "
        "concat_sibling_matmuls):\n";
    for (const ir::ConcatenatedMatmul& c : plan.concatenated) {
      std::vector<std::string> parts;
      for (const ir::ConcatenatedMatmul::Part& p : c.parts)
        parts.push_back(fmt::format("{} [{}, {})", p.node, p.start, p.end));
      out += fmt::format("  {} ({}): {}\n", c.node, c.target, fmt::join(parts, ", "));
    }
  }
  if (!plan.shared.empty()) {
    // By op: "aten.linear.default: 160 computed once (kept 'linear_12', ...)".
    std::map<std::string, std::pair<int64_t, std::vector<std::string>>> by_target;
    for (const ir::SharedComputation& c : plan.shared) {
      auto& [count, kept] = by_target[c.target];
      count += static_cast<int64_t>(c.duplicates.size());
      kept.push_back(c.node);
    }
    out += "shared (identical computations done once; share_identical_computations):\n";
    for (const auto& [target, entry] : by_target) {
      const auto& [count, kept] = entry;
      out += fmt::format(
          "  {}: {} repeat(s) dropped, {} node(s) kept: {}{}\n", target, count, kept.size(),
          fmt::join(kept.begin(), kept.begin() + std::min<size_t>(kept.size(), 4), ", "),
          kept.size() > 4 ? ", ..." : "");
    }
  }
  for (const std::string& note : plan.fusion_notes) out += fmt::format("not fused: {}\n", note);
  for (const MatmulDecision& m : plan.matmuls)
    out += fmt::format("matmul {} ({}): {}, {}\n", nodes[m.node]->name(), nodes[m.node]->target(),
                       m.kernel, m.reason);
  int64_t pooled = 0, per_call = 0;
  for (const Buffer& b : plan.buffers) (b.per_call ? per_call : pooled) += 1;
  out += fmt::format(
      "totals: {} steps, {} kernels, {} bytes copied, peak {} bytes of intermediates; {} planned "
      "buffer(s) reused across calls, {} per call\n",
      plan.totals.steps, plan.totals.kernels, plan.totals.copy_bytes, plan.totals.peak_bytes,
      pooled, per_call);
  return out;
}

}  // namespace splice::plan
