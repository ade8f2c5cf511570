#pragma once
// Planning as one call: dataflow → write planner → memory planner → the ordered steps and
// their totals (at the archive's example sizes).

#include "backends/target.h"
#include "ir/program.h"
#include "plan/plan.h"

namespace splice::plan {

// The plan of `program` for the backend whose capabilities `target` describes.
Plan build_plan(const ir::Program& program, PlanMode mode, const backend::Target& target);

}  // namespace splice::plan
