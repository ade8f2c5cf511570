// functionalize: the training IR that torch.export.export returns keeps the model's in-place
// ops (x.add_(y), cache.index_copy_(...), res[..., :h] = y as copy_ into a slice) on buffers,
// user inputs, fresh tensors and views of any of them. This pass, first in the pipeline,
// rewrites them into the functional program run_decompositions() would give, with eager's
// semantics: every in-place op becomes its functional twin (inplace_list.inc), cast back to
// the mutated tensor's dtype; a write through a chain of views becomes the inverse of each
// view, innermost first, up to the storage's root (slice_scatter, select_scatter, ...), and
// every later read of the root or of any view of it reads the new value — a view is
// regenerated from the updated root, so a view taken before the write sees it, as in eager.
// Storage is tracked per root (a graph input or a computed tensor) with the chain of views
// from it; sometimes-views alias exactly when eager's would (functionalize_views.cc), so a
// write through a copy leaves the base alone. A written buffer or user input becomes a
// buffer-mutation or user-input-mutation output, ahead of the user outputs in graph-input
// order as run_decompositions() orders them; an in-place op's result (`return x.add_(1)`) is
// the tensor it wrote. Writing into an expanded view is eager's error; writing a parameter or
// a lifted constant is refused. Nodes the rewrite leaves unread (the in-place ops, views of
// old values, write-backs into temporaries nothing reads) are erased.
#include <map>
#include <set>

#include "passes/functionalize.h"

#include "ir/inplace_ops.h"

namespace splice::passes {

namespace {

using func::Strides;
using ir::Arg;
using ir::Node;
using ir::Value;

// One step of a view chain: output `out` of view node `view`.
struct Step {
  const Node* view;
  size_t out;
  Value* input;  // the view's input as the program wrote it (its alias record's key)
};

// What the pass knows of a tensor that shares storage: its root, the views from the root to
// it, its value as of the root's version `version`, and its strides.
struct Alias {
  Value* root = nullptr;
  std::vector<Step> path;
  Value* current = nullptr;
  int version = 0;
  Strides strides;
  // A view on the chain is a sometimes-view only the run can decide (ViewOutcome::undecided).
  const Node* undecided = nullptr;
};

struct Root {
  Value* latest = nullptr;  // the whole storage's value now
  int version = 0;          // how many writes it has had
};

class Functionalizer {
 public:
  explicit Functionalizer(ir::Program& program) : program_(program), rw_(program) {}

  Result<bool> run() {
    bool any = false;
    for (const auto& n : program_.graph.nodes()) any |= ir::functional_of(n->op()).has_value();
    if (!any) return false;
    for (Node* node : node_snapshot(program_.graph)) SPLICE_TRY(visit(node));
    SPLICE_TRY(finish());
    return true;
  }

 private:
  // The alias record of `v`, making `v` a root of its own storage if it has none yet.
  Alias& alias_of(Value* v) {
    auto it = aliases_.find(v);
    if (it != aliases_.end()) return it->second;
    Alias a;
    a.root = v;
    a.current = v;
    a.strides = func::contiguous_strides(v->type());
    roots_.emplace(v, Root{v, 0});
    return aliases_.emplace(v, std::move(a)).first->second;
  }

  // `v`'s value now: itself unless its storage was written since it was taken; then the same
  // view chain replayed on the root's latest value.
  Result<Value*> current(Value* v, const Node* before) {
    auto it = aliases_.find(v);
    if (it == aliases_.end()) return v;
    Alias& a = it->second;
    const Root& root = roots_.at(a.root);
    if (a.version == root.version) return a.current;
    SPLICE_TRY(decided(a, before));
    Value* base = root.latest;
    for (const Step& s : a.path) {
      SPLICE_ASSIGN_OR_RETURN(base, func::replay_view(rw_, *s.view, s.out, base, before));
    }
    // replay may have rehashed nothing: aliases_ is a std::map, references stay valid.
    a.current = base;
    a.version = root.version;
    return base;
  }

  // A read or write through `a` that depends on whether its undecided sometimes-view aliases.
  Result<void> decided(const Alias& a, const Node* at) {
    if (a.undecided == nullptr) return ok_result();
    return make_error(ErrorKind::kUnsupportedOp,
                      "{}: whether {} returns a view of its non-contiguous input of symbolic "
                      "shape or a copy is only known when it runs, and {} depends on it",
                      at ? node_label(*at) : std::string("the program's outputs"),
                      node_label(*a.undecided), at ? "this node" : "they");
  }

  // Replaces every tensor `node` reads by its value now.
  Result<void> sync_operands(Node* node) {
    for (Arg& arg : node->args()) {
      if (arg.is<Value*>()) {
        Value* v = arg.as<Value*>();
        if (v == nullptr || !v->is_tensor()) continue;
        SPLICE_ASSIGN_OR_RETURN(Value * now, current(v, node));
        arg = Arg{now};
      } else if (arg.is<std::vector<Value*>>()) {
        std::vector<Value*> list = arg.as<std::vector<Value*>>();
        for (Value*& v : list) {
          if (v == nullptr || !v->is_tensor()) continue;
          SPLICE_ASSIGN_OR_RETURN(v, current(v, node));
        }
        arg = Arg{std::move(list)};
      }
    }
    return ok_result();
  }

