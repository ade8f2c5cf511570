#pragma once
// Planning as one call: dataflow → write planner → memory planner → the ordered steps and
// their totals (at the archive's example sizes).

#include "backends/target.h"
#include "ir/program.h"
#include "plan/plan.h"

namespace splice::plan {

// The plan of `program` for the backend whose capabilities `target` describes.
Plan build_plan(const ir::Program& program, PlanMode mode, const backend::Target& target);

// For a program whose every tensor has constant sizes, the plan's peak of intermediates is what
// every call needs: one beyond 2^44 bytes (16 TiB; each tensor alone is held to that by the
// verifier) is a kBadArchive error at load and compile, not a failure in the middle of a run. A
// program with symbols is checked when a call binds them (runtime/memory_check.h).
Result<void> check_static_peak(const ir::Program& program, const Plan& plan);

}  // namespace splice::plan
