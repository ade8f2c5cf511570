// where_mask_to_select_write: recognises the core-ATen form of `x[:, i] = v` and turns it
// back into a slice write. torch.export 2.11 (default decomposition table) writes:
//
//   %arange: i64[6] = aten.arange.start_step(0, 6, 1, ...)
//   %view: i64[1, 6] = aten.view.default(%arange, [1, -1])
//   %eq: bool[1, 6] = aten.eq.Scalar(%view, 5)               (the index, already normalised)
//   %unsqueeze: f32[4, 1] = aten.unsqueeze.default(%copy, 1)
//   %expand: f32[4, 6] = aten.expand.default(%unsqueeze, [4, 6])
//   %where: f32[4, 6] = aten.where.self(%eq, %expand, %x)
//
// which becomes `%where = aten.slice_scatter.default(%x, %unsqueeze, 1, 5, 6, 1)`. The index may
// also be a SymInt (`x[:, pos.item()] = v`) whose range, from the program's asserts, lies in
// [0, 6): then the write starts at it and ends at a new `_operator.add(i, 1)`. The mask
// chain and the expand are erased when nothing else reads them. Every guard must hold; each
// failing guard leaves the where as it is (it stays a correct, if slower, elementwise select).
#include "ir/sym_bounds.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

struct IndexMask {
  int64_t dim = 0;  // dim of x the mask selects along
  // The index, in [0, size): a constant, or a SymInt value (a position read with .item())
  // whose range lies inside [0, size).
  int64_t index = 0;
  Value* index_value = nullptr;
};

// The length N of `arange(N)` (or arange(0, N) / arange(0, N, 1)) producing `v`, else nullopt.
std::optional<int64_t> arange_length(const Value* v) {
  const Node* node = v->producer();
  if (node == nullptr) return std::nullopt;
  const ir::OpId t = node->op_id();
  std::optional<int64_t> start = 0, end, step = 1;
  if (t == OpId::arange) {
    end = constant_int(node->arg("end"));
  } else if (t == OpId::arange_start || t == OpId::arange_start_step) {
    start = constant_int(node->arg("start"));
    end = constant_int(node->arg("end"));
    if (t == OpId::arange_start_step) step = constant_int(node->arg("step"));
  } else {
    return std::nullopt;
  }
  // Float bounds or a non-unit step make a different sequence than 0, 1, ..., N-1.
  if (start != 0 || step != 1 || !end || *end < 0) return std::nullopt;
  return end;
}

// Matches `eq(reshape(arange(N)), i)` as a mask over `x_type` that is true exactly on index i
// of one dim of size N. Example: x f32[4, 6], mask bool[1, 6] = eq(view(arange(6), [1, -1]),
// 5) → {dim 1, index 5}.
std::optional<IndexMask> match_index_mask(const Value* cond, const ir::TensorType& x_type,
                                          const SymRanges& ranges) {
  const Node* eq = producer_if(cond, OpId::eq_Scalar);
  if (eq == nullptr) return std::nullopt;
  std::optional<int64_t> index = constant_int(eq->arg("other"));
  // A symbolic index: its range stands in for the value (checked against N below).
  Value* index_value = nullptr;
  SymInterval range;
  if (auto* v = std::get_if<Value*>(&eq->arg("other").data);
      !index && v != nullptr && (*v)->kind() == ir::ValueKind::kSymInt && (*v)->expr()) {
    index_value = *v;
    range = sym_bounds(*(*v)->expr(), ranges);
  }
  const Value* seq = tensor_arg(*eq, "self");
  if ((!index && index_value == nullptr) || seq == nullptr) return std::nullopt;
  // Views, reshapes and unsqueezes of a 1-d sequence keep its element order, so the one
  // non-unit dim of the mask enumerates 0..N-1.
  while (seq->producer() != nullptr) {
    const ir::OpId t = seq->producer()->op_id();
    if (t != OpId::view && t != OpId::reshape && t != OpId::_unsafe_view && t != OpId::unsqueeze)
      break;
    seq = tensor_arg(*seq->producer(), "self");
    if (seq == nullptr) return std::nullopt;
  }
  std::optional<int64_t> n = arange_length(seq);
  // An integer sequence compares exactly against the integer index.
  if (!n || !is_integral(seq->type().dtype)) return std::nullopt;
  // N == 1 leaves every mask dim of size 1: which dim it selects along is ambiguous.
  if (*n < 2) return std::nullopt;
  const ir::TensorType& mask = cond->type();
  const int64_t offset = x_type.rank() - mask.rank();  // the mask broadcasts from the right
  if (offset < 0) return std::nullopt;
  std::optional<int64_t> dim;
  for (int64_t d = 0; d < mask.rank(); ++d) {
    std::optional<int64_t> s = mask.sizes[d].constant();
    if (s == 1) continue;
    // A second non-unit dim, or one that is not N, is not a one-index mask.
    if (s != n || dim) return std::nullopt;
    dim = d + offset;
  }
  if (!dim || static_size(x_type, *dim) != n) return std::nullopt;
  // Outside [0, N) the mask is all false and nothing is written: leave such a where alone, and
  // a symbolic index that may lie there too.
  if (index_value != nullptr) {
    if (!range.lo || !range.hi || *range.lo < 0 || *range.hi >= *n) return std::nullopt;
    return IndexMask{*dim, 0, index_value};
  }
  if (*index < 0 || *index >= *n) return std::nullopt;
  return IndexMask{*dim, *index, nullptr};
}

