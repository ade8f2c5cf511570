// share_identical_computations: common-subexpression elimination. An exported program repeats
// work that Python recomputed: SmolVLA's flow-matching loop projects the same prefix keys and
// values through the same expert weights in each of its 10 steps and rebuilds the same rope
// tables from the same positions; a decoder computes the same mask or cast once per layer. In
// a functional program (functionalize has run) a deterministic op applied to the same
// arguments gives the same value, so the later node is dropped and its readers read the
// earlier one. What was shared is recorded in Program::shared for the plan report.
//
// Not shared:
//   - ops whose value is not a function of their arguments: empty* (undefined contents, and
//     each buffer is written on its own), dropout with p > 0, host nodes (asserts, .item(), the
//     symbolic scalars: they bind and check symbols where they stand);
//   - ops that write (in-place forms) and the functional writes the write planner plans: two
//     equal writes are rare and each is a planning decision of its own;
//   - a value the program returns (outputs and state mutations keep their own tensors);
//   - a tensor that a write uses as its base, directly or through views: the planner writes
//     into a base nobody reads afterwards in place, and sharing it would make every such write
//     copy the base first.
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Node;
using ir::Value;

bool is_deterministic(const Node& node) {
  const ir::OpSchema& op = node.op();
  if (op.is_empty_factory() || op.runs_on_host() || op.id == ir::OpId::dropout) return false;
  if (auto p = op.find_arg("dropout_p")) {
    const ir::Arg& arg = node.args()[*p];
    if (!arg.is<double>() || arg.as<double>() != 0.0) return false;
  }
  return true;
}

bool may_share(const Node& node) {
  const ir::OpSchema& op = node.op();
  if (op.is_write() || op.aliasing == ir::Aliasing::kMutates ||
      op.op_class == ir::OpClass::kAutogradOnly)
    return false;
  for (const ir::ArgSchema& a : op.args)
    if (a.alias_writes) return false;
  if (node.outputs().empty()) return false;
  for (const Value* out : node.outputs())
    if (out != nullptr && !out->is_tensor()) return false;
  return is_deterministic(node);
}

// Whether `node`'s values must stay tensors of their own: returned, or written into.
bool keeps_own_tensors(const Node& node, const std::set<const Value*>& returned,
                       const std::set<const Value*>& bases) {
  for (const Value* out : node.outputs())
    if (out != nullptr && (returned.count(out) || bases.count(out))) return true;
  return false;
}

// Whether `v` is dense in splice's runtime: made by a computing node (a new tensor), or a view
// of such a tensor that keeps its elements in order (view, reshape, unsqueeze, squeeze).
// `chain` collects the values on the way.
bool is_dense(const Value* v, std::vector<const Value*>& chain) {
  for (const Node* p = v->producer(); p != nullptr; p = v->producer()) {
    chain.push_back(v);
    const ir::OpId op = p->op_id();
    if (op == ir::OpId::view || op == ir::OpId::_unsafe_view || op == ir::OpId::reshape ||
        op == ir::OpId::unsqueeze || op == ir::OpId::squeeze || op == ir::OpId::squeeze_dim ||
        op == ir::OpId::squeeze_dims) {
      if (p->args().empty() || !p->args()[0].is<Value*>()) return false;
      v = p->args()[0].as<Value*>();
      continue;
    }
    return p->op().op_class == ir::OpClass::kCompute && p->op().aliasing == ir::Aliasing::kNone;
  }
  return false;  // a graph input: the caller's tensor, or a weight
}

// The tensor `node` copies when it only copies, else nullptr: a clone (in a dense memory
// format) or a one-tensor cat of a dense tensor, when neither that tensor (nor the tensor it
// views) nor the copy is returned or written into. Eager code clones what it is about to update
// in place (SmolVLA's expert keeps `after_first_residual = out_emb.clone()` before `out_emb` is
// normalised) and concatenates lists that hold one tensor (SmolVLA's per-modality
// `torch.cat([query_states], dim=1)`); once functional, both tensors are only read, so the
// copy is one more kernel and buffer — and the residual's kept the add out of the RMSNorm group.
Value* plain_copy_source(const Node& node, const std::set<const Value*>& returned,
                         const std::set<const Value*>& bases) {
  Value* in = nullptr;
  if (node.op_id() == ir::OpId::clone && !node.args().empty() && node.args()[0].is<Value*>()) {
    const ir::Arg& format = node.arg("memory_format");
    if (!format.is_none() &&
        !(format.is<std::string>() && (format.as<std::string>() == "contiguous_format" ||
                                       format.as<std::string>() == "preserve_format")))
      return nullptr;
    in = node.args()[0].as<Value*>();
  } else if (node.op_id() == ir::OpId::cat && !node.args().empty() &&
             node.args()[0].is<std::vector<Value*>>() &&
             node.args()[0].as<std::vector<Value*>>().size() == 1) {
    in = node.args()[0].as<std::vector<Value*>>()[0];
  }
  if (in == nullptr || node.outputs().empty()) return nullptr;
  const Value* out = node.output();
  if (out == nullptr || !in->is_tensor() || !(in->type() == out->type()) || returned.count(out) ||
      bases.count(out))
    return nullptr;
  std::vector<const Value*> chain;
  if (!is_dense(in, chain)) return nullptr;
  for (const Value* v : chain)
    if (returned.count(v) || bases.count(v)) return nullptr;
  return in;
}

