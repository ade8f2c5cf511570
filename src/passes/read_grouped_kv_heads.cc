// read_grouped_kv_heads: an attention whose keys and values repeat each KV head for a group of
// query heads reads the unrepeated heads instead (enable_gqa), so no copy repeats them and the
// kernel reads each K/V head once for its whole group. Grouped-query models repeat them by
// hand before attention (transformers' repeat_kv, lerobot's SmolVLA):
//
//   %u = aten.unsqueeze.default(%k, 2)                          k [b, kvh, s, d]
//   %e = aten.expand.default(%u, [b, kvh, rep, s, d])
//   %c = aten.clone.default(%e)                                (reshape of a non-contiguous
//   %r = aten.view.default(%c, [b, kvh * rep, s, d])             tensor: a copy, then a view)
//   %o = aten.scaled_dot_product_attention.default(%q, %r, %vr, ...)
//
// becomes `%o = aten.scaled_dot_product_attention.default(%q, %k, %v, ..., enable_gqa=True)`:
// head i of the repeated tensor is head i / rep of the original, exactly the head that
// enable_gqa gives query head i. Transposes and permutes between the repeat and the attention
// (SmolVLA repeats [b, s, kvh, d] and transposes after) are rebuilt on the original when they
// move the repeated dim to the heads' place (dim -3). Keys and values must repeat by the same
// factor; anything else is left as written.
#include <algorithm>
#include <numeric>
#include <variant>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// `x` repeated `rep` times along dim `dim`, each element `rep` times in a row.
struct Repeat {
  Value* x = nullptr;
  int64_t dim = 0;
  int64_t rep = 1;
};

// A slice that keeps all of its dim: start 0, end at least the size, step 1.
bool is_whole_slice(const Value* v) {
  const Node* s = producer_if(v, OpId::slice_Tensor);
  const Value* in = s == nullptr ? nullptr : tensor_arg(*s, "self");
  if (in == nullptr || !(in->type() == v->type())) return false;
  const std::optional<int64_t> start = constant_int(s->arg("start")),
                               step = constant_int(s->arg("step"));
  return (s->arg("start").is_none() || start == 0) && (s->arg("step").is_none() || step == 1);
}

// Matches view(clone(expand(unsqueeze(x, dim + 1)))) merging the new dim into `dim` (the
// clone may be missing: reshape and _unsafe_view read the expand directly).
std::optional<Repeat> match_repeat(const Value* r) {
  const Node* merge = r->producer();
  if (merge == nullptr || (merge->op_id() != OpId::view && merge->op_id() != OpId::reshape &&
                           merge->op_id() != OpId::_unsafe_view))
    return std::nullopt;
  const Value* e = tensor_arg(*merge, "self");
  if (const Node* c = e == nullptr ? nullptr : producer_if(e, OpId::clone))
    e = tensor_arg(*c, "self");
  const Node* expand = e == nullptr ? nullptr : producer_if(e, OpId::expand);
  const Value* u = expand == nullptr ? nullptr : tensor_arg(*expand, "self");
  // transformers' `x[:, :, None, :, :]` exports as an unsqueeze and whole-dim slices.
  while (u != nullptr && is_whole_slice(u)) u = tensor_arg(*u->producer(), "self");
  const Node* unsqueeze = u == nullptr ? nullptr : producer_if(u, OpId::unsqueeze);
  Value* x = unsqueeze == nullptr ? nullptr : tensor_arg(*unsqueeze, "self");
  if (x == nullptr) return std::nullopt;
  const ir::TensorType &xt = x->type(), &et = e->type(), &rt = r->type();
  const int64_t n = xt.rank();
  const std::optional<int64_t> a =
      wrap_dim(constant_int(unsqueeze->arg("dim")).value_or(-999), n + 1);
  // The new dim must follow the one it merges into.
  if (!a || *a < 1 || *a > n || et.rank() != n + 1 || rt.rank() != n) return std::nullopt;
  const int64_t dim = *a - 1;
  const std::optional<int64_t> rep = static_size(et, *a), heads = static_size(xt, dim);
  if (!rep || *rep < 1 || !heads || static_size(rt, dim) != *heads * *rep) return std::nullopt;
  for (int64_t d = 0; d < n; ++d) {
    if (d == dim) continue;
    // Every other dim keeps its size through the expand and the merge.
    if (!(rt.sizes[d] == xt.sizes[d]) || !(et.sizes[d < *a ? d : d + 1] == xt.sizes[d]))
      return std::nullopt;
  }
  return Repeat{x, dim, *rep};
}

// An attention operand made of a repeat and then transposes or permutes: the repeat, the
// views after it (outermost last), and where they move the repeated dim.
struct RepeatedOperand {
  Repeat repeat;
  std::vector<const Node*> views;
  int64_t final_dim = 0;
};

