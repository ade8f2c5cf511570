#pragma once
// The IR verifier: runs after the importer and after every pass that changed the graph. It
// checks what later stages rely on without re-checking: every node's op is in the op table with
// one argument per schema argument of a fitting variant; values are defined once, before use,
// by a graph input or an earlier node; output counts and kinds match the op's returns; the
// signature matches the graph; and per-op type rules (check_node_types) hold. Errors are
// kBadArchive and name the node, op, argument and value:
//   node 'add_1' (aten.add.Tensor): argument 'other' expects Tensor, got int

#include "ir/program.h"
#include "support/error.h"

namespace splice::ir {

Result<void> verify(const Program& program);
Result<void> verify_graph(const Graph& graph);

// Per-op dtype/shape rules on one node whose arguments already fit the schema (comparisons
// produce bool, scatter-like writes keep self's dtype, slice_scatter's src has self's rank).
// Ops without a rule pass.
Result<void> check_node_types(const Node& node);

}  // namespace splice::ir
