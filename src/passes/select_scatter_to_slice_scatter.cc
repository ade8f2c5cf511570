// select_scatter_to_slice_scatter: `select_scatter(x, src, dim, i)` becomes
// `slice_scatter(x, unsqueeze(src, dim), dim, i', i' + 1)` with i' the normalised index
// (write-semantics.md §2: never `-1:0`), so the planner handles one kind of slice write. A
// static index outside [-size, size) is an error at load time naming the node.
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

Result<bool> rewrite(ir::Graph& graph, Node* node) {
  ir::Value* self = tensor_arg(*node, "self");
  ir::Value* src = tensor_arg(*node, "src");
  // Wrapped numbers in place of tensors: the kernel reports them with their shapes.
  if (self == nullptr || src == nullptr) return false;
  const int64_t rank = self->type().rank();
  SPLICE_CHECK_OR_RETURN(rank > 0, ErrorKind::kBadArchive,
                         "{}: cannot select from the 0-d tensor {}", node_label(*node),
                         self->name());
  const int64_t raw_dim = node->arg("dim").as<int64_t>();
  std::optional<int64_t> dim = wrap_dim(raw_dim, rank);
  SPLICE_CHECK_OR_RETURN(dim.has_value(), ErrorKind::kBadArchive,
                         "{}: dim {} is out of range for {} of rank {}", node_label(*node), raw_dim,
                         self->name(), rank);
  // A dynamic dim or a SymInt index: the select_scatter kernel checks the range at run time.
  std::optional<int64_t> size = static_size(self->type(), *dim);
  std::optional<int64_t> index = constant_int(node->arg("index"));
  if (!size || !index) return false;
  std::optional<int64_t> start = normalized_index(*index, *size);
  SPLICE_CHECK_OR_RETURN(start.has_value(), ErrorKind::kOutOfRange,
                         "{}: index {} is out of range for dim {} of size {} (self {} is {})",
                         node_label(*node), *index, *dim, *size, self->name(),
                         self->type().to_string());
  // A src of the wrong rank would unsqueeze into a wrong shape: validate_writes reports it
  // with both shapes.
  if (src->type().rank() != rank - 1) return false;

  ir::TensorType unsqueezed = src->type();
  unsqueezed.sizes.insert(unsqueezed.sizes.begin() + *dim, SymExpr(1));
  ir::Value* src_slice =
      insert_tensor_node(graph, node, "aten.unsqueeze.default", {Arg{src}, Arg{*dim}}, {},
                         std::move(unsqueezed), src->name() + "_unsqueeze");
  replace_node(
      graph, node, "aten.slice_scatter.default",
      {Arg{self}, Arg{src_slice}, Arg{*dim}, Arg{*start}, Arg{*start + 1}, Arg{int64_t{1}}});
  return true;
}

class SelectScatterToSliceScatter final : public Pass {
 public:
  std::string_view name() const override { return "select_scatter_to_slice_scatter"; }
  std::string_view description() const override {
    return "Rewrites select_scatter(x, src, dim, i) on a static dim with a constant index into "
           "slice_scatter(x, unsqueeze(src, dim), dim, i', i' + 1), i' being i plus the size "
           "when i is negative, so later stages see one kind of slice write. A static index "
           "outside [-size, size) is an out-of-range error naming the node, dim, size and "
           "index; on a dynamic dim or a SymInt index the select_scatter stays and its kernel "
           "checks the index at run time.";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    for (Node* node : node_snapshot(program.graph)) {
      if (node->target() != "aten.select_scatter.default") continue;
      SPLICE_ASSIGN_OR_RETURN(bool c, rewrite(program.graph, node));
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
