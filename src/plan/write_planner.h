#pragma once
// The write planner: for every functional write of a canonical program (slice_scatter,
// select_scatter, index_put, index_copy) it decides where the result lives and how src gets
// there (docs/planning.md). Decisions are made in program order; each candidate strategy is
// tried behind guard clauses, and every failed guard records why, for `inspect --plan`.
//
// It also tracks which values share storage after its decisions ("roots": a buffer with all
// its views and in-place versions) — the memory planner sizes and reuses those.

#include <unordered_map>
#include <vector>

#include "plan/dataflow.h"
#include "plan/plan.h"

namespace splice::plan {

// One storage and what lives in it.
struct Root {
  enum class Kind {
    kInput,         // a user input or weight: never written
    kState,         // a mutated buffer or user input: written only by in_place_state
    kIntermediate,  // made during the call
  };
  Kind kind = Kind::kIntermediate;
  const ir::Value* anchor = nullptr;  // the value that first holds it
  bool writable_input = false;        // kInput that is a (non-mutated) weight, for messages
  std::vector<const ir::Value*> members;
};

struct WritePlanResult {
  std::vector<WriteDecision> writes;  // in program order
  std::vector<Root> roots;
  std::unordered_map<const ir::Value*, int> root_of;
  // Write decision index by node position (-1 for other nodes).
  std::vector<int> decision_at;
};

WritePlanResult plan_writes(const DataFlow& df, PlanMode mode);

// Whether slice/select writes `a` and `b` (of bases of one shape) may touch a common element:
// false only when both cover constant ranges of one dim that do not meet.
bool write_regions_may_overlap(const ir::Node& a, const ir::Node& b);

}  // namespace splice::plan
