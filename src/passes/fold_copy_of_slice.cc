// fold_copy_of_slice: export writes `y[:, a:b] = s` as `copy(slice(y, ...), s)` feeding a
// slice_scatter. The functional copy(dst, src) is `src` broadcast to dst's shape and converted
// to dst's dtype (write-semantics.md §1): dst only supplies a shape and a dtype. This pass
// replaces the copy by exactly that — src itself, or an aten._to_copy and/or aten.expand of
// it — so the slice that fed it (often a slice of the write's own base) disappears and the
// planner sees the producer of the written values directly.
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// The expand sizes that broadcast `src` to `dst` (empty when the shapes are already equal),
// or nullopt when that is not provable statically. A dim that `src` has with the same size
// keeps it (-1); a new or size-1 dim takes dst's size, which must be a constant.
// Examples: src f32[] → dst f32[4, 3]: [4, 3]; src [s0, 1] → dst [s0, 3]: [-1, 3];
// src [4, 3] → dst [4, 3]: {}; src [s1, 3] → dst [s0, 3]: nullopt.
std::optional<std::vector<ir::SymIntArg>> expand_sizes(const ir::TensorType& src,
                                                       const ir::TensorType& dst) {
  const int64_t offset = dst.rank() - src.rank();
  if (offset < 0) return std::nullopt;
  std::vector<ir::SymIntArg> sizes;
  bool needs_expand = offset > 0;
  for (int64_t d = 0; d < dst.rank(); ++d) {
    if (d >= offset && src.sizes[d - offset] == dst.sizes[d]) {
      std::optional<int64_t> c = dst.sizes[d].constant();
      sizes.push_back(c ? *c : int64_t{-1});
      continue;
    }
    if (d >= offset && src.sizes[d - offset].constant() != 1) return std::nullopt;
    std::optional<int64_t> c = dst.sizes[d].constant();
    if (!c) return std::nullopt;
    sizes.push_back(*c);
    needs_expand = true;
  }
  if (!needs_expand) return std::vector<ir::SymIntArg>{};
  return sizes;
}

Result<bool> fold(Rewriter& rw, Node* copy) {
  Value* dst = tensor_arg(*copy, "self");
  Value* src = tensor_arg(*copy, "src");
  Value* out = copy->output();
  // A wrapped Python number as src: nothing to name as the written value.
  if (dst == nullptr || src == nullptr || out == nullptr) return false;
  // Only copies into a view of a write's base, the form export produces for slice writes;
  // a copy into another tensor is left to later stages.
  if (producer_if(dst, OpId::slice_Tensor) == nullptr &&
      producer_if(dst, OpId::select_int) == nullptr)
    return false;
  // The copy's result must be dst's shape and dtype, or the archive disagrees with itself.
  if (!(out->type() == dst->type())) return false;
  auto sizes = expand_sizes(src->type(), dst->type());
  // Not provably broadcastable (e.g. s1 into s0): the copy kernel checks it at run time.
  if (!sizes) return false;

  Value* value = src;
  // Convert before broadcasting: the conversion then touches src's elements only.
  if (src->type().dtype != dst->type().dtype) {
    SPLICE_ASSIGN_OR_RETURN(
        value,
        rw.insert_value(copy, OpId::_to_copy, {Arg{src}}, {{"dtype", Arg{dst->type().dtype}}},
                        fmt::format("{}_to_{}", src->name(), dtype_name(dst->type().dtype))));
  }
  if (!sizes->empty()) {
    SPLICE_ASSIGN_OR_RETURN(value, rw.insert_value(copy, OpId::expand, {Arg{value}, Arg{*sizes}},
                                                   {}, value->name() + "_expand"));
  }
  // The copy's result was dst's type; what replaces it must be too.
  SPLICE_CHECK_OR_RETURN(value->type() == out->type(), ErrorKind::kInternal,
                         "{}: folding gives {} for {}", node_label(*copy),
                         value->type().to_string(), out->type().to_string());
  ir::Graph& graph = rw.graph();
  graph.replace_all_uses(out, value);
  out->set_producer(nullptr);
  graph.erase_node(copy);
  erase_dead_producers(graph, dst);
  return true;
}

class FoldCopyOfSlice final : public Pass {
 public:
  std::string_view name() const override { return "fold_copy_of_slice"; }
  std::string_view description() const override {
    return "Replaces copy(dst, src) whose dst is a slice or select (the form export gives "
           "`y[a:b] = s`) by what it computes: src converted to dst's dtype (aten._to_copy) and "
           "broadcast to dst's shape (aten.expand), or src itself when both already match. The "
           "slice that only supplied the shape and dtype is erased when nothing else reads it. "
           "It applies only when the broadcast is provable from the recorded shapes (equal "
           "sizes, or size-1/new dims against constant sizes).";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    Rewriter rw(program);
    for (Node* node : node_snapshot(program.graph)) {
      if (node->op_id() != OpId::copy) continue;
      SPLICE_ASSIGN_OR_RETURN(bool c, fold(rw, node));
      changed |= c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_copy_of_slice() { return std::make_unique<FoldCopyOfSlice>(); }

}  // namespace splice::passes
