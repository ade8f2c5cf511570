// Inlining of wrap_with_set_grad_enabled subgraphs (inline_subgraphs.h).
#include "frontend/pt2/inline_subgraphs.h"

#include <set>
#include <string>
#include <vector>

namespace splice::pt2 {

namespace {

std::string label(const Node& node) {
  if (node.name) return fmt::format("node '{}' ({})", *node.name, node.target);
  return std::string(node.target);
}

// The name of the graph value an argument carries (a tensor or a symbol); empty for constants
// and None.
std::string value_name(const Argument& a) {
  if (const auto* t = a.get_if<TensorArgument>()) return t->name;
  if (const auto* s = a.get_if<SymIntArgument>(); s && s->is_name())
    return std::get<std::string>(s->value);
  if (const auto* s = a.get_if<SymFloatArgument>(); s && s->is_name())
    return std::get<std::string>(s->value);
  if (const auto* s = a.get_if<SymBoolArgument>(); s && s->is_name())
    return std::get<std::string>(s->value);
  return {};
}

// `to = aten.alias(from)`: binds a subgraph's value to the name the surrounding graph uses.
Node alias_node(const std::string& from, const std::string& to) {
  Node n;
  n.target = "torch.ops.aten.alias.default";
  n.inputs.push_back(
      NamedArgument{"self", Argument{TensorArgument{from}}, ArgumentKind::kPositional});
  n.outputs.push_back(Argument{TensorArgument{to}});
  n.name = to;
  return n;
}

// The op's output names, position by position: one entry per output, or one as_tensors list.
// An output nothing reads may be serialised as None (an empty name).
std::vector<std::string> output_names(const Node& node) {
  std::vector<std::string> names;
  if (node.outputs.size() == 1) {
    if (const auto* list = node.outputs[0].get_if<TensorListArgument>()) {
      for (const TensorArgument& t : list->values) names.push_back(t.name);
      return names;
    }
  }
  for (const Argument& a : node.outputs) names.push_back(value_name(a));
  return names;
}

// Moves the subgraph's value metadata into the graph's. Names bound to the op's operands and
// results are already there; any other name the graph knows is a collision (export names the values
// of one trace uniquely, so this is a malformed archive).
template <typename Map>
Result<void> merge_values(Map& into, Map& from, const std::set<std::string>& bound,
                          const Node& node) {
  for (auto& [name, meta] : from) {
    if (bound.contains(name)) continue;
    if (!into.emplace(name, std::move(meta)).second)
      return make_error(ErrorKind::kBadArchive,
                        "{}: the subgraph's value '{}' has the name of a value outside it",
                        label(node), name);
  }
  return ok_result();
}

Result<void> inline_region(const Node& node, Graph& graph, std::vector<Node>& out) {
  // (bool enabled, GraphModule subgraph, *operands)
  const GraphArgument* body =
      node.inputs.size() >= 2 ? node.inputs[1].arg.get_if<GraphArgument>() : nullptr;
  if (body == nullptr || body->graph == nullptr)
    return make_error(ErrorKind::kBadArchive,
                      "{}: expected (enabled, subgraph, *operands) with a subgraph as argument 2",
                      label(node));
  Graph sub = *body->graph;
  SPLICE_TRY(inline_grad_mode_regions(sub));
  const size_t operands = node.inputs.size() - 2;
  if (sub.inputs.size() != operands)
    return make_error(ErrorKind::kBadArchive,
                      "{}: subgraph '{}' takes {} input(s) but the op passes {}", label(node),
                      body->name, sub.inputs.size(), operands);

  std::set<std::string> bound;
  std::vector<Node> renames;
  for (size_t i = 0; i < operands; ++i) {
    const std::string inner = value_name(sub.inputs[i]);
    const std::string outer = value_name(node.inputs[i + 2].arg);
    const bool tensors =
        sub.inputs[i].is<TensorArgument>() && node.inputs[i + 2].arg.is<TensorArgument>();
    if (inner.empty() || outer.empty() || (inner != outer && !tensors))
      return make_error(ErrorKind::kBadArchive,
                        "{}: subgraph '{}' input {} ('{}', {}) cannot take the op's operand ({})",
                        label(node), body->name, i, inner, argument_kind_name(sub.inputs[i]),
                        argument_kind_name(node.inputs[i + 2].arg));
    if (inner == outer) {
      bound.insert(inner);
    } else {
      renames.push_back(alias_node(outer, inner));
    }
  }
  // An output the op names as the subgraph does is the same value, recorded in both graphs.
  const std::vector<std::string> results = output_names(node);
  if (results.size() != sub.outputs.size())
    return make_error(ErrorKind::kBadArchive,
                      "{}: subgraph '{}' returns {} value(s) but the op has {} output(s)",
                      label(node), body->name, sub.outputs.size(), results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].empty() && results[i] == value_name(sub.outputs[i])) bound.insert(results[i]);
  }
  SPLICE_TRY(merge_values(graph.tensor_values, sub.tensor_values, bound, node));
  SPLICE_TRY(merge_values(graph.sym_int_values, sub.sym_int_values, bound, node));
  SPLICE_TRY(merge_values(graph.sym_bool_values, sub.sym_bool_values, bound, node));
  SPLICE_TRY(merge_values(graph.sym_float_values, sub.sym_float_values, bound, node));

  for (Node& n : renames) out.push_back(std::move(n));
  for (Node& n : sub.nodes) out.push_back(std::move(n));
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string inner = value_name(sub.outputs[i]);
    if (results[i].empty() || results[i] == inner) continue;  // unread, or the same value
    if (!sub.outputs[i].is<TensorArgument>())
      return make_error(ErrorKind::kBadArchive,
                        "{}: subgraph '{}' output {} is {}, named '{}' outside: only tensors can "
                        "be renamed",
                        label(node), body->name, i, argument_kind_name(sub.outputs[i]), results[i]);
    out.push_back(alias_node(inner, results[i]));
  }
  return ok_result();
}

}  // namespace

Result<void> inline_grad_mode_regions(Graph& graph) {
  bool any = false;
  for (const Node& node : graph.nodes) any |= node.target == kSetGradEnabledTarget;
  if (!any) return ok_result();
  std::vector<Node> out;
  out.reserve(graph.nodes.size());
  for (Node& node : graph.nodes) {
    if (node.target != kSetGradEnabledTarget) {
      out.push_back(std::move(node));
      continue;
    }
    SPLICE_TRY(inline_region(node, graph, out));
  }
  graph.nodes = std::move(out);
  return ok_result();
}

}  // namespace splice::pt2
