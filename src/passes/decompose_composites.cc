// decompose_composites: the CompositeImplicit ops that the training IR and run_decompositions({})
// keep (einsum, group_norm, pad in every mode, the `to` conversions, narrow/chunk/flatten and
// the other view helpers, the vector norms, std_mean, baddbmm, outer, zero, min/max.other, square,
// diff, argsort) and the ops no backend has a kernel for (convolution, histc, transformers'
// grouped_mm_fallback; decompose_model_ops.cc; eval-mode batch norm and max_pool2d with and
// without indices; decompose_cnn_ops.cc; the upsample ops, decompose_interpolation.cc; linspace
// and bucketize, decompose_range_ops.cc; max_pool3d and avg_pool3d, decompose_pool3d.cc; grid
// sampling, decompose_grid_sample.cc) are
// rewritten into the ops PyTorch builds them from, following torch/_refs and torch/_decomp, so
// every backend runs them from its primitive kernels and no backend writes them again. Every
// node a decomposition creates is typed by its op's shape rule (Rewriter), and the result must
// have the original output's type exactly. This file holds the pass and what the decompositions
// share; they live in decompose_shape_ops.cc and decompose_math.cc.
#include <algorithm>
#include <array>
#include <map>

#include "passes/decompositions.h"
#include "passes/pass.h"

