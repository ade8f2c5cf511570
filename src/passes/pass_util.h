#pragma once
// Helpers shared by the passes: reading constant arguments and static sizes, Python slice
// arithmetic, and small graph edits (insert a node with its schema's defaults, replace a node
// keeping its output values, erase nodes a rewrite left without users). Passes assume a
// verified program: every argument holds a variant its schema allows.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"

namespace splice::passes {

// "node 'slice_scatter' (aten.slice_scatter.default)", the prefix of every pass error.
std::string node_label(const ir::Node& node);

// "[4, s0]".
std::string shape_string(const std::vector<SymExpr>& sizes);

// The tensor value an argument holds, or nullptr (None, a wrapped Python number, a SymInt).
ir::Value* tensor_arg(const ir::Node& node, std::string_view name);

// The constant of an int/SymInt argument; nullopt for None or a symbolic value.
std::optional<int64_t> constant_int(const ir::Arg& arg);

// Size `dim` of `type` when it is a constant.
std::optional<int64_t> static_size(const ir::TensorType& type, int64_t dim);

// Python's dim wrapping: -1 on rank 3 is 2; nullopt when dim is outside [-rank, rank).
std::optional<int64_t> wrap_dim(int64_t dim, int64_t rank);

struct SliceBounds {
  int64_t start = 0;
  int64_t end = 0;
  bool operator==(const SliceBounds&) const = default;
};

// Python slicing of a dim of `size`: a None start is 0 and a None end is `size`; a negative
// bound adds `size`; both are clamped into [0, size] and an end before the start gives an
// empty slice. Examples on size 8: (5, INT64_MAX) → [5, 8); (-3, -1) → [5, 7);
// (-20, 3) → [0, 3); (6, 2) → [6, 6); (None, None) → [0, 8).
SliceBounds python_slice_bounds(std::optional<int64_t> start, std::optional<int64_t> end,
                                int64_t size);

// Elements a slice [start, end) with `step` >= 1 picks: ceil((end - start) / step).
// Example: [0, 8) step 3 → 3 (elements 0, 3, 6); [6, 6) → 0.
int64_t slice_length(const SliceBounds& bounds, int64_t step);

// Whether the program returns `v` at some output position.
bool is_graph_output(const ir::Graph& graph, const ir::Value* v);

// Whether `v` is read by a node or returned.
bool is_used(const ir::Graph& graph, const ir::Value* v);

// The node producing `v` if it applies `target`, else nullptr.
ir::Node* producer_if(const ir::Value* v, std::string_view target);

// Named argument overrides for the node builders below.
using NamedArgs = std::vector<std::pair<std::string_view, ir::Arg>>;

// Inserts `target` (an op of the table) before `before` with `positional` arguments in schema
// order, then `named` ones, every other argument its schema default. Its one output is a new
// tensor value of `type` named after `base_name` (made unique), which also names the node.
ir::Value* insert_tensor_node(ir::Graph& graph, const ir::Node* before, std::string_view target,
                              std::vector<ir::Arg> positional, const NamedArgs& named,
                              ir::TensorType type, const std::string& base_name);

// Replaces `old` by a `target` node at the same place that produces the same output values
// (so uses, graph outputs and the signature stay as they are) and erases `old`. Returns the
// new node.
ir::Node* replace_node(ir::Graph& graph, ir::Node* old, std::string_view target,
                       std::vector<ir::Arg> positional, const NamedArgs& named = {});

// Erases the producer of `v` if none of its outputs is used and it is one of the pure shape,
// factory or comparison ops a write rewrite leaves behind; then the same for the values it
// read. Other ops are kept (they may bind symbols or check assertions). Producers precede
// their users, so a pass walking a node_snapshot has already visited every node erased here.
void erase_dead_producers(ir::Graph& graph, const ir::Value* v);

// The nodes in program order, as a snapshot that survives insertions and erasures.
std::vector<ir::Node*> node_snapshot(const ir::Graph& graph);

}  // namespace splice::passes
