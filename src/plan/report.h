#pragma once
// What `splice inspect --plan` prints: for every write its strategy, how src gets there, the
// strategies refused with their reasons and the bytes it moves; every pointwise group (its
// member nodes and the values it stores); then the plan's totals. The JSON form is one
// object: {"mode", "backend", "writes": [{"node", "target", "strategy", "src",
// "rejected": [{"strategy", "reason"}], "bytes"}], "groups": [{"nodes": [node names],
// "outputs": [value names]}], "totals": {"steps", "kernels", "copy_bytes", "peak_bytes"}},
// and on a backend with more than one matmul kernel "matmuls": [{"node", "target", "kernel",
// "reason"}] (plan/matmul_kernels.h)
// (bytes at the archive's example sizes; steps counts every op on its own, kernels the loop
// nests and library calls a call runs, a group being one).

#include <string>

#include <nlohmann/json.hpp>

#include "ir/program.h"
#include "plan/plan.h"

namespace splice::plan {

nlohmann::json plan_report_json(const ir::Program& program, const Plan& plan);
std::string plan_report_text(const ir::Program& program, const Plan& plan);

}  // namespace splice::plan