namespace splice::passes {

namespace decomp {

using ir::Arg;
using ir::Node;
using ir::Value;

Arg to_arg(const Size& s) {
  if (const auto* c = std::get_if<int64_t>(&s.arg)) return Arg{*c};
  return Arg{std::get<Value*>(s.arg)};
}

std::vector<ir::SymIntArg> to_list(const std::vector<Size>& sizes) {
  std::vector<ir::SymIntArg> out;
  for (const Size& s : sizes) out.push_back(s.arg);
  return out;
}

Result<Size> SizeBuilder::dim(Value* t, int64_t d) {
  const SymExpr& e = t->type().sizes[d];
  if (auto c = e.constant()) return constant(*c);
  auto key = std::make_pair(static_cast<const Value*>(t), d);
  if (auto it = dims_.find(key); it != dims_.end()) return it->second;
  SPLICE_ASSIGN_OR_RETURN(Value * v, rw_.insert_value(before_, OpId::sym_size_int, {Arg{t}, Arg{d}},
                                                      {}, "sym_size_int"));
  Size s{e, ir::SymIntArg{v}};
  dims_.emplace(key, s);
  return s;
}

Result<std::vector<Size>> SizeBuilder::dims(Value* t) {
  std::vector<Size> out;
  for (int64_t d = 0; d < t->type().rank(); ++d) {
    SPLICE_ASSIGN_OR_RETURN(Size s, dim(t, d));
    out.push_back(s);
  }
  return out;
}

Result<Size> SizeBuilder::binary(ir::OpId target, const Size& a, const Size& b, SymExpr folded) {
  if (auto c = folded.constant()) return constant(*c);
  const std::string_view name = ir::op_target(target);
  const std::string base(name.substr(name.find('.') + 1));  // "add", "mul"
  SPLICE_ASSIGN_OR_RETURN(Value * v,
                          rw_.insert_value(before_, target, {to_arg(a), to_arg(b)}, {}, base));
  return Size{v->expr().value_or(folded), ir::SymIntArg{v}};
}

Result<Size> SizeBuilder::add(const Size& a, const Size& b) {
  if (a.expr.constant() == 0) return b;
  if (b.expr.constant() == 0) return a;
  return binary(OpId::py_add, a, b, a.expr + b.expr);
}

Result<Size> SizeBuilder::sub(const Size& a, const Size& b) {
  if (b.expr.constant() == 0) return a;
  return binary(OpId::py_sub, a, b, a.expr - b.expr);
}

Result<Size> SizeBuilder::mul(const Size& a, const Size& b) {
  if (a.expr.constant() == 1) return b;
  if (b.expr.constant() == 1) return a;
  return binary(OpId::py_mul, a, b, a.expr * b.expr);
}

Result<Size> SizeBuilder::floordiv(const Size& a, const Size& b) {
  if (b.expr.constant() == 1) return a;
  return binary(OpId::py_floordiv, a, b, floor_div(a.expr, b.expr));
}

Result<Size> SizeBuilder::product(const std::vector<Size>& sizes) {
  Size p = constant(1);
  for (const Size& s : sizes) {
    SPLICE_ASSIGN_OR_RETURN(p, mul(p, s));
  }
  return p;
}

Result<Size> SizeBuilder::wrap(const Size& a, const Size& b) {
  const ir::ShapeEnv& env = rw_.env();
  if (env.decide(SymExpr::make(SymOp::kGe, {a.expr, 0})) == true) return a;
  if (env.decide(SymExpr::make(SymOp::kLt, {a.expr, 0})) == true) return add(a, b);
  // Unknown sign (a SymInt from .item()): a + b*(a < 0), a bool times an int being an int.
  SPLICE_ASSIGN_OR_RETURN(
      Value * negative,
      rw_.insert_value(before_, OpId::py_lt, {to_arg(a), Arg{int64_t{0}}}, {}, "lt"));
  SPLICE_ASSIGN_OR_RETURN(Size shift,
                          binary(OpId::py_mul, Size{*negative->expr(), ir::SymIntArg{negative}}, b,
                                 b.expr * *negative->expr()));
  return add(a, shift);
}

Error unsupported(const Node& node, std::string_view why) {
  return Error(ErrorKind::kUnsupportedOp, node_label(node) + ": " + std::string(why));
}

std::string part_name(const Node& node, ir::OpId id) {
  const std::string_view target = ir::op_target(id);
  std::string_view op = target.substr(target.find('.') + 1);
  op = op.substr(0, op.find('.'));
  while (!op.empty() && op.front() == '_') op.remove_prefix(1);
  return node.name() + "_" + std::string(op);
}

Result<Value*> Builder::op(ir::OpId target, std::vector<Arg> args, const NamedArgs& named) {
  return rw.insert_value(node, target, std::move(args), named, part_name(*node, target));
}

Result<Node*> Builder::op_node(ir::OpId target, std::vector<Arg> args, const NamedArgs& named) {
  return rw.insert(node, target, std::move(args), named, part_name(*node, target));
}

Result<Value*> Builder::cast(Value* v, DType dtype) {
  if (v == nullptr || v->type().dtype == dtype) return v;
  return op(OpId::_to_copy, {Arg{v}}, {{"dtype", Arg{dtype}}});
}

Result<void> replace_outputs(Rewriter& rw, Node* node, const std::vector<Value*>& values) {
  const auto& outs = node->outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* old = outs[i];
    if (old == nullptr) continue;
    Value* now = i < values.size() ? values[i] : nullptr;
    if (now == nullptr && !is_used(rw.graph(), old)) continue;
    bool same = now != nullptr && now->kind() == old->kind();
    if (same && old->is_tensor()) {
      same = now->type().dtype == old->type().dtype && now->type().rank() == old->type().rank();
      for (int64_t d = 0; same && d < old->type().rank(); ++d)
        same = rw.env().provably_equal(now->type().sizes[d], old->type().sizes[d]);
    }
    SPLICE_CHECK_OR_RETURN(
        same, ErrorKind::kInternal, "{}: its decomposition gives {} for output '{}' of type {}",
        node_label(*node), now && now->is_tensor() ? now->type().to_string() : "no tensor",
        old->name(), old->is_tensor() ? old->type().to_string() : "scalar");
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* old = outs[i];
    if (old == nullptr) continue;
    if (i < values.size() && values[i] != nullptr) rw.graph().replace_all_uses(old, values[i]);
    old->set_producer(nullptr);
  }
  rw.graph().erase_node(node);
  return ok_result();
}

}  // namespace decomp

