// How a program is planned, shared by the public API (LoadOptions::plan_mode) and the planner
// (src/plan), so the two never need translating.
#pragma once

namespace splice {

// docs/planning.md. kNaive is the baseline for tests and benchmarks: every write copies its base
// then copies src in, and no buffer is reused.
enum class PlanMode {
  kPlanned,  // the write planner and buffer reuse
  kNaive,    // baseline: every write copy_then_write + copied, no buffer reuse
};

}  // namespace splice
