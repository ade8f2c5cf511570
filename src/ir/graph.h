#pragma once
// The IR: a Graph owns Nodes and Values in program order. A Value is produced by one Node (or
// is a graph input) and may be a tensor (dtype + symbolic sizes) or a symbolic scalar
// (SymInt, SymBool, SymFloat). A Node applies one op of the op table (ops.h) to Args listed in
// the op's schema order, every defaulted argument filled in.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "ir/sym.h"
#include "support/dtype.h"

namespace splice::ir {

struct OpSchema;
enum class OpId : uint16_t;
class Node;

enum class ValueKind { kTensor, kSymInt, kSymBool, kSymFloat };
const char* value_kind_name(ValueKind kind);

struct TensorType {
  DType dtype = DType::kFloat32;
  std::vector<SymExpr> sizes;
  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  std::string to_string() const;  // "f32[s0, 8]"
  bool operator==(const TensorType& other) const = default;
};

class Value {
 public:
  Value(std::string name, ValueKind kind) : name_(std::move(name)), kind_(kind) {}

  const std::string& name() const { return name_; }
  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }

  // Tensor values only.
  const TensorType& type() const { return type_; }
  void set_type(TensorType type) { type_ = std::move(type); }

  // SymInt/SymBool values: the expression the archive records for them (for `sym_size(x, 0)`
  // that is `s0`; for `_local_scalar_dense` an unbacked symbol `u0`), when known.
  const std::optional<SymExpr>& expr() const { return expr_; }
  void set_expr(std::optional<SymExpr> e) { expr_ = std::move(e); }

  // The node producing this value; nullptr for graph inputs.
  Node* producer() const { return producer_; }
  void set_producer(Node* n) { producer_ = n; }

 private:
  std::string name_;
  ValueKind kind_;
  TensorType type_;
  std::optional<SymExpr> expr_;
  Node* producer_ = nullptr;
};

// A SymInt argument element: a constant or a SymInt value.
using SymIntArg = std::variant<int64_t, Value*>;

// One argument of a node. Value* covers tensors and symbolic scalars; a null Value* inside
// a tensor list is a None of a `Tensor?[]`.
struct Arg {
  struct None {
    bool operator==(const None&) const = default;
  };
  using Data =
      std::variant<None, bool, int64_t, double, std::string, DType, Value*, std::vector<SymIntArg>,
                   std::vector<Value*>, std::vector<double>, std::vector<bool>>;
  Data data;

  Arg() = default;
  Arg(Data d) : data(std::move(d)) {}  // NOLINT: implicit by design

  bool is_none() const { return std::holds_alternative<None>(data); }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(data);
  }
  template <typename T>
  const T& as() const {
    return std::get<T>(data);
  }
};

class Node {
 public:
  Node(const OpSchema* op, std::string name) : op_(op), name_(std::move(name)) {}

  const OpSchema& op() const { return *op_; }
  const std::string& name() const { return name_; }
  const std::string& target() const;  // "aten.slice_scatter.default"
  OpId op_id() const;                 // OpId::slice_scatter

  std::vector<Arg>& args() { return args_; }
  const std::vector<Arg>& args() const { return args_; }
  const Arg& arg(size_t i) const { return args_[i]; }
  // Index of the schema argument `name`; asserts that it exists.
  size_t arg_index(std::string_view name) const;
  const Arg& arg(std::string_view name) const { return args_[arg_index(name)]; }

  // Outputs in the op's return order; a Tensor[] return is flattened. nullptr marks an
  // output the program does not use.
  std::vector<Value*>& outputs() { return outputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i = 0) const { return outputs_[i]; }

  // Every Value this node reads, in argument order (tensors, list elements, SymInt values).
  std::vector<Value*> operands() const;

 private:
  const OpSchema* op_;
  std::string name_;
  std::vector<Arg> args_;
  std::vector<Value*> outputs_;
};

// A graph output or a graph input slot that holds a literal rather than a value
// (`return 3`, `return None`, a constant input).
using GraphOutput = Arg;

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  Value* add_value(std::string name, ValueKind kind);
  // Appends a node at the end of the program order.
  Node* add_node(const OpSchema* op, std::string name);
  // Inserts a node before `before` (nullptr: at the end).
  Node* insert_node(const Node* before, const OpSchema* op, std::string name);
  void erase_node(const Node* node);
  // Replaces every use of `from` (node arguments and graph outputs) by `to`.
  void replace_all_uses(Value* from, Value* to);
  // Many replacements at once, for a pass that walks the program in order: `substitute` makes
  // one node read replacements[v] wherever it read v (a replacement that is itself replaced is
  // followed), `substitute_outputs` does the same for the graph outputs. A walk that
  // substitutes each node before it looks at it, and the outputs at the end, has replaced all
  // uses — in one sweep rather than a sweep per replaced value (SmolVLA's 23k-node program
  // drops thousands of duplicates).
  static void substitute(Node& node, const std::unordered_map<const Value*, Value*>& replacements);
  void substitute_outputs(const std::unordered_map<const Value*, Value*>& replacements);
  // Erases every node of `dead` in one sweep.
  void erase_nodes(const std::unordered_set<const Node*>& dead);

  std::vector<Value*>& inputs() { return inputs_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  std::vector<GraphOutput>& outputs() { return outputs_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  Value* find_value(std::string_view name) const;
  // Nodes that read `v`, in program order.
  std::vector<Node*> users(const Value* v) const;
  // A fresh value name starting with `base` ("base", "base_1", ...).
  std::string unique_name(const std::string& base) const;

 private:
  std::vector<std::unique_ptr<Value>> values_;
  // Values by name, for find_value and unique_name: a pass that inserts hundreds of nodes into
  // a 20k-node program (SmolVLA) would otherwise scan every value per candidate name. Values
  // are never removed and never renamed, so the index only grows with add_value.
  std::unordered_map<std::string, Value*> by_name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<GraphOutput> outputs_;
};

}  // namespace splice::ir
