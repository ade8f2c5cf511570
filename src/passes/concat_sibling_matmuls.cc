// concat_sibling_matmuls: matrix products that read the same input through different weights
// — a decoder layer's q, k and v projections, an MLP's gate and up — become one product over
// the weights concatenated at load time, and each original result a slice of its columns.
// A decode step then reads its q/k/v weights in one kernel instead of three (the k and v
// projections alone are too small to reach the memory bandwidth), and a prefill runs one wider
// GEMM. Each output element is the same dot product as before (the same row of the same weight
// against the same input row), so the values are those of the separate products.
//
// Two forms, as export gives them:
//   linear(x, W_i, b_i?)                 -> linear(x, cat(W_i), cat(b_i)?), slice on the last dim
//   mm(x, t(W_i)) / addmm(b_i, x, t(W_i)) -> the same over dim 1 (t or permute [1, 0])
//
// Weights are joined when the same inputs read them, one product each — a layer's q, k and v
// weights, once, or in every step of a loop that runs the layer again (SmolVLA's expert in
// each of its 10 flow-matching steps) — and nothing else can see the change:
//   - the weight (and bias) is a parameter or tensor constant of constant sizes, never mutated
//     and read only by those products (through transposes nothing else reads) — the originals
//     are dropped, so a weight that is read elsewhere (a tied embedding) stays;
//   - its result is neither returned nor the base of a write (those keep tensors of their own);
//   - addmm with beta = alpha = 1 and a bias vector of the output's width.
// The weights of a group share the inputs that read them, the form, the dtype and whether
// there is a bias; each input then gets one product over the joined weight.
// With the weights' data in the program the new weight holds their rows in order; a program
// without weight data (the text IR of the golden tests) is rewritten the same. What was
// concatenated is recorded in Program::concatenated for the plan report.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// One product of a group: the node, its weight (and bias) graph inputs, and the transpose
// between the weight and the product (mm/addmm only).
struct Member {
  Node* node = nullptr;
  Value* weight = nullptr;  // [N, K]
  Value* bias = nullptr;    // [N] or nullptr
  Node* transpose = nullptr;
  int64_t columns = 0;  // N
};

// The graph input positions of parameters and tensor constants, by value.
std::map<const Value*, size_t> constant_inputs(const ir::Program& program) {
  std::map<const Value*, size_t> positions;
  const auto& specs = program.signature.inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const ir::InputSpec& s = specs[i];
    if (s.value == nullptr) continue;
    if (s.kind == ir::InputKind::kParameter || s.kind == ir::InputKind::kTensorConstant)
      positions.emplace(s.value, i);
  }
  return positions;
}

// The targets (FQNs) the program mutates: a mutated weight cannot be replaced by a copy.
std::set<std::string> mutated_targets(const ir::Program& program) {
  std::set<std::string> targets;
  for (const ir::OutputSpec& o : program.signature.outputs)
    if (!o.target.empty()) targets.insert(o.target);
  return targets;
}

class Matcher {
 public:
  explicit Matcher(const ir::Program& program)
      : graph_(program.graph),
        constants_(constant_inputs(program)),
        mutated_(mutated_targets(program)),
        program_(program),
        bases_(write_bases(program.graph)) {}

  // The member `node` would be, or nullopt when it cannot join a group.
  std::optional<Member> match(Node* node) const {
    const OpId op = node->op_id();
    if (op != OpId::linear && op != OpId::mm && op != OpId::addmm) return std::nullopt;
    Member m{node};
    Value* out = node->outputs().empty() ? nullptr : node->output();
    if (out == nullptr || is_graph_output(graph_, out) || bases_.count(out)) return std::nullopt;
    switch (node->op_id()) {
      case OpId::linear:
        m.weight = tensor_arg(*node, "weight");
        if (!node->arg("bias").is_none()) {
          m.bias = tensor_arg(*node, "bias");
          if (m.bias == nullptr) return std::nullopt;
        }
        break;
      case OpId::addmm:
        if (!is_one(node->arg("beta")) || !is_one(node->arg("alpha"))) return std::nullopt;
        m.bias = tensor_arg(*node, "self");
        if (m.bias == nullptr) return std::nullopt;
        [[fallthrough]];
      case OpId::mm: {
        Value* mat2 = tensor_arg(*node, "mat2");
        m.transpose = mat2 != nullptr ? transpose_of(mat2) : nullptr;
        if (m.transpose == nullptr) return std::nullopt;
        m.weight = tensor_arg(*m.transpose, "self");
        break;
      }
      default:
        return std::nullopt;
    }
    if (!unmutated_constant(m.weight)) return std::nullopt;
    const ir::TensorType& w = m.weight->type();
    if (w.rank() != 2 || !w.sizes[0].constant() || !w.sizes[1].constant()) return std::nullopt;
    m.columns = *w.sizes[0].constant();
    if (m.bias != nullptr) {
      const ir::TensorType& b = m.bias->type();
      if (!unmutated_constant(m.bias) || b.rank() != 1 || b.sizes[0].constant() != m.columns ||
          b.dtype != w.dtype)
        return std::nullopt;
    }
    // The product's last dim is the weight's rows; slicing it gives back each result.
    if (out->type().rank() < 1 || out->type().sizes.back().constant() != m.columns)
      return std::nullopt;
    return m;
  }

