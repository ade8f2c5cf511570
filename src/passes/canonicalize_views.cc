// canonicalize_views: PyTorch's functionalization regenerates a view from its base lazily, at
// the next use after a write to the base, so a run_decompositions({}) program holds the same
// view twice and in places that depend on the program's form: for `r = b.t().reshape(-1);
// r[1] = c` it reads `select(_unsafe_view(clone, [12]), 0, 1)` and then writes
// `select_scatter(_unsafe_view_1, ...)`, `_unsafe_view_1 = _unsafe_view(clone, [12])` being
// made after c's producer (functionalize regenerates the bases it writes back through the
// same way, at the write). The write planner lets a producer store straight into a
// destination only when the destination exists when the producer runs, so where a view lands
// decides whether src is copied. This pass gives each view one place: a view node whose op and
// arguments equal an earlier view node's is replaced by that node, and a view whose operands
// are all tensors moves to right after the last of their producers. A view computes nothing,
// and in a functional program equal ops on equal operands are equal values, so no value
// changes; only the order the planner sees.
#include <map>
#include <vector>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Node;
using ir::Value;

// A view op this pass may merge or move: always a view (never a sometimes-view such as
// reshape, whose copies are buffers of their own), and writing nothing (detach_, an in-place
// alias of metadata, stays where it is).
bool is_plain_view(const ir::OpSchema& op) {
  if (op.aliasing != ir::Aliasing::kView) return false;
  for (const ir::ArgSchema& a : op.args)
    if (a.alias_writes) return false;
  return true;
}

// Replaces every view node equal to an earlier one by the earlier one, views of merged views
// included (their base is the same value once the first merge is made).
bool merge_equal_views(ir::Graph& graph) {
  bool changed = false;
  std::map<const Value*, std::vector<Node*>> kept;  // by the viewed tensor
  for (Node* node : node_snapshot(graph)) {
    if (!is_plain_view(node->op()) || node->args().empty() || !node->args()[0].is<Value*>())
      continue;
    std::vector<Node*>& same_base = kept[node->args()[0].as<Value*>()];
    Node* earlier = nullptr;
    for (Node* k : same_base)
      if (same_computation(*k, *node)) earlier = k;
    if (earlier == nullptr) {
      same_base.push_back(node);
      continue;
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      Value* out = node->outputs()[i];
      if (out == nullptr) continue;
      graph.replace_all_uses(out, earlier->outputs()[i]);
      out->set_producer(nullptr);
    }
    graph.erase_node(node);
    changed = true;
  }
  return changed;
}

// Whether `node` is a view that moves: a plain view reading tensors only. A view reading a
// symbol (a select at .item()'s position, a view to sizes computed on the host) stays after
// the host nodes that bind and check that symbol.
bool moves(const Node& node) {
  if (!is_plain_view(node.op())) return false;
  for (const Value* v : node.operands())
    if (!v->is_tensor()) return false;
  return true;
}

// Moves every view that moves to right after the last producer of its operands (to the top
// for views of graph inputs only), views placed after the same node keeping their order.
bool hoist_views(ir::Graph& graph) {
  const std::vector<Node*> nodes = node_snapshot(graph);
  // Each view's anchor: the node that stays in place after which it goes; nullptr is the top.
  std::map<const Node*, const Node*> anchor;
  std::map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  // The place of a node's anchor in the original order, -1 for the top.
  auto place = [&](const Node* n) -> std::ptrdiff_t {
    return n == nullptr ? -1 : static_cast<std::ptrdiff_t>(index.at(n));
  };
  std::map<const Node*, std::vector<Node*>> after;  // by anchor, in original order
  for (Node* node : nodes) {
    if (!moves(*node)) continue;
    const Node* to = nullptr;
    for (const Value* v : node->operands()) {
      const Node* p = v->producer();
      if (p == nullptr) continue;  // a graph input
      auto moved = anchor.find(p);
      const Node* a = moved != anchor.end() ? moved->second : p;
      if (place(a) > place(to)) to = a;
    }
    anchor[node] = to;
    after[to].push_back(node);
  }
  // The new order: the top's views, then each staying node followed by its views.
  std::vector<Node*> order(after[nullptr]);
  for (Node* node : nodes) {
    if (anchor.count(node)) continue;
    order.push_back(node);
    auto it = after.find(node);
    if (it != after.end()) order.insert(order.end(), it->second.begin(), it->second.end());
  }
  if (order == nodes) return false;
  // The graph has no move: each moved view is rebuilt before the node that follows its
  // place (the next staying node), with the same op, name, arguments and output values.
  for (size_t i = 0; i < order.size(); ++i) {
    Node* view = order[i];
    if (!anchor.count(view)) continue;
    const Node* before = nullptr;
    for (size_t j = i + 1; j < order.size() && before == nullptr; ++j)
      if (!anchor.count(order[j])) before = order[j];
    Node* moved = graph.insert_node(before, &view->op(), view->name());
    moved->args() = view->args();
    moved->outputs() = view->outputs();
    for (Value* out : moved->outputs())
      if (out != nullptr) out->set_producer(moved);
    view->outputs().clear();
    graph.erase_node(view);
  }
  return true;
}

class CanonicalizeViews final : public Pass {
 public:
  std::string_view name() const override { return "canonicalize_views"; }
  std::string_view description() const override {
    return "Gives each view one place, whichever form the program came in: a view node "
           "(always a view: slice, select, permute, view, _unsafe_view, ...) whose op and "
           "arguments equal an earlier view node's is replaced by that node, and a view "
           "reading tensors only moves to right after the last of their producers. PyTorch's "
           "functionalization (and functionalize) regenerate views at writes, so a write's "
           "base may otherwise be made after src's producer, which then cannot store into it.";
  }
  Result<bool> run(ir::Program& program) override {
    const bool merged = merge_equal_views(program.graph);
    const bool hoisted = hoist_views(program.graph);
    return merged || hoisted;
  }
};

}  // namespace

std::unique_ptr<Pass> make_canonicalize_views() { return std::make_unique<CanonicalizeViews>(); }

}  // namespace splice::passes