namespace {

using ir::Node;

// Every family's table (decompositions.h).
std::array<std::span<const decomp::Entry>, 8> families() {
  return {decomp::shape_decompositions(),         decomp::math_decompositions(),
          decomp::model_decompositions(),         decomp::cnn_decompositions(),
          decomp::interpolation_decompositions(), decomp::range_decompositions(),
          decomp::pool3d_decompositions(),        decomp::grid_sample_decompositions()};
}

const std::map<ir::OpId, decomp::Decomposition>& decompositions() {
  static const auto table = [] {
    std::map<ir::OpId, decomp::Decomposition> t;
    for (auto family : families())
      for (const decomp::Entry& e : family) t.emplace(e.op, e.fn);
    return t;
  }();
  return table;
}

class DecomposeComposites final : public Pass {
 public:
  std::string_view name() const override { return "decompose_composites"; }
  std::string_view description() const override {
    return "Rewrites the CompositeImplicit ops the training IR keeps into the ops PyTorch "
           "builds them from (torch/_refs, torch/_decomp), so every backend runs them from its "
           "primitive kernels: to/type_as become _to_copy or alias, contiguous a clone of a "
           "non-contiguous input or else an alias, eval-mode dropout a clone, reshape a view "
           "when the strides allow or else a clone and a view (and export's clone + _unsafe_view "
           "record of a reshape a reshape again), narrow a slice, chunk a split, "
           "flatten/unflatten/view_as/reshape_as "
           "a reshape or view, expand_as an expand, movedim and numpy_T (Tensor.T) a permute, "
           "diagonal_scatter a strided slice_scatter of its two dims flattened, "
           "swapaxes and mT a transpose, "
           "pad a constant_pad_nd or (reflect, replicate, circular) index_selects with computed "
           "indices, einsum permutes, diagonals, sums and bmm, baddbmm a bmm with mul and add, "
           "outer a broadcast mul, the vector norms abs/pow/sum/amax/amin, std_mean a var_mean "
           "and sqrt, group_norm native_group_norm, instance_norm native_group_norm of one "
           "channel a group (eval batch_norm with running statistics), zero zeros_like, "
           "min.other minimum, "
           "max.other maximum, square a pow with exponent 2, pow with exponent 2, 0.5, -0.5, -1, 3 "
           "or -2 the multiplies, "
           "sqrt, rsqrt or reciprocal ATen's pow kernels compute instead, diff "
           "a cat and slice differences, convolutions an im2col matmul "
           "(strided slices, a stack, one matmul per group), argsort a sort's indices (sort "
           "and topk have kernels), histc an index_put of ones, "
           "transformers' grouped_mm_fallback every expert's matmul and a per-row pick, "
           "eval-mode batch norm (and batch norm without running stats) a per-channel x * alpha "
           "+ beta, adaptive_avg_pool1d a 2-d pool of an unsqueezed plane, adaptive_avg_pool3d a "
           "mean over its last three dims (separable window means to other sizes), avg_pool2d "
           "window sums "
           "over window counts, im2col strided slices of the zero-padded input, col2im those "
           "slices of a zero canvas accumulated by slice_scatter, avg_pool1d a 2-d pool of an "
           "unsqueezed plane, glu a * sigmoid(b) of the halves, _weight_norm v * (g / |v|), "
           "broadcast_to an expand, unfold (Tensor.unfold) strided slices stacked last, "
           "hardswish and "
           "hardsigmoid their clamp formulas, max_pool2d strided slices of the -inf-padded input "
           "and an amax (the indices, "
           "when read, the first maximum's position gathered from a padded arange), "
           "tensor_split a split_with_sizes or slices, meshgrid views expanded to the grid, "
           "upsample_nearest2d/bilinear2d/bicubic2d index_selects of rows computed from an "
           "arange as ATen computes them (weighted for bilinear and bicubic), linspace ATen's "
           "two-sided formula over an arange, bucketize a count of the boundaries below each "
           "element. Sizes a "
           "decomposition needs are sym_size and "
           "_operator nodes when symbolic. Dropout in training mode and batch norm updating "
           "running statistics are errors.";
  }
  Result<bool> run(ir::Program& program) override {
    Rewriter rw(program);
    bool changed = false;
    // A decomposition may produce another composite (norm → linalg_vector_norm): repeat until
    // none is left.
    for (bool again = true; again;) {
      again = false;
      for (Node* node : node_snapshot(program.graph)) {
        auto it = decompositions().find(node->op_id());
        if (it == decompositions().end()) continue;
        SPLICE_ASSIGN_OR_RETURN(bool c, it->second(rw, node));
        again |= c;
      }
      changed |= again;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_decompose_composites() {
  return std::make_unique<DecomposeComposites>();
}

std::vector<std::string_view> decomposed_targets() {
  std::vector<std::string_view> out;
  for (auto family : families())
    for (const decomp::Entry& e : family)
      if (!e.partial) out.push_back(ir::op_target(e.op));
  return out;
}

}  // namespace splice::passes