  Result<void> visit(Node* node) {
    // The operands as the original (unsynced) values, for the alias records below.
    Value* base = func::view_base(*node);
    SPLICE_TRY(sync_operands(node));
    if (auto functional = ir::functional_of(node->op())) return write(node, base, *functional);
    if (base == nullptr || !base->is_tensor()) return ok_result();
    auto known = aliases_.find(base);
    const Strides in = known != aliases_.end() ? known->second.strides
                                               : Strides{func::contiguous_strides(base->type())};
    SPLICE_ASSIGN_OR_RETURN(func::ViewOutcome view, func::classify_view(rw_.env(), *node, in));
    if (!view.aliases) return ok_result();
    Alias& from = alias_of(base);
    const Root& root = roots_.at(from.root);
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      Value* out = node->output(i);
      if (out == nullptr || !out->is_tensor()) continue;
      Alias a;
      a.root = from.root;
      a.path = from.path;
      a.path.push_back(Step{node, i, base});
      a.current = out;  // computed from the synced base: current as of now
      a.version = root.version;
      a.strides = i < view.strides.size() ? view.strides[i] : std::nullopt;
      a.undecided = view.undecided ? node : from.undecided;
      aliases_[out] = std::move(a);
    }
    return ok_result();
  }

  // An in-place op: its functional twin computes self's new value, which is written back
  // through self's view chain into the root.
  Result<void> write(Node* node, Value* self, OpId functional) {
    if (self == nullptr || !self->is_tensor())
      return make_error(ErrorKind::kBadArchive, "{}: an in-place op without a tensor to write",
                        node_label(*node));
    Alias& target = alias_of(self);
    SPLICE_TRY(decided(target, node));
    if (func::overlaps(rw_.env(), self->type().sizes, target.strides))
      return make_error(ErrorKind::kBadArchive,
                        "{}: unsupported operation: more than one element of the written-to "
                        "tensor refers to a single memory location. Please clone() the tensor "
                        "before performing the operation.",
                        node_label(*node));
    // copy_ of a tensor's own value onto it (export writes `self.pos += 1` on a buffer as
    // add_ and then copy_(pos, add_), add_ being pos): nothing changes, and PyTorch's
    // functionalization writes nothing, so neither does this.
    if (functional == OpId::copy && node->arg("src").is<Value*>() &&
        node->arg("self").is<Value*>() &&
        node->arg("src").as<Value*>() == node->arg("self").as<Value*>()) {
      if (Value* out = node->output(0)) aliases_[out] = aliases_.at(self);
      return ok_result();
    }
    // Eval-mode dropout_ (nn.Dropout(inplace=True) after model.eval()) leaves self as it is:
    // PyTorch's functionalization records no write for it (run_decompositions({}) drops it),
    // and neither does this. Training mode stays a dropout, which decompose_composites refuses.
    if (functional == OpId::dropout && node->arg("train").is<bool>() &&
        !node->arg("train").as<bool>()) {
      if (Value* out = node->output(0)) aliases_[out] = aliases_.at(self);
      return ok_result();
    }
    std::string name = node->name();
    while (!name.empty() && name.back() == '_') name.pop_back();
    SPLICE_ASSIGN_OR_RETURN(Node * f, rw_.insert(node, functional, node->args(), {}, name));
    Value* value = f->output(0);
    // Eager's in-place kernels write the result in self's dtype.
    if (value->type().dtype != self->type().dtype) {
      SPLICE_ASSIGN_OR_RETURN(value,
                              rw_.insert_value(node, OpId::_to_copy, {Arg{value}},
                                               {{"dtype", Arg{self->type().dtype}}}, "_to_copy"));
    }
    // Back up the chain: each view's inverse writes the new value into the view's base as it
    // is now. The bases are taken afresh here, from the root's latest value, as PyTorch's
    // functionalization (and so the run_decompositions twin) takes them at the write: the
    // write planner then sees the same order of src's producer and the base as in the twin.
    const std::vector<Step> path = target.path;
    Value* root_value = target.root;
    std::vector<Value*> bases{roots_.at(root_value).latest};
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      SPLICE_ASSIGN_OR_RETURN(
          Value * next, func::replay_view(rw_, *path[i].view, path[i].out, bases.back(), node));
      bases.push_back(next);
    }
    Value* written = value;
    for (size_t i = path.size(); i-- > 0;) {
      const Node& view = *path[i].view;
      SPLICE_ASSIGN_OR_RETURN(
          written, func::scatter_view(rw_, view, path[i].out, bases[i], written, node, *node));
    }
    Root& root = roots_.at(root_value);
    root.latest = written;
    ++root.version;
    written_roots_.insert(root_value);
    // self and the op's result are the written tensor. A view is read from now on as PyTorch's
    // functionalization reads it (and so the twin): regenerated from the updated root at its
    // next read, not `value` itself; a root is `value`.
    for (Value* v : {self, node->output(0)}) {
      if (v == nullptr) continue;
      Alias a = aliases_.at(self);
      a.current = value;
      a.version = path.empty() ? root.version : root.version - 1;
      aliases_[v] = std::move(a);
    }
    return ok_result();
  }

