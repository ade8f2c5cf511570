#pragma once
// Internal to the decompose_composites pass: the decompositions of the CompositeImplicit ops
// splice reads (one function per op family, in decompose_shape_ops.cc and decompose_math.cc)
// and what they share — a builder of the SymInt values a decomposition needs (a tensor's size,
// sums and products of sizes) that folds constants and emits sym_size/_operator nodes only for
// symbolic sizes, so every decomposition works on dynamic shapes too, and a builder of the ops
// that replace a node, named after it.

#include <array>
#include <map>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/ops.h"
#include "passes/pass_util.h"

namespace splice::passes::decomp {

// A size both as a symbolic expression and as an IR argument (a constant or a SymInt value).
struct Size {
  SymExpr expr;
  ir::SymIntArg arg;
};

// The argument form of a size (an int or a SymInt value) for a Scalar or SymInt argument.
ir::Arg to_arg(const Size& s);
std::vector<ir::SymIntArg> to_list(const std::vector<Size>& sizes);

class SizeBuilder {
 public:
  SizeBuilder(Rewriter& rw, const ir::Node* before) : rw_(rw), before_(before) {}

  // Size `d` of tensor `t`: its constant, else an aten.sym_size.int node (one per tensor dim).
  Result<Size> dim(ir::Value* t, int64_t d);
  Result<std::vector<Size>> dims(ir::Value* t);
  static Size constant(int64_t v) { return {SymExpr(v), ir::SymIntArg{v}}; }
  Result<Size> add(const Size& a, const Size& b);
  Result<Size> sub(const Size& a, const Size& b);
  Result<Size> mul(const Size& a, const Size& b);
  Result<Size> floordiv(const Size& a, const Size& b);
  Result<Size> product(const std::vector<Size>& sizes);
  // a + b*(a < 0): a bound wrapped against the size b, right for either sign once bound.
  Result<Size> wrap(const Size& a, const Size& b);

 private:
  Result<Size> binary(ir::OpId target, const Size& a, const Size& b, SymExpr folded);

  Rewriter& rw_;
  const ir::Node* before_;
  std::map<std::pair<const ir::Value*, int64_t>, Size> dims_;
};

// A name for a value a decomposition of `node` creates with `target`: "einsum_bmm".
std::string part_name(const ir::Node& node, ir::OpId target);

// Inserts `target` before `node`, named after it (part_name): the ops a decomposition of `node`
// is built from.
struct Builder {
  Rewriter& rw;
  ir::Node* node;
  // The new node's first output.
  Result<ir::Value*> op(ir::OpId target, std::vector<ir::Arg> args, const NamedArgs& named = {});
  Result<ir::Node*> op_node(ir::OpId target, std::vector<ir::Arg> args,
                            const NamedArgs& named = {});
  // `v` as `dtype` (itself when it already is, or is nullptr).
  Result<ir::Value*> cast(ir::Value* v, DType dtype);
};

// Replaces every use of `node`'s outputs by `values` (the same types, else kInternal: the
// decomposition computed something else) and erases it. An output nothing reads may be given no
// value (nullptr, or left off the end): a decomposition need not compute it.
Result<void> replace_outputs(Rewriter& rw, ir::Node* node, const std::vector<ir::Value*>& values);

// kUnsupportedOp naming the node and what of it no decomposition handles ("... over symbolic
// spatial sizes").
Error unsupported(const ir::Node& node, std::string_view why);

// A decomposition rewrites `node` into simpler ops before it; false: left as it is.
using Decomposition = Result<bool> (*)(Rewriter& rw, ir::Node* node);
struct Entry {
  ir::OpId op;
  Decomposition fn;
  // The op keeps its kernels and is no composite (decomposed_targets leaves it out): reshape (left
  // as it is where symbolic sizes leave its choice to the run) and lift_fresh_copy, which
  // run_decompositions({}) rewrites (a view or a clone and a view; a clone) and this pass too, so a
  // training-IR program plans its copies as its twin does.
  bool partial = false;
};

// Conversions and views: to.*, type_as, contiguous, dropout, narrow, chunk, tensor_split,
// meshgrid, flatten, unflatten, the *_as ops, movedim/moveaxis, swapaxes/swapdims, pad.
std::span<const Entry> shape_decompositions();
// einsum, baddbmm, outer, the vector norms, std_mean, group_norm.
std::span<const Entry> math_decompositions();
// convolution and conv1d/2d/3d, argsort, histc, transformers::grouped_mm_fallback and
// aten._grouped_mm.
std::span<const Entry> model_decompositions();
// batch norm (batch_norm, _native_batch_norm_legit_no_training, _native_batch_norm_legit.no_stats;
// training with running stats refused), max_pool2d and max_pool2d_with_indices,
// adaptive_avg_pool2d and adaptive_avg_pool1d, hardswish and hardsigmoid.
std::span<const Entry> cnn_decompositions();
// upsample_nearest2d, upsample_bilinear2d and upsample_bicubic2d (both overloads each), and
// _unsafe_index (index.Tensor).
std::span<const Entry> interpolation_decompositions();
// grid_sampler and grid_sampler_2d of 4-d inputs: bilinear, nearest and bicubic, every padding
// mode (decompose_grid_sample.cc).
std::span<const Entry> grid_sample_decompositions();
// Keys' cubic convolution weights (A = -0.75) of the four taps around a point a fraction t past
// the second, at distances t + 1, t, 1 - t and, as the kernel computes it, (1 - t) + 1 (ATen's
// get_cubic_upsample_coefficients) or 2 - t (its grid sampler's get_cubic_coefficients).
enum class CubicTaps { kUpsample, kGridSampler };
Result<std::array<ir::Value*, 4>> cubic_weights(Builder& b, ir::Value* t, CubicTaps taps);
// linspace, bucketize (Tensor and Scalar).
std::span<const Entry> range_decompositions();
// max_pool3d, max_pool3d_with_indices (indices unread) and avg_pool3d: 2-d pools of each frame's
// plane, then over time (decompose_pool3d.cc).
std::span<const Entry> pool3d_decompositions();

}  // namespace splice::passes::decomp
