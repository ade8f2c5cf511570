#pragma once
// Pointwise fusion: maximal groups of pointwise ops (arithmetic, activations, casts, copies:
// everything ir/pointwise_lowering.h lowers) between non-fusible ops, each run as one loop
// nest over one iteration space (docs/planning.md, "Pointwise groups").
//
// A node joins the open group when the backend runs its lowered program (Target::
// pointwise_classes), its output has the group's sizes (the same symbolic expressions) and
// every tensor it reads broadcasts to them, it reads no value that must wait for the group
// (below), and it does not read storage the group stores into a write's slice, nor store
// into storage the group reads. Between members, views, host scalar nodes and writes whose
// src a member already stores (producer_writes) may stand: those that do not depend on the
// group run before it, those that do run right after it. An identity view of a member (same
// sizes and dtype: the same elements) is seen through — a member reading it reads the member
// — and joins as a member that computes nothing when only later members read it. Any other
// node closes the group, as does a base copy (a copy_then_write's producer starts a new group). A
// member value that anything outside the group uses (or the graph returns, or a write's destination
// receives) is a group output; the others are never stored. A node whose sizes the group's
// broadcast to widens the group to its sizes when nothing but the group and that node reads the
// members so far: they are computed again at every element they broadcast to and never stored
// (RMSNorm's add, rsqrt and two multiplies are one loop over [.., hidden]). Groups of one node
// stay plain nodes, except one whose value only a later group reads (identity views in between
// seen through), over its iteration space: that node joins the group as its first member when
// nothing running in between writes what it reads (Fuser::absorb_lone_producers).
// Naive mode forms no groups. Before all this, on a backend that runs them
// (Target::fused_rms_norm), RMSNorm chains become groups of kind kRmsNorm (plan/norm_fusion.h).

#include <optional>
#include <vector>

#include "ir/pointwise_lowering.h"
#include "ir/program.h"
#include "plan/dataflow.h"
#include "plan/plan.h"
#include "plan/write_planner.h"

namespace splice::plan {

// One entry of the execution order: graph node `index`, or group `index`.
struct OrderItem {
  bool group = false;
  int32_t index = -1;
};

struct FusionPlan {
  std::vector<Group> groups;
  std::vector<OrderItem> order;    // every node not in a group once, and every group once
  std::vector<int> group_of;       // by node position: its group, or -1
  std::vector<std::string> notes;  // fusions the backend runs that were not made, and why
};

FusionPlan plan_fusion(const DataFlow& df, const WritePlanResult& writes, PlanMode mode);

// The lowering of one node as the planner sees it (dtypes, ranks and constant arguments from
// the graph), or nullopt when the node is not a pointwise op with constant non-tensor
// arguments, one tensor output and at least one tensor input.
std::optional<ir::LoweredPointwise> lower_node(const ir::Node& node);

// A group's program: its members' lowered programs chained (a member reading an earlier
// member's value reads that node; every other tensor is a program input, once per value),
// with one output per group output.
struct GroupProgram {
  ir::PointwiseProgram program;
  std::vector<const ir::Value*> inputs;   // program input i reads this value
  std::vector<const ir::Value*> outputs;  // program output k is this value
  std::vector<SymExpr> sizes;             // the iteration space
};
Result<GroupProgram> group_program(const ir::Graph& graph, const Group& group);

}  // namespace splice::plan