  // Graph outputs read the values now; written inputs become mutation outputs; what the
  // rewrite left unread is erased.
  Result<void> finish() {
    ir::Graph& g = program_.graph;
    for (ir::GraphOutput& o : g.outputs()) {
      if (!o.is<Value*>() || o.as<Value*>() == nullptr || !o.as<Value*>()->is_tensor()) continue;
      SPLICE_ASSIGN_OR_RETURN(Value * now, current(o.as<Value*>(), nullptr));
      o = Arg{now};
    }
    ir::Signature& sig = program_.signature;
    std::vector<ir::GraphOutput> outputs;
    std::vector<ir::OutputSpec> specs;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      Value* in = g.inputs()[i];
      if (in == nullptr || !written_roots_.count(in)) continue;
      const ir::InputSpec* spec = i < sig.inputs.size() ? &sig.inputs[i] : nullptr;
      ir::OutputSpec out;
      if (spec == nullptr || spec->kind == ir::InputKind::kUserInput) {
        out = {ir::OutputKind::kUserInputMutation, in->name()};
      } else if (spec->kind == ir::InputKind::kBuffer) {
        out = {ir::OutputKind::kBufferMutation, spec->target};
      } else {
        return make_error(ErrorKind::kUnsupportedOp,
                          "the program writes {} '{}' in place; splice writes only buffers and "
                          "user inputs",
                          ir::input_kind_name(spec->kind), spec->target);
      }
      // Assigned, not brace-built: GCC 12 sees a variant temporary as maybe-uninitialized.
      outputs.emplace_back().data = roots_.at(in).latest;
      specs.push_back(std::move(out));
    }
    if (outputs.empty()) {  // no input written: the signature stays as it is
      erase_unread();
      return ok_result();
    }
    outputs.insert(outputs.end(), g.outputs().begin(), g.outputs().end());
    if (sig.outputs.size() < g.outputs().size())
      sig.outputs.resize(g.outputs().size(), ir::OutputSpec{ir::OutputKind::kUserOutput, ""});
    specs.insert(specs.end(), sig.outputs.begin(), sig.outputs.end());
    g.outputs() = std::move(outputs);
    sig.outputs = std::move(specs);
    erase_unread();
    return ok_result();
  }

  // Erases, last first, the tensor ops nothing reads any more: the in-place ops (every reader
  // now reads the functional value), views of old values, and write-backs into temporaries
  // nothing reads (as torch's functionalization leaves them to dead-code elimination).
  void erase_unread() {
    ir::Graph& g = program_.graph;
    std::map<const Value*, int> uses;
    for (const auto& n : g.nodes())
      for (const Value* v : n->operands()) ++uses[v];
    for (const ir::GraphOutput& o : g.outputs())
      if (o.is<Value*>()) ++uses[o.as<Value*>()];
    std::vector<Node*> nodes = node_snapshot(g);
    for (size_t i = nodes.size(); i-- > 0;) {
      Node* n = nodes[i];
      const ir::OpSchema& op = n->op();
      // Tensor ops only: host ops may bind symbols or check assertions.
      if (op.returns.empty() || op.runs_on_host() || op.reads_metadata_only()) continue;
      bool used = false;
      for (const Value* out : n->outputs()) used |= out != nullptr && uses[out] > 0;
      if (used) continue;
      for (const Value* v : n->operands()) --uses[v];
      g.erase_node(n);
    }
  }

  ir::Program& program_;
  Rewriter rw_;
  std::map<const Value*, Alias> aliases_;
  std::map<const Value*, Root> roots_;
  std::set<const Value*> written_roots_;
};

class Functionalize final : public Pass {
 public:
  std::string_view name() const override { return "functionalize"; }
  std::string_view description() const override {
    return "Rewrites the in-place ops of the training IR into the functional program "
           "run_decompositions() gives: each in-place op becomes its functional twin (cast "
           "back to the written tensor's dtype), a write through views becomes each view's "
           "inverse up to the storage's root (slice_scatter, select_scatter, transpose, "
           "view, ...), later reads of the root or of any view of it read the new value "
           "(views regenerated), sometimes-views (reshape, contiguous, to, flatten, dropout) "
           "alias exactly when eager's would, and written buffers and user inputs become "
           "mutation outputs. Writing into an expanded view is eager's error.";
  }
  Result<bool> run(ir::Program& program) override { return Functionalizer(program).run(); }
};

}  // namespace

std::unique_ptr<Pass> make_functionalize() { return std::make_unique<Functionalize>(); }

}  // namespace splice::passes
