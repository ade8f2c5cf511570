#pragma once
// The JSON form of a Plan, as engine files store it (engine_file.h). Writing is total; reading
// treats the JSON as untrusted (a corrupt or hand-edited engine file) and checks every index,
// name and enum string against the graph the plan belongs to, so the runtime can use a loaded
// plan without re-checking it.
//
//   {"mode": "planned",
//    "writes": [{"node": 7, "strategy": "reuse_base", "src": "producer_writes",
//                "rejected": [{"strategy": "in_place_state", "reason": "..."}],
//                "producer": 5, "dest_value": "slice_scatter", "bytes": 0}],
//    "buffers": [{"bytes": "16*s0", "per_call": false}],
//    "placements": [{"value": "mul", "kind": "buffer", "buffer": 0, "write": -1}],
//    "groups": [{"nodes": [3, 4, 6], "outputs": ["add"]}],
//    "matmuls": [{"node": 2, "kernel": "gemv", "reason": "1 rows <= 16: ..."}],
//    "steps": [{"kind": "node", "index": 0}, {"kind": "base_copy", "index": 0},
//              {"kind": "group", "index": 0}],
//    "totals": {"steps": 9, "kernels": 7, "copy_bytes": 128, "peak_bytes": 4096}}
//
// Symbolic buffer sizes are stored as SymExpr::to_string() text and read back with
// ir::parse_sym_expr.

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "plan/plan.h"
#include "support/error.h"

namespace splice::plan {

nlohmann::json plan_to_json(const Plan& plan);

// [{"node": "linear_concat", "target": "aten.linear.default", "weight": "concat(q.w,k.w)",
//   "parts": [{"node": "linear", "target": "aten.linear.default", "start": 0, "end": 64}, ...]}]
// — the same in an engine file and in `inspect --plan --json`.
nlohmann::json concatenated_json(const std::vector<ir::ConcatenatedMatmul>& concatenated);

// Rebuilds a Plan and checks it against `graph`: node indices in [0, nodes), placements name
// tensor values of the graph (each at most once), buffer and write indices in range, every
// node in exactly one kNode step or in one group (members in program order) run by exactly
// one kGroup step, base copies of existing writes, at most one decision per node, enum
// strings known, buffer sizes parse and use only the graph's symbols. Any violation is
// kBadArchive "engine plan: <what>". Whether a group's members are pointwise ops is checked
// when the runtime rebuilds its program (fusion.h, group_program).
Result<Plan> plan_from_json(const nlohmann::json& json, const ir::Graph& graph);

}  // namespace splice::plan