std::optional<RepeatedOperand> match_operand(const Value* kv) {
  std::vector<const Node*> views;
  const Value* cur = kv;
  while (cur->producer() != nullptr && (cur->producer()->op_id() == OpId::transpose_int ||
                                        cur->producer()->op_id() == OpId::permute)) {
    views.push_back(cur->producer());
    cur = tensor_arg(*cur->producer(), "self");
    if (cur == nullptr) return std::nullopt;
  }
  std::optional<Repeat> repeat = match_repeat(cur);
  if (!repeat) return std::nullopt;
  // Follow the repeated dim through the views, innermost first.
  const int64_t n = cur->type().rank();
  std::vector<int64_t> where(n);  // where[d]: the dim of the result that dim d went to
  std::iota(where.begin(), where.end(), 0);
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    const Node* v = *it;
    std::vector<int64_t> perm(n);  // perm[i]: the input dim that output dim i reads
    std::iota(perm.begin(), perm.end(), 0);
    if (v->op_id() == OpId::transpose_int) {
      auto d0 = wrap_dim(constant_int(v->arg("dim0")).value_or(-999), n);
      auto d1 = wrap_dim(constant_int(v->arg("dim1")).value_or(-999), n);
      if (!d0 || !d1) return std::nullopt;
      std::swap(perm[*d0], perm[*d1]);
    } else {
      const Arg& dims = v->arg("dims");
      if (!dims.is<std::vector<ir::SymIntArg>>()) return std::nullopt;
      const auto& list = dims.as<std::vector<ir::SymIntArg>>();
      if (static_cast<int64_t>(list.size()) != n) return std::nullopt;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t* c = std::get_if<int64_t>(&list[i]);
        auto d = wrap_dim(c == nullptr ? -999 : *c, n);
        if (!d) return std::nullopt;
        perm[i] = *d;
      }
    }
    std::vector<int64_t> moved(n);
    for (int64_t i = 0; i < n; ++i) moved[perm[i]] = i;
    for (int64_t& w : where) w = moved[w];
  }
  std::reverse(views.begin(), views.end());
  return RepeatedOperand{*repeat, views, where[repeat->dim]};
}

// The operand's views rebuilt on the unrepeated tensor, before `before`.
Result<Value*> rebuild(Rewriter& rw, const Node* before, const RepeatedOperand& op) {
  Value* x = op.repeat.x;
  for (const Node* v : op.views) {
    std::vector<Arg> args = v->args();
    args[0] = Arg{x};
    SPLICE_ASSIGN_OR_RETURN(
        x, rw.insert_value(before, v->op_id(), std::move(args), {}, v->output()->name()));
  }
  return x;
}

class ReadGroupedKvHeads final : public Pass {
 public:
  std::string_view name() const override { return "read_grouped_kv_heads"; }
  std::string_view description() const override {
    return "An attention (scaled_dot_product_attention) whose key and value repeat each head "
           "rep times in a row (unsqueeze, expand, clone, view: transformers' repeat_kv) reads "
           "the unrepeated key and value with enable_gqa instead, which gives query head i the "
           "same head i / rep; transposes or permutes after the repeat are rebuilt on the "
           "unrepeated tensors when they put the repeated dim at dim -3. The repeat's copies "
           "go away.";
  }

  Result<bool> run(ir::Program& program) override {
    Rewriter rw(program);
    ir::Graph& graph = program.graph;
    bool changed = false;
    for (Node* node : node_snapshot(graph)) {
      if (node->op_id() != OpId::scaled_dot_product_attention) continue;
      Value* q = tensor_arg(*node, "query");
      Value* k = tensor_arg(*node, "key");
      Value* v = tensor_arg(*node, "value");
      if (q == nullptr || k == nullptr || v == nullptr) continue;
      std::optional<RepeatedOperand> rk = match_operand(k), rv = match_operand(v);
      const int64_t heads = q->type().rank() - 3;
      if (!rk || !rv || heads < 0 || rk->repeat.rep != rv->repeat.rep || rk->final_dim != heads ||
          rv->final_dim != heads || k->type().rank() != heads + 3 || v->type().rank() != heads + 3)
        continue;
      // The repeated heads are q's heads (not a single head broadcast to them).
      const std::optional<int64_t> q_heads = static_size(q->type(), heads);
      if (!q_heads || static_size(k->type(), heads) != q_heads ||
          static_size(v->type(), heads) != q_heads)
        continue;
      // enable_gqa groups only the heads: every other dim of q, k and v already agrees (the
      // op's rule checked that), and the repeat leaves them as they were.
      SPLICE_ASSIGN_OR_RETURN(Value * k1, rebuild(rw, node, *rk));
      SPLICE_ASSIGN_OR_RETURN(Value * v1, rebuild(rw, node, *rv));
      std::vector<Arg> args = node->args();
      args[1] = Arg{k1};
      args[2] = Arg{v1};
      args[node->arg_index("enable_gqa")] = Arg{true};
      SPLICE_TRY(rw.replace(node, OpId::scaled_dot_product_attention, std::move(args)));
      erase_unread_views(graph, k);
      erase_unread_views(graph, v);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_read_grouped_kv_heads() {
  return std::make_unique<ReadGroupedKvHeads>();
}

}  // namespace splice::passes
