#pragma once
// Inlining of the grad-mode regions of the training IR. `torch.export.export` keeps a
// `with torch.no_grad():` block (or a function decorated with it: M2M100's and Marian's
// sinusoidal position embeddings) as the higher-order op
// `higher_order.wrap_with_set_grad_enabled(enabled, subgraph, *operands)` whose outputs are the
// subgraph's; `run_decompositions()` inlines it. Grad mode decides only what autograd records,
// never a value, so splice inlines it too, before import: the subgraph's nodes take the op's
// place, its inputs bound to the op's operands and its outputs given the op's output names
// (through aten.alias nodes). Every other higher-order op (cond, map, while_loop, autocast,
// which does change dtypes) is left for the importer to refuse by name.
#include "frontend/pt2/schema.h"
#include "support/error.h"

namespace splice::pt2 {

inline constexpr std::string_view kSetGradEnabledTarget =
    "torch.ops.higher_order.wrap_with_set_grad_enabled";

// Replaces every wrap_with_set_grad_enabled node of `graph` (nested ones too) by its subgraph.
// Errors (kBadArchive) name the node: a subgraph whose inputs or outputs do not match the op's,
// or whose value names collide with the program's.
Result<void> inline_grad_mode_regions(Graph& graph);

}  // namespace splice::pt2
