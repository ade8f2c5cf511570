#pragma once
// Planning as one call: dataflow → write planner → memory planner → the ordered steps and
// their totals (at the archive's example sizes).

#include "ir/program.h"
#include "plan/plan.h"

namespace splice::plan {

Plan build_plan(const ir::Program& program, PlanMode mode);

// Whether the runtime evaluates a node itself (symbolic scalars, asserts, .item(), Python
// operators) instead of calling a kernel.
bool runs_on_host(const ir::Node& node);

}  // namespace splice::plan