  // The value every member of a group reads as its input rows.
  static Value* input_of(const Member& m) {
    switch (m.node->op_id()) {
      case OpId::linear:
        return tensor_arg(*m.node, "input");
      case OpId::addmm:
        return tensor_arg(*m.node, "mat1");
      default:
        return tensor_arg(*m.node, "self");
    }
  }

 private:
  static bool is_one(const Arg& a) {
    return (a.is<int64_t>() && a.as<int64_t>() == 1) || (a.is<double>() && a.as<double>() == 1.0);
  }

  // t(W) or permute(W, [1, 0]) of a 2-d W: the node, else nullptr.
  static Node* transpose_of(const Value* v) {
    if (Node* t = producer_if(v, OpId::t)) return t;
    Node* p = producer_if(v, OpId::permute);
    if (p == nullptr) return nullptr;
    const Arg& dims = p->arg("dims");
    if (!dims.is<std::vector<ir::SymIntArg>>()) return nullptr;
    const auto& d = dims.as<std::vector<ir::SymIntArg>>();
    if (d.size() != 2 || !std::holds_alternative<int64_t>(d[0]) ||
        !std::holds_alternative<int64_t>(d[1]) || std::get<int64_t>(d[0]) != 1 ||
        std::get<int64_t>(d[1]) != 0)
      return nullptr;
    return p;
  }

  // Whether `v` is a parameter or tensor constant the program neither mutates nor returns, and
  // the only input of its target (the joined weight replaces the target's data).
  bool unmutated_constant(const Value* v) const {
    if (v == nullptr) return false;
    auto it = constants_.find(v);
    if (it == constants_.end()) return false;
    const std::string& target = program_.signature.inputs[it->second].target;
    if (mutated_.count(target)) return false;
    for (const ir::InputSpec& s : program_.signature.inputs)
      if (s.value != v && s.target == target) return false;
    return !is_graph_output(graph_, v);
  }

  const ir::Graph& graph_;
  std::map<const Value*, size_t> constants_;
  std::set<std::string> mutated_;
  const ir::Program& program_;
  std::set<const Value*> bases_;
};

// The rows of `parts` one after another: [sum of N_i, K] (or [sum of N_i] for biases), or
// nullopt when the program holds no data for any of them. kInternal when only some have data
// (an archive the loader would have refused) — the caller leaves such a group alone instead.
Result<std::optional<Tensor>> concat_rows(const ir::Program& program,
                                          const std::vector<std::string>& targets, bool* mixed) {
  std::vector<const Tensor*> parts;
  for (const std::string& t : targets) {
    auto it = program.weights.find(t);
    if (it != program.weights.end()) parts.push_back(&it->second);
  }
  *mixed = !parts.empty() && parts.size() != targets.size();
  if (parts.empty() || *mixed) return std::optional<Tensor>{};
  Shape sizes = parts[0]->sizes();
  sizes[0] = 0;
  for (const Tensor* p : parts) sizes[0] += p->size(0);
  SPLICE_ASSIGN_OR_RETURN(Tensor joined, Tensor::empty(parts[0]->dtype(), sizes));
  std::byte* dst = joined.raw_data();
  for (const Tensor* p : parts) {
    SPLICE_CHECK_OR_RETURN(p->is_host() && p->dtype() == joined.dtype(), ErrorKind::kInternal,
                           "a weight to concatenate is not a host tensor of {}",
                           dtype_name(joined.dtype()));
    Tensor dense = *p;
    if (!dense.is_contiguous()) {
      SPLICE_ASSIGN_OR_RETURN(dense, p->contiguous_copy());
    }
    std::copy_n(dense.raw_data(), dense.nbytes(), dst);
    dst += dense.nbytes();
  }
  // Read-only, as the archive's weights are: nothing may write into a program's weights.
  auto read_only = Storage::borrow(joined.raw_data(), joined.nbytes(), joined.storage(),
                                   /*writable=*/false);
  return std::optional<Tensor>{
      Tensor(joined.dtype(), joined.sizes(), joined.strides(), 0, std::move(read_only))};
}

