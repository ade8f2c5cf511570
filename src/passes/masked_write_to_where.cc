// masked_write_to_where: a write through a boolean mask whose values line up with the mask
// position by position becomes an elementwise select, so its shape never depends on how many
// elements the mask keeps. transformers' Idefics3/SmolVLM vision embeddings (5.17) write
//
//   position_ids[mask] = pos_ids[mask]
//
// which torch.export records as
//
//   %index: i64[u0] = aten.index.Tensor(%pos_ids, [%mask])
//   %index_put: i64[1, 1024] = aten.index_put.default(%position_ids, [%mask], %index)
//
// and which becomes `%index_put = aten.where.self(%mask, %pos_ids, %position_ids)`. Run as
// written, the gather's length is the mask's count of true elements: the device must finish
// counting before the host can size the gather, a wait that keeps the CUDA backend from
// recording the call as a graph. The rewrite is exact: index_put stores the k-th kept element
// of the gather — pos_ids at the k-th true position, in row-major order — at the k-th true
// position of self, so every true position receives pos_ids' element there and every false
// one keeps self's, which is what where computes. It holds with the mask covering any run of
// dims after leading `None`s (whole dims), and for values that need no mask to line up: one
// that broadcasts over the dims after the mask (`x[mask] = 0`, `x[mask] = row`) is written to
// every true position alike, as where broadcasts it.
//
// Guards (each failure leaves the write as it is, a correct if slower data-dependent write):
// accumulate is false (an accumulating write adds, and repeats nothing here, but where would
// replace); exactly one index is a mask of bool (uint8 masks are deprecated and not matched)
// and every other entry is None before it (an integer index after a mask changes the layout);
// the mask's sizes are self's sizes at those dims, symbol for symbol (index_put refuses a
// mismatch, where would broadcast it away); the gather reads a tensor of self's type through
// the same mask (the same value, or the same computation of it); a broadcast value has self's
// dtype (index_put refuses another) and at most as many dims as follow the mask, each 1 or
// the size of self's dim it meets.
#include <algorithm>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// A bool mask in an index list: the mask and the first dim of self it covers.
struct MaskIndex {
  Value* mask = nullptr;
  int64_t first_dim = 0;
};

// The index list `[None, ..., None, mask]` (trailing Nones allowed) over `self_type`.
std::optional<MaskIndex> match_mask_index(const Arg& indices, const ir::TensorType& self_type) {
  if (!indices.is<std::vector<Value*>>()) return std::nullopt;
  const auto& list = indices.as<std::vector<Value*>>();
  std::optional<MaskIndex> found;
  for (size_t i = 0; i < list.size(); ++i) {
    Value* entry = list[i];
    if (entry == nullptr) continue;
    // A second tensor index (mask or not) after the mask, or an integer index at all, makes
    // a gather whose layout this rewrite does not reproduce.
    if (found || entry->kind() != ir::ValueKind::kTensor || entry->type().dtype != DType::kBool)
      return std::nullopt;
    found = MaskIndex{entry, static_cast<int64_t>(i)};
  }
  if (!found) return std::nullopt;
  const ir::TensorType& m = found->mask->type();
  if (found->first_dim + m.rank() > self_type.rank()) return std::nullopt;
  for (int64_t d = 0; d < m.rank(); ++d)
    if (!(m.sizes[d] == self_type.sizes[found->first_dim + d])) return std::nullopt;
  return found;
}

// Whether `a` and `b` are the same mask: one value, or one computation of the same inputs.
bool same_mask(const Value* a, const Value* b) {
  if (a == b) return true;
  const Node* pa = a->producer();
  const Node* pb = b->producer();
  return pa != nullptr && pb != nullptr && a == pa->output() && b == pb->output() &&
         same_computation(*pa, *pb);
}

// The tensor whose elements the values are, position by position, when they are gathered
// through `mask` from a tensor of self's type; else nullptr.
Value* aligned_source(const Value* values, const MaskIndex& mask, const ir::TensorType& self_type) {
  const Node* gather = producer_if(values, OpId::index_Tensor);
  if (gather == nullptr) return nullptr;
  Value* source = tensor_arg(*gather, "self");
  if (source == nullptr || !(source->type() == self_type)) return nullptr;
  std::optional<MaskIndex> read = match_mask_index(gather->arg("indices"), self_type);
  if (!read || read->first_dim != mask.first_dim || !same_mask(read->mask, mask.mask))
    return nullptr;
  return source;
}

// Whether `values` is written alike at every kept position: it broadcasts over the dims of
// self after the mask, and has self's dtype.
bool broadcasts_over_rest(const Value* values, const MaskIndex& mask,
                          const ir::TensorType& self_type) {
  const ir::TensorType& v = values->type();
  const int64_t rest = self_type.rank() - mask.first_dim - mask.mask->type().rank();
  if (v.dtype != self_type.dtype || v.rank() > rest) return false;
  for (int64_t d = 0; d < v.rank(); ++d) {
    const SymExpr& size = v.sizes[v.rank() - 1 - d];
    const SymExpr& self_size = self_type.sizes[self_type.rank() - 1 - d];
    if (!(size == SymExpr(1)) && !(size == self_size)) return false;
  }
  return true;
}

bool is_comparison(ir::OpId op) {
  return op == OpId::py_eq || op == OpId::py_lt || op == OpId::py_le || op == OpId::py_gt ||
         op == OpId::py_ge;
}

