#pragma once
// What `splice inspect --plan` prints: for every write its strategy, how src gets there, the
// strategies refused with their reasons and the bytes it moves; then the plan's totals. The
// JSON form is one object: {"mode", "writes": [{"node", "target", "strategy", "src",
// "rejected": [{"strategy", "reason"}], "bytes"}], "totals": {"steps", "copy_bytes",
// "peak_bytes"}} (bytes at the archive's example sizes).

#include <string>

#include <nlohmann/json.hpp>

#include "ir/program.h"
#include "plan/plan.h"

namespace splice::plan {

nlohmann::json plan_report_json(const ir::Program& program, const Plan& plan);
std::string plan_report_text(const ir::Program& program, const Plan& plan);

}  // namespace splice::plan
