// insert_write_casts: a slice write converts src to self's dtype (write-semantics.md §2, §3.1).
// The CPU kernel already converts; this pass makes the conversion an explicit aten._to_copy in
// the IR so the planner and every backend see a write whose src has self's dtype, and the
// conversion becomes an ordinary pointwise step that can be fused or written into the slice.
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

Result<bool> insert_cast(Rewriter& rw, Node* node) {
  const Value* self = tensor_arg(*node, "self");
  Value* src = tensor_arg(*node, "src");
  // A wrapped Python number as src: the kernel converts it as a scalar.
  if (self == nullptr || src == nullptr) return false;
  const DType dtype = self->type().dtype;
  if (src->type().dtype == dtype) return false;
  SPLICE_ASSIGN_OR_RETURN(Value * cast,
                          rw.insert_value(node, OpId::_to_copy, {Arg{src}}, {{"dtype", Arg{dtype}}},
                                          fmt::format("{}_to_{}", src->name(), dtype_name(dtype))));
  node->args()[node->arg_index("src")] = Arg{cast};
  return true;
}

class InsertWriteCasts final : public Pass {
 public:
  std::string_view name() const override { return "insert_write_casts"; }
  std::string_view description() const override {
    return "For every slice_scatter and select_scatter whose src dtype differs from self's, "
           "inserts aten._to_copy(src, dtype=self's dtype) and writes that instead, so every "
           "later stage sees a write of equal dtypes and the conversion (float to int "
           "truncates, anything to bool is != 0) is an explicit step the planner can place.";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    Rewriter rw(program);
    for (Node* node : node_snapshot(program.graph)) {
      const ir::OpId t = node->op_id();
      if (t != OpId::slice_scatter && t != OpId::select_scatter) continue;
      SPLICE_ASSIGN_OR_RETURN(bool c, insert_cast(rw, node));
      changed |= c;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_insert_write_casts() { return std::make_unique<InsertWriteCasts>(); }

}  // namespace splice::passes
