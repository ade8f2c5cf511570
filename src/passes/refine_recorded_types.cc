// refine_recorded_types: where an op's shape rule proves a size constant that the archive
// recorded symbolically, the recorded size becomes the constant. torch.export records a write
// whose src came from a reshape with -1 with src's symbolic sizes although self's are static
// (`slice_scatter(x: f32[4, 8], r: f32[4, s1], 1, 0, 8)` recorded as f32[4, s1]); later writes
// and the planner need the static sizes. The loader has already kept the recorded size's
// equality with the constant as a shape check the runtime evaluates before any kernel runs, so
// the refined program means the same.
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Node;
using ir::Value;

class RefineRecordedTypes final : public Pass {
 public:
  std::string_view name() const override { return "refine_recorded_types"; }
  std::string_view description() const override {
    return "Replaces every recorded symbolic size that the node's shape rule proves to be a "
           "constant by that constant (a write recorded with its src's symbolic sizes gets "
           "self's static ones), so later passes and the planner see static sizes wherever "
           "they are known. The recorded size's equality with the constant is a shape check "
           "the runtime makes once the symbols are bound.";
  }
  Result<bool> run(ir::Program& program) override {
    bool changed = false;
    Rewriter rw(program);
    for (Node* node : node_snapshot(program.graph)) {
      SPLICE_ASSIGN_OR_RETURN(std::vector<ir::OutputType> outs, rw.infer(*node));
      for (size_t i = 0; i < node->outputs().size() && i < outs.size(); ++i) {
        Value* v = node->output(i);
        const ir::OutputType& o = outs[i];
        if (v == nullptr || !v->is_tensor() || !o.known || o.kind != ir::ValueKind::kTensor ||
            o.tensor.rank() != v->type().rank())
          continue;
        ir::TensorType type = v->type();
        bool refined = false;
        for (int64_t d = 0; d < type.rank(); ++d) {
          if (type.sizes[d].is_constant() || !o.tensor.sizes[d].is_constant()) continue;
          type.sizes[d] = o.tensor.sizes[d];
          refined = true;
        }
        if (!refined) continue;
        v->set_type(std::move(type));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_refine_recorded_types() {
  return std::make_unique<RefineRecordedTypes>();
}

}  // namespace splice::passes
