#pragma once
// Plan: what planning decides for one canonical Program, and all the runtime needs besides
// the graph and the weights. It is plain data (no pointers into the graph: nodes by index,
// values by name) so an engine file can store it and a loader can check it.
//
//   writes      one decision per write node (slice_scatter, select_scatter, index_put,
//               index_copy): where its result lives and how src gets there, with the
//               strategies that were rejected and why (`splice inspect --plan`).
//   buffers     the memory plan: storage the runtime allocates, sized by a symbolic byte
//               count evaluated when the symbols are bound; values with disjoint lifetimes
//               share a buffer.
//   placements  values whose storage is planned: a whole buffer, or the destination view of
//               a write (its producer stores straight into the slice).
//   groups      pointwise groups (plan/fusion.h): chains of pointwise ops that run as one loop
//               nest, their intermediates never stored.
//   matmuls     which kernel runs each matrix product and why (plan/matmul_kernels.h), on a
//               backend with more than one (the GPU's GEMV kernels or its GEMM library).
//   steps       execution order: every node once (alone, or in its group's step), plus the
//               base copies that must run before a producer writes into a copied base.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/program.h"
#include "ir/sym.h"
#include "splice/plan_mode.h"

namespace splice::plan {

// The engine file's format version; bump on any change to what the engine stores.
// 4: a group may name identity views among its members (plan/fusion.h).
// 5: a group has a kind: pointwise, or an RMSNorm run as one row kernel (plan/norm_fusion.h).
// 6: the plan lists the computations share_identical_computations shared ("shared").
// 7: the matrix products' kernel choices (matmuls).
// 8: the products concat_sibling_matmuls made one over concatenated weights ("concatenated").
// 9: a group may be a GEMV with its pointwise epilogue (kind gemv_epilogue, plan/gemv_epilogue.h).
inline constexpr uint32_t kPlanFormatVersion = 9;

// One PlanMode for the API and the planner (include/splice/plan_mode.h).
using PlanMode = splice::PlanMode;

// Where a write's result lives, in order of preference (docs/planning.md).
enum class WriteStrategy {
  kInPlaceState,   // the base is mutated state and the result is its new value: write into it
  kFullOverwrite,  // the write covers the whole base: the result is src itself
  kReuseBase,      // nobody reads the base afterwards: write into the base's storage
  kCopyThenWrite,  // the base is still read: copy it once, then write
};

// How src reaches the destination.
enum class SrcMode {
  kProducerWrites,  // src's producer stores straight into the destination view
  kCopied,          // src is computed on its own, then copied (a strided copy or row writes)
};

const char* strategy_name(WriteStrategy s);  // "in_place_state", ...
const char* src_mode_name(SrcMode m);        // "producer_writes", "copied"
const char* plan_mode_name(PlanMode m);      // "planned", "naive"
std::optional<WriteStrategy> parse_strategy(std::string_view name);
std::optional<SrcMode> parse_src_mode(std::string_view name);
std::optional<PlanMode> parse_plan_mode(std::string_view name);

// A strategy (or "producer_writes") that a guard clause refused, and the guard's reason.
struct Rejection {
  std::string strategy;
  std::string reason;
  bool operator==(const Rejection&) const = default;
};

struct WriteDecision {
  int32_t node = -1;  // index of the write in graph.nodes()
  WriteStrategy strategy = WriteStrategy::kCopyThenWrite;
  SrcMode src = SrcMode::kCopied;
  std::vector<Rejection> rejected;
  // producer_writes only: the node that stores src into the destination, and the value whose
  // tensor is the destination's whole view when that producer runs (the base, the first base
  // of a chain of in-place writes, or the write's own result for copy_then_write).
  int32_t producer = -1;
  std::string dest_value;
  // Bytes this write moves beyond what src's producer writes anyway (copies of the base and
  // of src), at the example sizes the archive records for symbolic dims.
  int64_t bytes = 0;
  bool operator==(const WriteDecision&) const = default;
};

struct Buffer {
  SymExpr bytes;  // size in bytes, over the program's symbols
  // Allocated afresh on every call because a value in it outlives the call (an output or a
  // new state value); otherwise the session keeps it and reuses it from call to call.
  bool per_call = false;
  bool operator==(const Buffer&) const = default;
};

enum class PlacementKind {
  kBuffer,  // the value is the whole of `buffer`, contiguous, written by its producer
  kRegion,  // the value is the destination view of write `write` (producer_writes)
};

struct Placement {
  std::string value;  // the value's name in the graph
  PlacementKind kind = PlacementKind::kBuffer;
  int32_t buffer = -1;  // kBuffer
  int32_t write = -1;   // kRegion: index into Plan::writes
  // kRegion: the value is the destination with this dim (of size 1) dropped — it is a select
  // write's value, which the program unsqueezes into src; -1 when the value is src itself.
  int32_t squeeze_dim = -1;
  bool operator==(const Placement&) const = default;
};

enum class StepKind {
  kNode,      // run graph node `index` (a kernel, a view, a write, or a scalar computation)
  kBaseCopy,  // copy the base of write `index` (into Plan::writes) into its new buffer, before
              // the write's producer stores src into it
  kGroup,     // run pointwise group `index` (into Plan::groups) as one loop nest
};

// What a group runs as.
enum class GroupKind {
  kPointwise,     // one PointwiseProgram (plan/fusion.h's group_program)
  kRmsNorm,       // an RMSNorm chain, with the residual add before it, as one row kernel
                  // (plan/norm_fusion.h's rms_norm_of; Backend::run_rms_norm)
  kGemvEpilogue,  // a GEMV product and the pointwise group that reads it, as one kernel
                  // (plan/gemv_epilogue.h's gemv_epilogue_of; Backend::run_gemv_epilogue)
};
const char* group_kind_name(GroupKind k);  // "pointwise", "rms_norm", "gemv_epilogue"
std::optional<GroupKind> parse_group_kind(std::string_view name);

// Pointwise ops (and casts) over one iteration space that run as one loop nest: the backend
// gets one PointwiseProgram (rebuilt from the graph by plan/fusion.h's group_program) and
// stores only `outputs`, each to its placement; the other members' values never exist. An
// RMSNorm group is the same contract with a row reduction inside (plan/norm_fusion.h).
struct Group {
  std::vector<int32_t> nodes;        // the members, graph node indices in program order
  std::vector<std::string> outputs;  // member values used outside the group, in member order
  GroupKind kind = GroupKind::kPointwise;
  bool operator==(const Group&) const = default;
};

// The kernel a matrix product runs: "gemv", or the backend's GEMM library ("cublaslt").
struct MatmulDecision {
  int32_t node = -1;  // index of the product in graph.nodes()
  std::string kernel;
  std::string reason;
  bool operator==(const MatmulDecision&) const = default;
};

struct Step {
  StepKind kind = StepKind::kNode;
  int32_t index = -1;
  bool operator==(const Step&) const = default;
};

// Figures at the example sizes, for reports and tests.
struct Totals {
  int64_t steps = 0;       // kernel launches and library calls with every op run on its own
                           // (views and scalars are free)
  int64_t kernels = 0;     // loop nests and library calls per call: steps, less what the
                           // pointwise groups fuse (a group is one)
  int64_t copy_bytes = 0;  // bytes written by copy steps (base copies, src copies, casts)
  int64_t peak_bytes = 0;  // peak of intermediate buffers (not weights, inputs, outputs, state)
  bool operator==(const Totals&) const = default;
};

struct Plan {
  PlanMode mode = PlanMode::kPlanned;
  std::string backend;  // the backend it is made for (backend::Target::name)
  std::vector<WriteDecision> writes;
  std::vector<Buffer> buffers;
  std::vector<Placement> placements;
  std::vector<Group> groups;
  std::vector<MatmulDecision> matmuls;
  std::vector<Step> steps;
  Totals totals;
  // What the passes computed once instead of several times (from ir::Program::shared), for
  // the report: an engine file keeps it with the plan.
  std::vector<ir::SharedComputation> shared;
  // The products the passes joined over concatenated weights (ir::Program::concatenated), for
  // the report; kept with the plan as `shared` is.
  std::vector<ir::ConcatenatedMatmul> concatenated;
  // Why a fusion the backend could run was not made (an RMSNorm chain whose mean has another
  // reader, ...), one line each, for `inspect --plan`; not stored in an engine file.
  std::vector<std::string> fusion_notes;
  bool operator==(const Plan&) const = default;
};

}  // namespace splice::plan