// What weights must share to be joined: the form (linear, or mm/addmm), the dtype, whether the
// products add a bias, the inner size, and the inputs that read them, in program order.
struct SiblingKey {
  OpId family = OpId::linear;
  DType dtype = DType::kFloat32;
  bool bias = false;
  int64_t k = 0;
  std::vector<const Value*> inputs;
  bool operator<(const SiblingKey& o) const {
    return std::tie(family, dtype, bias, k, inputs) <
           std::tie(o.family, o.dtype, o.bias, o.k, o.inputs);
  }
};

// The key of the weight `readers` (its products, in program order) read, or nullopt when
// something else can see the weight: every use of the weight, of its transposes and of the
// bias must be one of these products, all of one form with one bias, each on its own input.
std::optional<SiblingKey> sibling_key(const ir::Graph& graph, const ReaderIndex& users,
                                      const std::vector<const Member*>& readers) {
  const Member& first = *readers[0];
  SiblingKey key;
  key.family = first.node->op_id() == OpId::linear ? OpId::linear : OpId::mm;
  key.dtype = first.weight->type().dtype;
  key.bias = first.bias != nullptr;
  key.k = *first.weight->type().sizes[1].constant();
  std::set<const Node*> nodes, transposes;
  for (const Member* m : readers) {
    const OpId family = m->node->op_id() == OpId::linear ? OpId::linear : OpId::mm;
    if (family != key.family || m->bias != first.bias) return std::nullopt;
    nodes.insert(m->node);
    if (m->transpose != nullptr) transposes.insert(m->transpose);
    const Value* input = Matcher::input_of(*m);
    if (std::find(key.inputs.begin(), key.inputs.end(), input) != key.inputs.end())
      return std::nullopt;  // the same product twice: share_identical_computations' business
    key.inputs.push_back(input);
  }
  // Every reader of `v` is one of `allowed`.
  auto only = [&](const Value* v, const std::set<const Node*>& allowed) {
    auto it = users.find(v);
    if (it == users.end()) return true;
    for (const Node* user : it->second)
      if (!allowed.count(user)) return false;
    return true;
  };
  if (!only(first.weight, key.family == OpId::linear ? nodes : transposes)) return std::nullopt;
  for (const Node* t : transposes)
    if (!only(t->output(), nodes) || is_graph_output(graph, t->output())) return std::nullopt;
  if (first.bias != nullptr && !only(first.bias, nodes)) return std::nullopt;
  return key;
}

class ConcatSiblingMatmuls final : public Pass {
 public:
  std::string_view name() const override { return "concat_sibling_matmuls"; }
  std::string_view description() const override {
    return "Matrix products that read the same input through different weights (q/k/v "
           "projections, gate and up) become one product over the weights concatenated at load "
           "time (linear, or mm/addmm of a transposed weight), and each original result a slice "
           "of its columns; weights read by the same inputs in every step of a loop are joined "
           "once "
           "for all of them. Only weights and biases that are parameters or constants read by "
           "those products alone and never mutated; results that are returned or written into "
           "keep their own products. The original weights are dropped. What was concatenated "
           "is listed by `inspect --plan`.";
  }

