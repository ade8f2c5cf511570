// Graph bookkeeping: owning values and nodes, program order, uses and replacement.
#include "ir/graph.h"

#include <algorithm>

#include "ir/ops.h"

namespace splice::ir {

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return "Tensor";
    case ValueKind::kSymInt:
      return "SymInt";
    case ValueKind::kSymBool:
      return "SymBool";
    case ValueKind::kSymFloat:
      return "SymFloat";
  }
  return "?";
}

std::string TensorType::to_string() const {
  std::string s(dtype_name(dtype));
  s += "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += sizes[i].to_string();
  }
  return s + "]";
}

const std::string& Node::target() const { return op_->target; }
OpId Node::op_id() const { return op_->id; }

size_t Node::arg_index(std::string_view name) const {
  auto i = op_->find_arg(name);
  SPLICE_ASSERT(i.has_value());
  return *i;
}

namespace {
// Calls f(Value*&) for every value slot of an argument.
template <typename F>
void for_each_value(Arg& arg, F&& f) {
  if (auto* v = std::get_if<Value*>(&arg.data)) {
    f(*v);
  } else if (auto* list = std::get_if<std::vector<Value*>>(&arg.data)) {
    for (auto& e : *list) f(e);
  } else if (auto* ints = std::get_if<std::vector<SymIntArg>>(&arg.data)) {
    for (auto& e : *ints)
      if (auto* ev = std::get_if<Value*>(&e)) f(*ev);
  }
}
}  // namespace

std::vector<Value*> Node::operands() const {
  std::vector<Value*> result;
  for (const Arg& a : args_) {
    for_each_value(const_cast<Arg&>(a), [&](Value*& v) {
      if (v != nullptr) result.push_back(v);
    });
  }
  return result;
}

Value* Graph::add_value(std::string name, ValueKind kind) {
  values_.push_back(std::make_unique<Value>(std::move(name), kind));
  Value* v = values_.back().get();
  by_name_.try_emplace(v->name(), v);  // the first value of a name is the one found
  return v;
}

Node* Graph::add_node(const OpSchema* op, std::string name) {
  return insert_node(nullptr, op, std::move(name));
}

Node* Graph::insert_node(const Node* before, const OpSchema* op, std::string name) {
  auto node = std::make_unique<Node>(op, std::move(name));
  Node* raw = node.get();
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node>& n) { return n.get() == before; });
  nodes_.insert(it, std::move(node));
  return raw;
}

void Graph::erase_node(const Node* node) {
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return n.get() == node; });
}

void Graph::replace_all_uses(Value* from, Value* to) {
  for (auto& node : nodes_)
    for (Arg& a : node->args())
      for_each_value(a, [&](Value*& v) {
        if (v == from) v = to;
      });
  for (Arg& a : outputs_)
    for_each_value(a, [&](Value*& v) {
      if (v == from) v = to;
    });
}

namespace {
Value* replacement_of(Value* v, const std::unordered_map<const Value*, Value*>& replacements) {
  for (auto it = replacements.find(v); it != replacements.end(); it = replacements.find(v))
    v = it->second;
  return v;
}
}  // namespace

void Graph::substitute(Node& node, const std::unordered_map<const Value*, Value*>& replacements) {
  if (replacements.empty()) return;
  for (Arg& a : node.args())
    for_each_value(a, [&](Value*& v) { v = replacement_of(v, replacements); });
}

void Graph::substitute_outputs(const std::unordered_map<const Value*, Value*>& replacements) {
  if (replacements.empty()) return;
  for (Arg& a : outputs_)
    for_each_value(a, [&](Value*& v) { v = replacement_of(v, replacements); });
}

void Graph::erase_nodes(const std::unordered_set<const Node*>& dead) {
  if (dead.empty()) return;
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) { return dead.count(n.get()) > 0; });
}

Value* Graph::find_value(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::users(const Value* v) const {
  std::vector<Node*> result;
  // Visits the arguments in place rather than through operands(): this scan runs for every
  // node of the program, and a vector per node was most of its cost on 20k-node programs.
  for (const auto& node : nodes_) {
    bool reads = false;
    for (const Arg& a : node->args())
      for_each_value(const_cast<Arg&>(a), [&](Value*& operand) { reads |= operand == v; });
    if (reads) result.push_back(node.get());
  }
  return result;
}

std::string Graph::unique_name(const std::string& base) const {
  if (find_value(base) == nullptr) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (find_value(candidate) == nullptr) return candidate;
  }
}

}  // namespace splice::ir
