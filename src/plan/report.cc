// The plan report (see report.h).
#include "plan/report.h"

#include <fmt/format.h>

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
    groups.push_back({{"nodes", std::move(members)}, {"outputs", g.outputs}});
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
                           {"totals",
                            {{"steps", plan.totals.steps},
                             {"kernels", plan.totals.kernels},
                             {"copy_bytes", plan.totals.copy_bytes},
                             {"peak_bytes", plan.totals.peak_bytes}}}};
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
    out += fmt::format("group {}: {} pointwise ops as one loop nest, storing {}\n  {}\n", i,
                       g.nodes.size(), outputs, members);
  }
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