  Result<bool> run(ir::Program& program) override {
    Matcher matcher(program);
    std::vector<Member> members;
    std::map<const Node*, size_t> position;
    for (Node* node : node_snapshot(program.graph)) {
      position[node] = position.size();
      if (std::optional<Member> m = matcher.match(node)) members.push_back(*m);
    }
    // The products reading each weight, in program order.
    std::map<const Value*, std::vector<const Member*>> readers;
    std::vector<const Value*> weights;
    for (const Member& m : members) {
      auto [it, added] = readers.try_emplace(m.weight);
      if (added) weights.push_back(m.weight);
      it->second.push_back(&m);
    }
    // Weights are siblings when the same inputs read them, one product each: the q, k and v
    // weights of a layer (once), or of a layer a loop runs several times (SmolVLA's expert in
    // each of its 10 steps: every step's input reads all three).
    std::map<SiblingKey, std::vector<const Value*>> groups;
    std::vector<SiblingKey> order;
    const ReaderIndex users =
        reader_index(program.graph);  // the graph is unchanged until the joins
    for (const Value* w : weights) {
      std::optional<SiblingKey> key = sibling_key(program.graph, users, readers[w]);
      if (!key) continue;
      auto [it, added] = groups.try_emplace(*key);
      if (added) order.push_back(*key);
      it->second.push_back(w);
    }
    bool changed = false;
    for (const SiblingKey& key : order) {
      const std::vector<const Value*>& group = groups[key];
      if (group.size() < 2) continue;
      std::vector<std::vector<const Member*>> by_weight;
      for (const Value* w : group) by_weight.push_back(readers[w]);
      SPLICE_ASSIGN_OR_RETURN(bool c, concat_group(program, by_weight, position));
      changed |= c;
    }
    return changed;
  }

 private:
  // A joined input: its value and its target ("concat(a,b,...)" of the parts' targets).
  struct Joined {
    Value* value = nullptr;
    std::string target;
  };

  // A new graph input for the concatenation of `parts` (graph inputs), in place of the first;
  // the others are removed from the graph, the signature and the weights. Nothing when the parts
  // have data for only some of them.
  static Result<std::optional<Joined>> join_inputs(ir::Program& program,
                                                   const std::vector<Value*>& parts) {
    std::vector<std::string> targets;
    std::vector<size_t> positions;
    for (Value* v : parts) {
      const auto& specs = program.signature.inputs;
      auto it = std::find_if(specs.begin(), specs.end(),
                             [&](const ir::InputSpec& s) { return s.value == v; });
      SPLICE_CHECK_OR_RETURN(it != specs.end(), ErrorKind::kInternal,
                             "weight '{}' is not an input of the program", v->name());
      targets.push_back(it->target);
      positions.push_back(static_cast<size_t>(it - specs.begin()));
    }
    bool mixed = false;
    SPLICE_ASSIGN_OR_RETURN(std::optional<Tensor> data, concat_rows(program, targets, &mixed));
    if (mixed) return std::optional<Joined>{};

    ir::Graph& graph = program.graph;
    ir::TensorType type = parts[0]->type();
    int64_t rows = 0;
    for (Value* v : parts) rows += *v->type().sizes[0].constant();
    type.sizes[0] = SymExpr(rows);
    Value* joined =
        graph.add_value(graph.unique_name(parts[0]->name() + "_concat"), ir::ValueKind::kTensor);
    joined->set_type(type);
    std::string target = "concat(";
    for (size_t i = 0; i < targets.size(); ++i) target += (i ? "," : "") + targets[i];
    target += ")";
    ir::InputSpec spec = program.signature.inputs[positions[0]];
    spec.value = joined;
    spec.target = target;
    // The first part's slot takes the new input; the others go, last position first.
    program.signature.inputs[positions[0]] = spec;
    graph.inputs()[positions[0]] = joined;
    std::vector<size_t> gone(positions.begin() + 1, positions.end());
    std::sort(gone.rbegin(), gone.rend());
    for (size_t p : gone) {
      program.signature.inputs.erase(program.signature.inputs.begin() + static_cast<long>(p));
      graph.inputs().erase(graph.inputs().begin() + static_cast<long>(p));
    }
    for (const std::string& t : targets) program.weights.erase(t);
    if (data) program.weights.emplace(target, std::move(*data));
    return std::optional<Joined>{Joined{joined, target}};
  }

