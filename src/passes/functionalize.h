#pragma once
// The functionalize pass, and what it knows of the view ops
// (functionalize_views.cc). For every op that returns a view of its input — always (slice,
// select, view, transpose, ...) or only sometimes, as eager decides (reshape when the strides
// allow, contiguous on a contiguous tensor, `to` without a conversion, eval-mode dropout) — it
// says whether the output aliases the input, the output's strides (so later sometimes-views
// decide as eager does), how to take the same view of another base (to regenerate a view from
// a base that was written), and the functional inverse: the base with a new value written
// through the view (slice_scatter, select_scatter, the view back to the base's shape, ...).

#include <optional>
#include <vector>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

// The pass (first in the default pipeline; declared here rather than in pass.h, which every
// pass includes, since only pipeline.cc makes it).
std::unique_ptr<Pass> make_functionalize();

}  // namespace splice::passes

namespace splice::passes::func {

// A tensor's strides in elements, as eager lays it out; nullopt where splice cannot tell
// (a view of a view that eager computes from storage details splice does not model).
using Strides = std::optional<std::vector<SymExpr>>;

// The strides of a new contiguous tensor of `type` (every computed value, every graph input).
std::vector<SymExpr> contiguous_strides(const ir::TensorType& type);

// The permutation a movedim/moveaxis node makes on a tensor of `rank` dims (output dim d is
// input dim perm[d]): the source dims at the destinations, the others in order in the places
// left. The movedim decomposition and the view's strides and inverse share it.
std::vector<int64_t> movedim_perm(const ir::Node& n, int64_t rank);

// What `node` (any op) does to the storage of its first tensor input, given that input's
// strides: kNone for an op that computes a new tensor (or a sometimes-view that copies here);
// kView for an alias, each output's strides listed.
struct ViewOutcome {
  bool aliases = false;
  // A sometimes-view whose choice only the run can make (a reshape of a non-contiguous tensor
  // of symbolic shape): taken as a view, and refused only if a write or a read of a written
  // storage depends on it.
  bool undecided = false;
  std::vector<Strides> strides;  // per output, when aliases
};
Result<ViewOutcome> classify_view(ir::ShapeEnv& env, const ir::Node& node, const Strides& in);

// The first tensor input of a view node: the tensor it views.
ir::Value* view_base(const ir::Node& node);

// The same view as output `out` of `view` applied to `base` (of the view's input type),
// inserted before `before`.
Result<ir::Value*> replay_view(Rewriter& rw, const ir::Node& view, size_t out, ir::Value* base,
                               const ir::Node* before);

// `base` with `src` (of output `out`'s type) written through view `view`: the functional
// inverse of the view, inserted before `before`. A view whose elements share memory (an
// expanded view) cannot be written: eager's error, naming `writer`.
Result<ir::Value*> scatter_view(Rewriter& rw, const ir::Node& view, size_t out, ir::Value* base,
                                ir::Value* src, const ir::Node* before, const ir::Node& writer);

// Whether a tensor with these sizes and strides has elements that share memory (a stride 0
// on a dim longer than 1): eager refuses to write into it.
bool overlaps(ir::ShapeEnv& env, const std::vector<SymExpr>& sizes, const Strides& strides);

}  // namespace splice::passes::func
