// The default pass pipeline: the pass order and the verifier run after each change.
#include "passes/pipeline.h"

#include "ir/verifier.h"
#include "passes/functionalize.h"

namespace splice::passes {

std::vector<std::unique_ptr<Pass>> default_passes() {
  std::vector<std::unique_ptr<Pass>> passes;
  // First: every later pass and the planners read functional programs only.
  passes.push_back(make_functionalize());
  // Static sizes wherever a rule proves them, before anything reads sizes.
  passes.push_back(make_refine_recorded_types());
  // Composite ops into the primitives every backend has, before the write passes look at
  // slices (narrow becomes one).
  passes.push_back(make_decompose_composites());
  // Bounds next, so every later pass sees non-negative dims and constant bounds in range.
  passes.push_back(make_normalize_slice_bounds());
  passes.push_back(make_select_scatter_to_slice_scatter());
  // Before the where-mask rewrite, which may then see the where this one makes.
  passes.push_back(make_masked_write_to_where());
  passes.push_back(make_where_mask_to_select_write());
  // After the where-mask rewrite, whose true branch is often a copy of a select.
  passes.push_back(make_fold_copy_of_slice());
  // After every pass that makes views (decompositions, normalized bounds, the expands of
  // folded copies), so each view it places is final.
  passes.push_back(make_canonicalize_views());
  // After every rewrite that matches patterns (a shared value has more readers, which some of
  // them refuse) and after views are canonical, so equal views are one value already.
  passes.push_back(make_share_identical_computations());
  // After sharing, so a mask or a cast of k computed once per layer is one value, and
  // before the matmuls are joined: the attention's matmuls are not the projections.
  passes.push_back(make_fuse_written_attention());
  // After it, so the attentions it made read grouped heads too.
  passes.push_back(make_read_grouped_kv_heads());
  // After sharing, so the products of one input read one value (equal views merged), and
  // before the write casts, which never touch products.
  passes.push_back(make_concat_sibling_matmuls());
  // Last: every slice_scatter exists by now (its src's shape checked by its shape rule).
  passes.push_back(make_insert_write_casts());
  return passes;
}

std::unique_ptr<Pass> find_pass(std::string_view name) {
  for (auto& pass : default_passes())
    if (pass->name() == name) return std::move(pass);
  return nullptr;
}

Result<void> run_pipeline(ir::Program& program) {
  // Passes rely on what the verifier checks (argument variants, def-before-use), and an
  // imported archive is untrusted.
  auto input_ok = ir::verify(program);
  if (!input_ok.ok()) return input_ok.error().with_context("verifier before the passes");
  for (const auto& pass : default_passes()) {
    auto changed = pass->run(program);
    if (!changed.ok()) return changed.error().with_context(fmt::format("pass '{}'", pass->name()));
    if (!*changed) continue;
    auto verified = ir::verify(program);
    if (!verified.ok()) {
      return verified.error().with_context(fmt::format("verifier after pass '{}'", pass->name()));
    }
  }
  return ok_result();
}

}  // namespace splice::passes