// Reads through `alias` and `detach` nodes (what `x.to(x.dtype)` and `.detach()` become) read
// their input instead: the same storage and the same values, so two computations on two
// aliases of one tensor compare equal. SmolVLA re-aliases the prefix keys in every step
// (`key_states = key_states.to(dtype)`), which hid the repeated projections. An alias that is
// returned or written into stays, with its readers. Plain copies (plain_copy_source) go the
// same way.
bool forward_aliases(ir::Graph& graph, const std::set<const Value*>& returned,
                     const std::set<const Value*>& bases) {
  // Readers follow their producers: substituting each node as the walk reaches it, and the
  // outputs at the end, replaces every use.
  std::unordered_map<const Value*, Value*> replaced;
  std::unordered_set<const Node*> dead;
  for (Node* node : node_snapshot(graph)) {
    ir::Graph::substitute(*node, replaced);
    Value* source = plain_copy_source(*node, returned, bases);
    if (source == nullptr &&
        (node->op_id() == ir::OpId::alias || node->op_id() == ir::OpId::detach) &&
        !node->args().empty() && node->args()[0].is<Value*>())
      source = node->args()[0].as<Value*>();
    if (source == nullptr || node->outputs().empty()) continue;
    Value* out = node->output();
    if (out == nullptr || returned.count(out) || bases.count(out)) continue;
    replaced[out] = source;
    out->set_producer(nullptr);
    dead.insert(node);
  }
  graph.substitute_outputs(replaced);
  graph.erase_nodes(dead);
  return !dead.empty();
}

// Every output `dup` has, `kept` has too (an unused output is nullptr).
bool covers_outputs(const Node& kept, const Node& dup) {
  for (size_t i = 0; i < dup.outputs().size(); ++i)
    if (dup.outputs()[i] != nullptr && kept.outputs()[i] == nullptr) return false;
  return true;
}

class ShareIdenticalComputations final : public Pass {
 public:
  std::string_view name() const override { return "share_identical_computations"; }
  std::string_view description() const override {
    return "Common-subexpression elimination: reads through alias and detach nodes, and "
           "through clones and one-tensor cats of dense computed tensors that nothing writes "
           "into or returns, read their input, then a "
           "deterministic op applied to the same arguments as an earlier node "
           "(tensors and symbols by identity, numbers by value) is dropped and "
           "its readers read the earlier node's values. Empty buffers, random ops, host nodes, "
           "writes, returned values and the bases of writes are never shared. What was shared "
           "is listed by `inspect --plan`.";
  }

  Result<bool> run(ir::Program& program) override {
    ir::Graph& graph = program.graph;
    const std::set<const Value*> bases = write_bases(graph);
    std::set<const Value*> returned;
    for (const ir::GraphOutput& out : graph.outputs())
      if (out.is<Value*>()) returned.insert(out.as<Value*>());
    // Candidates by op and first operand: equal computations share both.
    std::map<std::pair<ir::OpId, const Value*>, std::vector<Node*>> earlier;
    std::map<const Node*, size_t> record;  // kept node -> its entry in program.shared
    bool changed = forward_aliases(graph, returned, bases);
    // As in forward_aliases: uses replaced as the walk reaches them, nodes erased at the end.
    std::unordered_map<const Value*, Value*> replaced;
    std::unordered_set<const Node*> dead;
    for (Node* node : node_snapshot(graph)) {
      ir::Graph::substitute(*node, replaced);
      if (!may_share(*node)) continue;
      const std::vector<Value*> operands = node->operands();
      const Value* first = operands.empty() ? nullptr : operands.front();
      std::vector<Node*>& same_key = earlier[{node->op_id(), first}];
      Node* kept = nullptr;
      for (Node* k : same_key)
        if (same_computation(*k, *node) && covers_outputs(*k, *node)) kept = k;
      if (kept == nullptr) {
        same_key.push_back(node);
        continue;
      }
      if (keeps_own_tensors(*node, returned, bases) || keeps_own_tensors(*kept, returned, bases))
        continue;
      auto [it, added] = record.try_emplace(kept, program.shared.size());
      if (added) program.shared.push_back({kept->name(), kept->target(), {}});
      program.shared[it->second].duplicates.push_back(node->name());
      for (size_t i = 0; i < node->outputs().size(); ++i) {
        Value* out = node->outputs()[i];
        if (out == nullptr) continue;
        replaced[out] = kept->outputs()[i];
        out->set_producer(nullptr);
      }
      dead.insert(node);
      changed = true;
    }
    graph.substitute_outputs(replaced);
    graph.erase_nodes(dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_share_identical_computations() {
  return std::make_unique<ShareIdenticalComputations>();
}

}  // namespace splice::passes
