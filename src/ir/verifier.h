#pragma once
// The IR verifier: runs after the importer and after every pass that changed the graph. It
// checks what later stages rely on without re-checking: every node's op is in the op table with
// one argument per schema argument of a fitting variant; values are defined once, before use,
// by a graph input or an earlier node; output counts and kinds match the op's returns; the
// signature matches the graph; and every node's recorded outputs agree with its op's shape rule
// as far as the symbol ranges decide (type_check.h; conditions they cannot decide pass here,
// and the loader keeps them as run-time checks). Errors are kBadArchive and name the node, op,
// argument and value:
//   node 'add_1' (aten.add.Tensor): argument 'other' expects Tensor, got int

#include "ir/program.h"
#include "ir/sym_bounds.h"
#include "support/error.h"

namespace splice::ir {

Result<void> verify(const Program& program);
// The graph alone: its symbols are taken as unbounded unless `ranges` says otherwise.
Result<void> verify_graph(const Graph& graph);
Result<void> verify_graph(const Graph& graph, const SymRanges& ranges);

}  // namespace splice::ir
