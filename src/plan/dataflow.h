#pragma once
// Dataflow facts the planners share: where each value is defined and read (by position in
// program order), which values are views of which, and what each graph input is (a
// read-only weight, a plain input, or state that the signature says is mutated).
//
// A "read" is a node that touches a value's elements: kernels, writes (base, src and index),
// .item(), and the graph's outputs (read at position `end`, after every node). View ops and
// metadata queries (sym_size) read nothing; a view's own reads count for the viewed value
// (transitive_reads), because they see the same storage.

#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/target.h"
#include "ir/program.h"

namespace splice::plan {

enum class InputRole {
  kReadOnly,  // parameters, constants, buffers the program does not mutate
  kInput,     // a user input the program does not mutate
  kState,     // a buffer or user input the signature says is mutated
};

struct DataFlow {
  const ir::Program* program = nullptr;
  const backend::Target* target = nullptr;  // the backend the plan is made for
  int end = 0;                              // position of the graph outputs: after every node

  std::unordered_map<const ir::Value*, int> def;  // -1 for graph inputs
  std::unordered_map<const ir::Value*, std::vector<int>> reads;
  std::unordered_map<const ir::Value*, std::vector<const ir::Value*>> views;  // value → views
  std::unordered_map<const ir::Value*, const ir::Value*> viewed;              // view → its input
  std::unordered_map<const ir::Value*, InputRole> input_role;
  // For each state input, the graph output value that is its new value.
  std::unordered_map<const ir::Value*, const ir::Value*> mutation_of;

  int def_of(const ir::Value* v) const;
  const std::vector<int>& reads_of(const ir::Value* v) const;
  // Reads of v and of every view of v, transitively, sorted.
  std::vector<int> transitive_reads(const ir::Value* v) const;
  bool is_graph_output(const ir::Value* v) const;
  // The value whose producer would store a write's src: src itself, or v when src is
  // unsqueeze(v, d) and that view is v's only use (the canonical form of a select write,
  // `x[:, i] = v`); `squeeze_dim` receives d, or -1.
  const ir::Value* stored_value(const ir::Value* src, int* squeeze_dim = nullptr) const;
};

DataFlow analyse(const ir::Program& program, const backend::Target& target);

// The tensor operand of a write: its base (self), src (src / values / source).
const ir::Value* write_base(const ir::Node& write);
const ir::Value* write_src(const ir::Node& write);

// Size in bytes of v's type at the archive's example sizes (hints); 0 where a symbol has no
// example value.
int64_t example_bytes(const ir::Program& program, const ir::Value& v);
// The byte size of v's type as an expression over the program's symbols.
SymExpr byte_size_expr(const ir::Value& v);

}  // namespace splice::plan
