#pragma once
// Helpers shared by the passes: reading constant arguments and static sizes, Python slice
// arithmetic, and small graph edits (insert a node with its schema's defaults and its rule's
// output types, replace a node keeping its output values, erase nodes a rewrite left without
// users). Passes assume a verified program: every argument holds a variant its schema allows.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/program.h"
#include "ir/shape_rules.h"

namespace splice::passes {

using ir::OpId;

// "node 'slice_scatter' (aten.slice_scatter.default)", the prefix of every pass error.
std::string node_label(const ir::Node& node);

// "[4, s0]".
std::string shape_string(const std::vector<SymExpr>& sizes);

// The tensor value an argument holds, or nullptr (None, a wrapped Python number, a SymInt).
ir::Value* tensor_arg(const ir::Node& node, std::string_view name);

// The constant of an int/SymInt argument; nullopt for None or a symbolic value.
std::optional<int64_t> constant_int(const ir::Arg& arg);

// The number an int or float argument holds (a wrapped Python number); nullopt otherwise
// (None, a tensor, a symbolic value, a bool).
std::optional<double> constant_number(const ir::Arg& arg);

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

// The node producing `v` if it applies `op`, else nullptr.
ir::Node* producer_if(const ir::Value* v, ir::OpId op);

// Named argument overrides for the node builders below.
using NamedArgs = std::vector<std::pair<std::string_view, ir::Arg>>;

// The program a pass rewrites, and the ShapeEnv (ir/shape_env.h) with which the op's shape rule
// types every node the pass creates: passes never compute an output type by hand. A condition
// a new node's rule needs and the symbol ranges cannot decide joins Program::shape_checks, so
// the runtime checks it when the symbols are bound, as it does the archive's.
class Rewriter {
 public:
  explicit Rewriter(ir::Program& program) : program_(program), env_(program) {}

  ir::Program& program() { return program_; }
  ir::Graph& graph() { return program_.graph; }
  ir::ShapeEnv& env() { return env_; }

  // Inserts `target` (an op of the table) before `before` (nullptr: at the end) with
  // `positional` arguments in schema order, then `named` ones, every other argument its schema
  // default. Its outputs are new values of the types the rule gives, named after `base_name`
  // (made unique; the first also names the node). A rule that refuses the arguments is a
  // kInternal error naming the node: the rewrite built something the op does not accept.
  Result<ir::Node*> insert(const ir::Node* before, ir::OpId target, std::vector<ir::Arg> positional,
                           const NamedArgs& named, const std::string& base_name);
  // insert(), returning the node's first output.
  Result<ir::Value*> insert_value(const ir::Node* before, ir::OpId target,
                                  std::vector<ir::Arg> positional, const NamedArgs& named,
                                  const std::string& base_name);

  // Replaces `old` by a `target` node at the same place that produces the same output values
  // (so uses, graph outputs and the signature stay as they are) and erases `old`. The new op's
  // rule must give those values' types (kInternal otherwise). Returns the new node.
  Result<ir::Node*> replace(ir::Node* old, ir::OpId target, std::vector<ir::Arg> positional,
                            const NamedArgs& named = {});

  // The rule's outputs for `node` as it stands (its arguments may have been edited).
  Result<std::vector<ir::OutputType>> infer(const ir::Node& node);

 private:
  // Moves the env's undecided conditions into the program's shape checks.
  void keep_checks();

  ir::Program& program_;
  ir::ShapeEnv env_;
};

// Erases the producer of `v` if none of its outputs is used and it is one of the pure shape,
// factory or comparison ops a write rewrite leaves behind; then the same for the values it
// read. Other ops are kept (they may bind symbols or check assertions). Producers precede
// their users, so a pass walking a node_snapshot has already visited every node erased here.
void erase_dead_producers(ir::Graph& graph, const ir::Value* v);

// _assert_tensor_metadata checks nothing at run time: its shape rule proved the dtype and sizes
// it records when the program was typed (runtime/host_nodes.cc). A rewrite that drops a value
// may drop the asserts on it.
bool is_metadata_assert(const ir::Node& node);

// The one node reading `v` besides metadata asserts, if it reads `v` once and `v` is not
// returned; else nullptr.
ir::Node* only_reader(const ir::Graph& graph, const ir::Value* v);

// Erases `node` and the metadata asserts on its outputs (nothing else may read them).
void erase_with_asserts(ir::Graph& graph, ir::Node* node);

// Views that keep every element's value, only moving or repeating it (transpose, permute,
// unsqueeze, expand, view, reshape): they commute with a dtype cast and with picking heads.
bool is_value_preserving_view(ir::OpId op);

// Erases the producer of `v` while only metadata asserts read it and it is such a view, a
// clone or a `_to_copy`, then the same for its input.
void erase_unread_views(ir::Graph& graph, ir::Value* v);

// Whether `a` computes exactly what `b` computes: the same op on the same arguments (tensors
// and symbols by identity, numbers by value), with outputs of the same types. In a functional
// program that makes their values equal, if the op is deterministic.
bool same_computation(const ir::Node& a, const ir::Node& b);

// The tensors a write uses as its base, directly or through a chain of views of them. Passes
// that would make such a tensor share memory with another value leave it alone: the write
// planner writes into a base nobody reads afterwards in place.
std::set<const ir::Value*> write_bases(const ir::Graph& graph);

// The nodes reading each value, in program order (a value read twice by a node lists it once):
// graph.users for many values from one sweep, valid until the graph changes.
using ReaderIndex = std::unordered_map<const ir::Value*, std::vector<ir::Node*>>;
ReaderIndex reader_index(const ir::Graph& graph);

// The nodes in program order, as a snapshot that survives insertions and erasures.
std::vector<ir::Node*> node_snapshot(const ir::Graph& graph);

}  // namespace splice::passes