  // Joins the weights of `by_weight` (each weight's products, in program order; the i-th
  // product of every weight reads the same input) and replaces, input by input, the products
  // by one over the joined weight and slices of it.
  static Result<bool> concat_group(ir::Program& program,
                                   const std::vector<std::vector<const Member*>>& by_weight,
                                   const std::map<const Node*, size_t>& position) {
    std::vector<Value*> weights, biases;
    for (const auto& readers : by_weight) {
      weights.push_back(readers[0]->weight);
      if (readers[0]->bias != nullptr) biases.push_back(readers[0]->bias);
    }
    SPLICE_ASSIGN_OR_RETURN(std::optional<Joined> joined, join_inputs(program, weights));
    if (!joined) return false;
    Value* const weight = joined->value;
    Value* bias = nullptr;
    if (!biases.empty()) {
      SPLICE_ASSIGN_OR_RETURN(std::optional<Joined> joined_bias, join_inputs(program, biases));
      SPLICE_CHECK_OR_RETURN(joined_bias.has_value(), ErrorKind::kInternal,
                             "the biases of '{}' have data for some products only",
                             by_weight[0][0]->node->name());
      bias = joined_bias->value;
    }
    auto earlier = [&](const Member* a, const Member* b) {
      return position.at(a->node) < position.at(b->node);
    };
    Rewriter rw(program);
    const bool linear = by_weight[0][0]->node->op_id() == OpId::linear;
    Value* transposed = nullptr;
    if (!linear) {
      // One transpose of the joined weight, before the group's first product.
      const Member* first = by_weight[0][0];
      for (const auto& readers : by_weight)
        for (const Member* m : readers)
          if (earlier(m, first)) first = m;
      SPLICE_ASSIGN_OR_RETURN(transposed, rw.insert_value(first->node, OpId::t, {Arg{weight}}, {},
                                                          weight->name() + "_t"));
    }
    std::set<Node*> old_transposes;
    std::unordered_map<const Value*, Value*> replaced;
    std::unordered_set<const Node*> dead;
    for (size_t i = 0; i < by_weight[0].size(); ++i) {
      std::vector<const Member*> members;
      for (const auto& readers : by_weight) members.push_back(readers[i]);
      const Member* first = *std::min_element(members.begin(), members.end(), earlier);
      Value* input = Matcher::input_of(*first);
      const std::string name = first->node->output()->name() + "_concat";
      Value* product = nullptr;
      if (linear) {
        SPLICE_ASSIGN_OR_RETURN(
            product,
            rw.insert_value(first->node, OpId::linear,
                            {Arg{input}, Arg{weight}, bias ? Arg{bias} : Arg{}}, {}, name));
      } else if (bias) {
        SPLICE_ASSIGN_OR_RETURN(
            product, rw.insert_value(first->node, OpId::addmm,
                                     {Arg{bias}, Arg{input}, Arg{transposed}}, {}, name));
      } else {
        SPLICE_ASSIGN_OR_RETURN(product, rw.insert_value(first->node, OpId::mm,
                                                         {Arg{input}, Arg{transposed}}, {}, name));
      }
      ir::ConcatenatedMatmul record{
          product->producer()->name(), product->producer()->target(), joined->target, {}};
      const int64_t dim = product->type().rank() - 1;
      int64_t start = 0;
      for (const Member* m : members) {
        Value* out = m->node->output();
        SPLICE_ASSIGN_OR_RETURN(Value * part,
                                rw.insert_value(first->node, OpId::slice_Tensor,
                                                {Arg{product}, Arg{dim}, Arg{start},
                                                 Arg{start + m->columns}, Arg{int64_t{1}}},
                                                {}, out->name() + "_part"));
        SPLICE_CHECK_OR_RETURN(part->type() == out->type(), ErrorKind::kInternal,
                               "{}: its slice of the concatenated product is {}, not {}",
                               node_label(*m->node), part->type().to_string(),
                               out->type().to_string());
        record.parts.push_back({m->node->name(), m->node->target(), start, start + m->columns});
        start += m->columns;
        replaced[out] = part;
      }
      for (const Member* m : members) {
        for (Value* out : m->node->outputs())
          if (out != nullptr) out->set_producer(nullptr);
        if (m->transpose != nullptr) old_transposes.insert(m->transpose);
        dead.insert(m->node);
      }
      program.concatenated.push_back(std::move(record));
    }
    // Their only readers were the products just replaced.
    for (Node* t : old_transposes) {
      t->output()->set_producer(nullptr);
      dead.insert(t);
    }
    // One sweep for the group's replacements and erasures, not one per product.
    for (const auto& node : program.graph.nodes()) ir::Graph::substitute(*node, replaced);
    program.graph.substitute_outputs(replaced);
    program.graph.erase_nodes(dead);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_concat_sibling_matmuls() {
  return std::make_unique<ConcatSiblingMatmuls>();
}

}  // namespace splice::passes