// How the true branch `v` broadcasts into the written slice (x's shape with size 1 at `dim`):
// returns the expand sizes it needs (empty when `v` already has the slice's shape), or
// nullopt when that is not provable statically. Example: x f32[4, 6], dim 1, v f32[4, 1] →
// {} (as is); v f32[] → [4, 1]; v f32[s0, 1] with x f32[4, 6] → nullopt.
std::optional<std::vector<ir::SymIntArg>> broadcast_into_slice(const ir::TensorType& v,
                                                               const ir::TensorType& x,
                                                               int64_t dim) {
  const int64_t offset = x.rank() - v.rank();
  if (offset < 0) return std::nullopt;
  std::vector<ir::SymIntArg> sizes;
  bool needs_expand = offset > 0;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const SymExpr target = d == dim ? SymExpr(1) : x.sizes[d];
    if (d >= offset && v.sizes[d - offset] == target) {
      sizes.push_back(int64_t{-1});  // kept as it is
      continue;
    }
    // A new or size-1 dim broadcasts to the target, which must then be a constant (expand's
    // sizes would otherwise need a SymInt value the graph may not have).
    if (d >= offset && v.sizes[d - offset].constant() != 1) return std::nullopt;
    std::optional<int64_t> c = target.constant();
    if (!c) return std::nullopt;
    sizes.push_back(*c);
    needs_expand = true;
  }
  if (!needs_expand) return std::vector<ir::SymIntArg>{};
  return sizes;
}

Result<bool> rewrite(Rewriter& rw, Node* where) {
  Value* cond = tensor_arg(*where, "condition");
  Value* branch = tensor_arg(*where, "self");
  Value* x = tensor_arg(*where, "other");
  Value* out = where->output();
  if (cond == nullptr || branch == nullptr || x == nullptr || out == nullptr) return false;
  // where promotes dtypes and broadcasts shapes: only a result of exactly x's type is a write
  // into x (then the written elements are the branch converted to x's dtype, as slice_scatter
  // converts src).
  if (!(out->type() == x->type()) || x->type().rank() == 0) return false;
  std::optional<IndexMask> mask = match_index_mask(cond, x->type(), rw.program().ranges);
  if (!mask) return false;

  // The expand only broadcasts the value along the written dim and the others; slice_scatter
  // takes the unexpanded value (any broadcast still needed is re-added for the slice alone).
  Value* src = branch;
  if (Node* expand = producer_if(branch, OpId::expand)) {
    if (Value* inner = tensor_arg(*expand, "self")) src = inner;
  }
  auto expand_sizes = broadcast_into_slice(src->type(), x->type(), mask->dim);
  if (!expand_sizes && src != branch) {
    src = branch;
    expand_sizes = broadcast_into_slice(src->type(), x->type(), mask->dim);
  }
  // The branch varies along the written dim (or its sizes are not comparable): the values
  // written at index i are not one slice-shaped tensor we can name.
  if (!expand_sizes) return false;

  if (!expand_sizes->empty()) {
    SPLICE_ASSIGN_OR_RETURN(src,
                            rw.insert_value(where, OpId::expand, {Arg{src}, Arg{*expand_sizes}}, {},
                                            src->name() + "_expand"));
  }
  Arg start{mask->index}, end{mask->index + 1};
  if (mask->index_value != nullptr) {
    start = Arg{mask->index_value};
    SPLICE_ASSIGN_OR_RETURN(Value * next, rw.insert_value(where, OpId::py_add,
                                                          {Arg{mask->index_value}, Arg{int64_t{1}}},
                                                          {}, mask->index_value->name() + "_end"));
    end = Arg{next};
  }
  SPLICE_TRY(rw.replace(where, OpId::slice_scatter,
                        {Arg{x}, Arg{src}, Arg{mask->dim}, start, end, Arg{int64_t{1}}}));
  erase_dead_producers(rw.graph(), cond);
  erase_dead_producers(rw.graph(), branch);
  return true;
}

class WhereMaskToSelectWrite final : public Pass {
 public:
  std::string_view name() const override { return "where_mask_to_select_write"; }
  std::string_view description() const override {
    return "Recognises the core-ATen form of `x[:, i] = v`, where(eq(view(arange(N)), i), "
           "expand(unsqueeze(v)), x) with N x's size on one dim and i a constant in [0, N) (or a "
           "SymInt whose range lies in [0, N): a position read with .item()), "
           "and rewrites it into slice_scatter(x, unsqueeze(v), dim, i, i + 1), so it is "
           "planned as a slice write instead of an elementwise select over the whole tensor. "
           "It applies only when the where's result has exactly x's type, the mask is that "
           "one-index arange comparison broadcast along the other dims, and the value is the "
           "same along the written dim; the mask chain is erased when nothing else reads it.";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    Rewriter rw(program);
    for (Node* node : node_snapshot(program.graph)) {
      if (node->op_id() != OpId::where_self) continue;
      SPLICE_ASSIGN_OR_RETURN(bool c, rewrite(rw, node));
      changed |= c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_where_mask_to_select_write() {
  return std::make_unique<WhereMaskToSelectWrite>();
}

}  // namespace splice::passes
