// normalize_slice_bounds: rewrites the dim and bounds of aten.slice.Tensor and
// aten.slice_scatter.default into canonical form (write-semantics.md §2): a non-negative dim,
// and on a static size with constant bounds, Python's slicing rules applied at compile time
// (start/end in [0, size], start <= end), so `slice(x, -1, -3, INT64_MAX)` on a dim of 8 becomes
// `slice(x, 1, 5, 8)`. (A constant step below 1 never gets here: the op's shape rule refuses it
// at load.)
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;

// Sets `arg` to the constant `v`; returns whether that changed it.
bool set_int(Arg& arg, int64_t v) {
  if (arg.is<int64_t>() && arg.as<int64_t>() == v) return false;
  arg = Arg{v};
  return true;
}

Result<bool> normalize(Node& node) {
  const ir::Value* self = tensor_arg(node, "self");
  // A wrapped number as self cannot be sliced; the kernel reports it with its shape.
  if (self == nullptr) return false;
  // The verifier's slice rules have refused a 0-d self, a dim out of range and a constant
  // step below 1.
  const int64_t rank = self->type().rank();
  Arg& step_arg = node.args()[node.arg_index("step")];
  std::optional<int64_t> step = constant_int(step_arg);
  Arg& dim_arg = node.args()[node.arg_index("dim")];
  std::optional<int64_t> dim = wrap_dim(dim_arg.as<int64_t>(), rank);
  if (rank == 0 || !dim || (step && *step < 1)) return false;
  bool changed = set_int(dim_arg, *dim);

  // A symbolic size: clamping needs its value, so the bounds stay as written and the kernel
  // applies Python's rules when the symbols are bound.
  std::optional<int64_t> size = static_size(self->type(), *dim);
  if (!size) return changed;
  Arg& start_arg = node.args()[node.arg_index("start")];
  Arg& end_arg = node.args()[node.arg_index("end")];
  std::optional<int64_t> start = constant_int(start_arg);
  std::optional<int64_t> end = constant_int(end_arg);
  // A SymInt bound (`.item()`, sym_size arithmetic) is only known at run time.
  if ((!start && !start_arg.is_none()) || (!end && !end_arg.is_none())) return changed;
  SliceBounds bounds = python_slice_bounds(start, end, *size);
  changed |= set_int(start_arg, bounds.start);
  changed |= set_int(end_arg, bounds.end);
  // A step that folded from a constant SymInt value reads better as the constant.
  if (step && !step_arg.is<int64_t>()) changed |= set_int(step_arg, *step);
  return changed;
}

class NormalizeSliceBounds final : public Pass {
 public:
  std::string_view name() const override { return "normalize_slice_bounds"; }
  std::string_view description() const override {
    return "Makes the dim of every slice and slice_scatter non-negative and, where the sliced "
           "size is static and the bounds are constants, applies Python's slicing rules at "
           "compile time: None start is 0, None or INT64_MAX end is the size, negative bounds "
           "add the size, both clamp into [0, size] and an end before the start becomes an "
           "empty slice. Symbolic sizes or bounds keep their bounds (the kernel applies the "
           "same rules at run time).";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    for (Node* node : node_snapshot(program.graph)) {
      const ir::OpId t = node->op_id();
      if (t != OpId::slice_Tensor && t != OpId::slice_scatter) continue;
      SPLICE_ASSIGN_OR_RETURN(bool c, normalize(*node));
      changed |= c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_normalize_slice_bounds() {
  return std::make_unique<NormalizeSliceBounds>();
}

}  // namespace splice::passes
