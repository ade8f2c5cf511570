// Shared pass helpers (pass_util.h): argument and size queries, Python slice arithmetic, and
// the graph edits the write rewrites are made of.
#include "passes/pass_util.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>

#include "ir/ops.h"

namespace splice::passes {

using ir::Arg;
using ir::Graph;
using ir::Node;
using ir::Value;

std::string node_label(const Node& node) {
  return fmt::format("node '{}' ({})", node.name(), node.target());
}

std::string shape_string(const std::vector<SymExpr>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += sizes[i].to_string();
  }
  return s + "]";
}

Value* tensor_arg(const Node& node, std::string_view name) {
  auto index = node.op().find_arg(name);
  if (!index) return nullptr;
  const Arg& a = node.arg(*index);
  if (!a.is<Value*>()) return nullptr;
  Value* v = a.as<Value*>();
  return v != nullptr && v->is_tensor() ? v : nullptr;
}

std::optional<int64_t> constant_int(const Arg& arg) {
  if (arg.is<int64_t>()) return arg.as<int64_t>();
  // A SymInt value whose recorded expression folded to a constant is a constant too.
  if (arg.is<Value*>()) {
    const Value* v = arg.as<Value*>();
    if (v != nullptr && v->kind() == ir::ValueKind::kSymInt && v->expr())
      return v->expr()->constant();
  }
  return std::nullopt;
}

std::optional<double> constant_number(const Arg& arg) {
  if (arg.is<double>()) return arg.as<double>();
  if (arg.is<int64_t>()) return static_cast<double>(arg.as<int64_t>());
  return std::nullopt;
}

std::optional<int64_t> static_size(const ir::TensorType& type, int64_t dim) {
  if (dim < 0 || dim >= type.rank()) return std::nullopt;
  return type.sizes[dim].constant();
}

std::optional<int64_t> wrap_dim(int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank) return std::nullopt;
  return dim < 0 ? dim + rank : dim;
}

SliceBounds python_slice_bounds(std::optional<int64_t> start, std::optional<int64_t> end,
                                int64_t size) {
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(size);
  // size >= 0 and the bound is negative, so adding cannot overflow.
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  return {s, e};
}

int64_t slice_length(const SliceBounds& bounds, int64_t step) {
  const int64_t n = bounds.end - bounds.start;  // in [0, size]: no overflow below
  return n == 0 ? 0 : (n - 1) / step + 1;
}

bool is_graph_output(const Graph& graph, const Value* v) {
  for (const Arg& out : graph.outputs()) {
    if (out.is<Value*>() && out.as<Value*>() == v) return true;
    if (out.is<std::vector<Value*>>()) {
      const auto& list = out.as<std::vector<Value*>>();
      if (std::find(list.begin(), list.end(), v) != list.end()) return true;
    }
  }
  return false;
}

bool is_used(const Graph& graph, const Value* v) {
  return is_graph_output(graph, v) || !graph.users(v).empty();
}

Node* producer_if(const Value* v, ir::OpId target) {
  if (v == nullptr || v->producer() == nullptr) return nullptr;
  return v->producer()->op_id() == target ? v->producer() : nullptr;
}

namespace {

// Fills a full argument list for `op`: positional ones, then named ones, then defaults.
std::vector<Arg> build_args(const ir::OpSchema& op, std::vector<Arg> positional,
                            const NamedArgs& named) {
  SPLICE_ASSERT(positional.size() <= op.args.size());
  std::vector<std::optional<Arg>> slots(op.args.size());
  for (size_t i = 0; i < positional.size(); ++i) slots[i] = std::move(positional[i]);
  for (const auto& [name, value] : named) {
    auto index = op.find_arg(name);
    SPLICE_ASSERT(index.has_value());
    slots[*index] = value;
  }
  std::vector<Arg> args;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i]) {
      SPLICE_ASSERT(op.args[i].default_value.has_value());
      slots[i] = *op.args[i].default_value;
    }
    args.push_back(std::move(*slots[i]));
  }
  return args;
}

const ir::OpSchema* op_or_die(ir::OpId target) { return &ir::op_schema(target); }

// Ops a write rewrite can orphan and that have no effect besides their result. Ops that bind
// symbols (_local_scalar_dense, sym_size) or check things are deliberately absent.
bool is_erasable(const Node& node) {
  static const std::set<ir::OpId> kPure = {
      OpId::slice_Tensor, OpId::select_int,        OpId::view,      OpId::reshape,
      OpId::_unsafe_view, OpId::unsqueeze,         OpId::expand,    OpId::arange,
      OpId::arange_start, OpId::arange_start_step, OpId::eq_Scalar, OpId::eq_Tensor,
      OpId::copy,         OpId::_to_copy,          OpId::clone,
  };
  return kPure.count(node.op_id()) > 0;
}

}  // namespace

