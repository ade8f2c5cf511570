// select_scatter_to_slice_scatter: `select_scatter(x, src, dim, i)` becomes
// `slice_scatter(x, unsqueeze(src, dim), dim, i', i' + 1)` with i' the normalised index
// (write-semantics.md §2: never `-1:0`), so the planner handles one kind of slice write. (A
// static index outside [-size, size) never gets here: the verifier's shape rule refuses it.)
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;

// select_scatter's index i on a dim of `size` as a slice start: i + size when negative.
// Example on size 6: -1 → 5, 2 → 2; -7 and 6 are out of range (nullopt).
std::optional<int64_t> normalized_index(int64_t index, int64_t size) {
  if (index < -size || index >= size) return std::nullopt;
  return index < 0 ? index + size : index;
}

Result<bool> rewrite(Rewriter& rw, Node* node) {
  ir::Value* self = tensor_arg(*node, "self");
  ir::Value* src = tensor_arg(*node, "src");
  // Wrapped numbers in place of tensors: the kernel reports them with their shapes.
  if (self == nullptr || src == nullptr) return false;
  // The verifier's select_scatter rule has refused a 0-d self, a dim or a constant index out of
  // range, and a src that is not the selected slice's shape.
  const int64_t rank = self->type().rank();
  std::optional<int64_t> dim = wrap_dim(node->arg("dim").as<int64_t>(), rank);
  if (rank == 0 || !dim) return false;
  // A dynamic dim or a SymInt index: the select_scatter kernel checks the range at run time.
  std::optional<int64_t> size = static_size(self->type(), *dim);
  std::optional<int64_t> index = constant_int(node->arg("index"));
  if (!size || !index) return false;
  std::optional<int64_t> start = normalized_index(*index, *size);
  if (!start) return false;
  SPLICE_ASSIGN_OR_RETURN(ir::Value * src_slice,
                          rw.insert_value(node, OpId::unsqueeze, {Arg{src}, Arg{*dim}}, {},
                                          src->name() + "_unsqueeze"));
  SPLICE_TRY(rw.replace(
      node, OpId::slice_scatter,
      {Arg{self}, Arg{src_slice}, Arg{*dim}, Arg{*start}, Arg{*start + 1}, Arg{int64_t{1}}}));
  return true;
}

class SelectScatterToSliceScatter final : public Pass {
 public:
  std::string_view name() const override { return "select_scatter_to_slice_scatter"; }
  std::string_view description() const override {
    return "Rewrites select_scatter(x, src, dim, i) on a static dim with a constant index into "
           "slice_scatter(x, unsqueeze(src, dim), dim, i', i' + 1), i' being i plus the size "
           "when i is negative, so later stages see one kind of slice write. On a dynamic dim "
           "or a SymInt index the select_scatter stays and its kernel checks the index at run "
           "time (a static index out of range was refused at load by the op's shape rule).";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    Rewriter rw(program);
    for (Node* node : node_snapshot(program.graph)) {
      if (node->op_id() != OpId::select_scatter) continue;
      SPLICE_ASSIGN_OR_RETURN(bool c, rewrite(rw, node));
      changed |= c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_select_scatter_to_slice_scatter() {
  return std::make_unique<SelectScatterToSliceScatter>();
}

}  // namespace splice::passes