// The nodes that only check `v`'s size, readers first, if nothing else reads `v` (metadata
// asserts aside: erase_with_asserts takes those with `v`'s producer): the range asserts
// torch.export puts after a size the data decides (sym_size, a comparison, _assert_scalar:
// u0 >= 0, u0 <= 64). Once `v` is gone its size is gone, and there is nothing left for them to
// check.
std::optional<std::vector<Node*>> size_checks_of(const ir::Graph& graph, const Value* v) {
  if (is_graph_output(graph, v)) return std::nullopt;
  std::vector<Node*> asserts, comparisons, sizes;
  // Whether every reader of `x` is an _assert_scalar or a range constraint. A comparison
  // reading another size too (u0 <= s0) says nothing once u0 is gone.
  auto only_asserted = [&](const Value* x) {
    if (is_graph_output(graph, x)) return false;
    for (Node* a : graph.users(x)) {
      if (a->op_id() != OpId::_assert_scalar && a->op_id() != OpId::sym_constrain_range_for_size)
        return false;
      if (std::find(asserts.begin(), asserts.end(), a) == asserts.end()) asserts.push_back(a);
    }
    return true;
  };
  for (Node* n : graph.users(v)) {
    if (is_metadata_assert(*n)) continue;
    if (n->op_id() != OpId::sym_size_int || is_graph_output(graph, n->output()))
      return std::nullopt;
    sizes.push_back(n);
    for (Node* c : graph.users(n->output())) {
      if (c->op_id() == OpId::_assert_scalar || c->op_id() == OpId::sym_constrain_range_for_size) {
        if (std::find(asserts.begin(), asserts.end(), c) == asserts.end()) asserts.push_back(c);
        continue;
      }
      if (!is_comparison(c->op_id()) || !only_asserted(c->output())) return std::nullopt;
      if (std::find(comparisons.begin(), comparisons.end(), c) == comparisons.end())
        comparisons.push_back(c);
    }
  }
  std::vector<Node*> order = asserts;
  order.insert(order.end(), comparisons.begin(), comparisons.end());
  order.insert(order.end(), sizes.begin(), sizes.end());
  return order;
}

class MaskedWriteToWhere final : public Pass {
 public:
  std::string_view name() const override { return "masked_write_to_where"; }
  std::string_view description() const override {
    return "A write through a boolean mask, `x[mask] = y[mask]` (index_put of an index.Tensor "
           "through the same mask, from a tensor of x's type) or `x[mask] = v` with v "
           "broadcasting over the dims after the mask, becomes where(mask, y or v, x): the "
           "same elements, with no shape that depends on the mask's count (so no wait for the "
           "device, and a call the CUDA backend can record as a graph).";
  }

  Result<bool> run(ir::Program& program) override {
    Rewriter rw(program);
    ir::Graph& graph = program.graph;
    bool changed = false;
    for (Node* node : node_snapshot(graph)) {
      if (node->op_id() != OpId::index_put) continue;
      const std::optional<bool> accumulate = node->arg("accumulate").is<bool>()
                                                 ? std::optional(node->arg("accumulate").as<bool>())
                                                 : std::nullopt;
      Value* self = tensor_arg(*node, "self");
      Value* values = tensor_arg(*node, "values");
      if (accumulate != false || self == nullptr || values == nullptr) continue;
      const ir::TensorType& self_type = self->type();
      std::optional<MaskIndex> mask = match_mask_index(node->arg("indices"), self_type);
      if (!mask) continue;
      Value* source = aligned_source(values, *mask, self_type);
      if (source == nullptr && !broadcasts_over_rest(values, *mask, self_type)) continue;
      // The mask over self's dims: a leading 1 per None before it, a trailing 1 per dim after.
      std::vector<ir::SymIntArg> shape;
      for (int64_t d = 0; d < self_type.rank(); ++d) {
        const bool covered =
            d >= mask->first_dim && d < mask->first_dim + mask->mask->type().rank();
        if (!covered) {
          shape.emplace_back(int64_t{1});
        } else if (auto c = static_size(self_type, d)) {
          shape.emplace_back(*c);
        } else {
          shape.clear();
          break;
        }
      }
      Value* cond = mask->mask;
      if (cond->type().rank() != self_type.rank()) {
        // A symbolic mask dim would need its SymInt value here: leave such writes alone.
        if (static_cast<int64_t>(shape.size()) != self_type.rank()) continue;
        SPLICE_ASSIGN_OR_RETURN(cond, rw.insert_value(node, OpId::view, {Arg{cond}, Arg{shape}}, {},
                                                      node->output()->name() + "_mask"));
      }
      SPLICE_TRY(rw.replace(node, OpId::where_self,
                            {Arg{cond}, Arg{source != nullptr ? source : values}, Arg{self}}));
      // The gather, read by nothing else now but the checks of its size, would still wait
      // for the mask's count.
      if (Node* gather = values->producer(); source != nullptr && gather != nullptr) {
        if (auto checks = size_checks_of(graph, values)) {
          const std::vector<Value*> read = gather->operands();
          checks->push_back(gather);
          for (Node* n : *checks) erase_with_asserts(graph, n);
          for (const Value* v : read) erase_dead_producers(graph, v);
        }
      }
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_masked_write_to_where() {
  return std::make_unique<MaskedWriteToWhere>();
}

}  // namespace splice::passes