Result<Node*> Rewriter::insert(const Node* before, ir::OpId target, std::vector<Arg> positional,
                               const NamedArgs& named, const std::string& base_name) {
  const ir::OpSchema* op = op_or_die(target);
  Graph& g = graph();
  const std::string name = g.unique_name(base_name);
  Node* node = g.insert_node(before, op, name);
  node->args() = build_args(*op, std::move(positional), named);
  auto outs = infer(*node);
  if (!outs.ok()) {
    g.erase_node(node);
    return Error(ErrorKind::kInternal,
                 "a rewrite built an invalid node: " + outs.error().message());
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    const ir::OutputType& o = (*outs)[i];
    if (!o.known) {
      node->outputs().push_back(nullptr);
      continue;
    }
    Value* v = g.add_value(i == 0 ? name : g.unique_name(name), o.kind);
    if (o.kind == ir::ValueKind::kTensor) {
      v->set_type(o.tensor);
    } else {
      v->set_expr(o.expr);
    }
    v->set_producer(node);
    node->outputs().push_back(v);
  }
  return node;
}

Result<Value*> Rewriter::insert_value(const Node* before, ir::OpId target,
                                      std::vector<Arg> positional, const NamedArgs& named,
                                      const std::string& base_name) {
  SPLICE_ASSIGN_OR_RETURN(Node * node,
                          insert(before, target, std::move(positional), named, base_name));
  SPLICE_ASSERT(!node->outputs().empty() && node->output(0) != nullptr);
  return node->output(0);
}

Result<Node*> Rewriter::replace(Node* old, ir::OpId target, std::vector<Arg> positional,
                                const NamedArgs& named) {
  const ir::OpSchema* op = op_or_die(target);
  Graph& g = graph();
  Node* node = g.insert_node(old, op, old->name());
  node->args() = build_args(*op, std::move(positional), named);
  node->outputs() = old->outputs();
  auto outs = infer(*node);
  auto fail = [&](std::string why) -> Error {
    node->outputs().clear();
    g.erase_node(node);
    return Error(ErrorKind::kInternal, fmt::format("replacing {} by {}: {}", node_label(*old),
                                                   ir::op_target(target), why));
  };
  if (!outs.ok()) return fail(outs.error().message());
  for (size_t i = 0; i < node->outputs().size(); ++i) {
    const Value* v = node->output(i);
    if (v == nullptr) continue;
    if (i >= outs->size()) return fail("the new op has fewer outputs");
    const ir::OutputType& o = (*outs)[i];
    bool same = o.known && o.kind == v->kind();
    if (same && v->is_tensor()) {
      same = o.tensor.dtype == v->type().dtype && o.tensor.rank() == v->type().rank();
      for (int64_t d = 0; same && d < v->type().rank(); ++d)
        same = env_.provably_equal(o.tensor.sizes[d], v->type().sizes[d]);
    }
    if (!same)
      return fail(fmt::format("the new op gives {} where '{}' is {}",
                              o.kind == ir::ValueKind::kTensor ? o.tensor.to_string() : "a scalar",
                              v->name(), v->is_tensor() ? v->type().to_string() : "a scalar"));
  }
  // An op with more results than the one it replaces (group_norm → native_group_norm) leaves
  // the others unused.
  const bool list_return = std::any_of(op->returns.begin(), op->returns.end(),
                                       [](const ir::ReturnSchema& r) { return r.list; });
  if (!list_return && node->outputs().size() < outs->size()) node->outputs().resize(outs->size());
  for (Value* v : node->outputs())
    if (v != nullptr) v->set_producer(node);
  old->outputs().clear();
  g.erase_node(old);
  return node;
}

Result<std::vector<ir::OutputType>> Rewriter::infer(const Node& node) {
  env_.set_context(node_label(node));
  auto outs = ir::infer_outputs(node, env_);
  keep_checks();
  return outs;
}

void Rewriter::keep_checks() {
  auto& checks = program_.shape_checks;
  for (ir::ShapeCheck& c : env_.take_checks()) {
    // A condition already kept (by the loader's type check, or an earlier rewrite) once.
    const bool known = std::any_of(checks.begin(), checks.end(), [&](const ir::ShapeCheck& k) {
      return k.condition == c.condition;
    });
    if (!known) checks.push_back(std::move(c));
  }
}

