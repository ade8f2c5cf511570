#pragma once
// The memory planner: gives planned storage to the values whose producers can store into it
// (pointwise kernels, copies, empty factories, the new buffer of a copy_then_write), with
// lifetimes from first write to last read of anything sharing the storage, and lets values
// with disjoint lifetimes share a buffer. Sizes are byte-count expressions over the program's
// symbols, evaluated when a call binds them; two values share a buffer when their sizes are
// the same expression (or both constant). Storage whose value leaves the call (an output or
// a new state value) is allocated per call and never shared.
//
// Values produced into a write's destination (producer_writes) get a region placement.
// Everything else is allocated by its kernel (library calls, reductions, attention).

#include <vector>

#include "plan/dataflow.h"
#include "plan/fusion.h"
#include "plan/plan.h"
#include "plan/write_planner.h"

namespace splice::plan {

struct MemoryPlan {
  std::vector<Buffer> buffers;
  std::vector<Placement> placements;
  int64_t peak_bytes = 0;  // at the example sizes
};

// With pointwise groups (`fusion`), a group's outputs are stored by the group from its first
// member's position on, and its other member values get no storage at all; `df` must count
// the group's reads at its last member's position (build.cc does).
MemoryPlan plan_memory(const DataFlow& df, const WritePlanResult& writes, PlanMode mode,
                       const FusionPlan& fusion);

}  // namespace splice::plan