void erase_dead_producers(Graph& graph, const Value* v) {
  std::vector<const Value*> work = {v};
  while (!work.empty()) {
    const Value* cur = work.back();
    work.pop_back();
    Node* node = cur == nullptr ? nullptr : cur->producer();
    if (node == nullptr || !is_erasable(*node)) continue;
    bool used = std::any_of(node->outputs().begin(), node->outputs().end(),
                            [&](const Value* out) { return out && is_used(graph, out); });
    if (used) continue;
    std::vector<Value*> operands = node->operands();
    for (Value* out : node->outputs())
      if (out) out->set_producer(nullptr);
    graph.erase_node(node);
    work.insert(work.end(), operands.begin(), operands.end());
  }
}

bool is_metadata_assert(const Node& node) { return node.op_id() == OpId::_assert_tensor_metadata; }

Node* only_reader(const Graph& graph, const Value* v) {
  if (v == nullptr || is_graph_output(graph, v)) return nullptr;
  Node* reader = nullptr;
  for (Node* n : graph.users(v)) {
    if (is_metadata_assert(*n)) continue;
    if (reader != nullptr) return nullptr;
    reader = n;
  }
  if (reader == nullptr) return nullptr;
  const std::vector<Value*> operands = reader->operands();
  return std::count(operands.begin(), operands.end(), v) == 1 ? reader : nullptr;
}

void erase_with_asserts(Graph& graph, Node* node) {
  for (Value* out : node->outputs()) {
    if (out == nullptr) continue;
    for (Node* n : graph.users(out))
      if (is_metadata_assert(*n)) graph.erase_node(n);
    out->set_producer(nullptr);
  }
  graph.erase_node(node);
}

bool is_value_preserving_view(ir::OpId op) {
  return op == OpId::transpose_int || op == OpId::permute || op == OpId::unsqueeze ||
         op == OpId::expand || op == OpId::view || op == OpId::reshape || op == OpId::_unsafe_view;
}

void erase_unread_views(Graph& graph, Value* v) {
  while (v != nullptr && v->producer() != nullptr && !is_graph_output(graph, v)) {
    for (const Node* n : graph.users(v))
      if (!is_metadata_assert(*n)) return;
    Node* p = v->producer();
    const ir::OpId op = p->op_id();
    if (!is_value_preserving_view(op) && op != OpId::clone && op != OpId::_to_copy) return;
    Value* in = tensor_arg(*p, "self");
    erase_with_asserts(graph, p);
    v = in;
  }
}

namespace {

// Doubles compare by their bits: 0.0 and -0.0 are different arguments (x * -0.0 is -0.0 where
// x * 0.0 is 0.0), and a NaN argument equals the same NaN.
bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool same_arg(const ir::Arg& a, const ir::Arg& b) {
  if (a.is<double>() && b.is<double>()) return same_bits(a.as<double>(), b.as<double>());
  if (a.is<std::vector<double>>() && b.is<std::vector<double>>()) {
    const auto& x = a.as<std::vector<double>>();
    const auto& y = b.as<std::vector<double>>();
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_bits);
  }
  return a.data == b.data;
}

}  // namespace

bool same_computation(const Node& a, const Node& b) {
  if (a.op_id() != b.op_id() || a.outputs().size() != b.outputs().size()) return false;
  if (a.args().size() != b.args().size()) return false;
  for (size_t i = 0; i < a.args().size(); ++i)
    if (!same_arg(a.args()[i], b.args()[i])) return false;
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    const Value* x = a.outputs()[i];
    const Value* y = b.outputs()[i];
    if ((x == nullptr) != (y == nullptr)) return false;
    if (x != nullptr && x->is_tensor() != y->is_tensor()) return false;
    if (x != nullptr && x->is_tensor() && !(x->type() == y->type())) return false;
  }
  return true;
}

ReaderIndex reader_index(const Graph& graph) {
  ReaderIndex index;
  for (const auto& node : graph.nodes())
    for (Value* v : node->operands()) {
      std::vector<Node*>& readers = index[v];
      if (readers.empty() || readers.back() != node.get()) readers.push_back(node.get());
    }
  return index;
}

std::vector<Node*> node_snapshot(const Graph& graph) {
  std::vector<Node*> nodes;
  nodes.reserve(graph.nodes().size());
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  return nodes;
}

// Walked backwards, so a view's output is decided before the tensor it views.
std::set<const Value*> write_bases(const Graph& graph) {
  std::set<const Value*> bases;
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& user = **it;
    if (user.args().empty() || !user.args()[0].is<Value*>()) continue;
    const Value* base = user.args()[0].as<Value*>();
    if (user.op().is_write()) bases.insert(base);
    if (!user.op().may_view()) continue;
    for (const Value* out : user.outputs())
      if (out != nullptr && bases.count(out)) bases.insert(base);
  }
  return bases;
}

}  // namespace splice::passes
