// Decompositions of the ops that vision/audio front ends and mixture-of-experts layers of
// transformers models bring (decompositions.h), so no backend needs a kernel of its own:
//   convolution (and conv1d/2d/3d, "valid"/"same" padding): im2col — constant_pad_nd, one
//     strided slice per kernel offset, stacked to [N, C, K, L] and reshaped per group to
//     [N, g, C/g*K, L], one matmul with the weight as [g, O/g, C/g*K], then the bias. A patch
//     embedding (stride = kernel, static sizes) is one view and permute of the input instead,
//     copied once; other convolutions' k offsets cost k copies.
//     Spatial sizes may be symbolic (LFM2's causal conv1d over the sequence): the output
//     sizes and slice ends are SymInts computed from sym_size.
//   argsort (and argsort.stable): sort's (sort.stable's) indices output. sort and topk are
//     not decomposed: every backend has kernels for them (O(n log n), O(n) memory).
//   histc (constant min < max): eager's bin ((x - min) * bins / (max - min), truncated, the
//     top edge in the last bin, out-of-range and NaN elements not counted) accumulated with
//     index_put into zeros.
//   transformers::grouped_mm_fallback(input [S, K], weight [E, K, N], offs [E]): row r belongs
//     to expert #{e : offs[e] <= r}; every expert's product is computed ([E, S, N], E times the
//     work of the grouped loop), each row picks its expert's, rows past offs[E-1] are 0;
//     aten._grouped_mm (bf16 experts) the same, or a bmm of two 3-d operands.
#include <algorithm>

#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

template <typename... Args>
Error unsupported(const Node& node, fmt::format_string<Args...> format, Args&&... args) {
  return Error(ErrorKind::kUnsupportedOp,
               node_label(node) + ": " + fmt::format(format, std::forward<Args>(args)...));
}

std::optional<std::vector<int64_t>> constant_list(const Arg& a, size_t n) {
  std::vector<int64_t> out;
  if (a.is<int64_t>()) {
    out.assign(n, a.as<int64_t>());
    return out;
  }
  if (!a.is<std::vector<ir::SymIntArg>>()) return std::nullopt;
  for (const ir::SymIntArg& e : a.as<std::vector<ir::SymIntArg>>()) {
    if (!std::holds_alternative<int64_t>(e)) return std::nullopt;
    out.push_back(std::get<int64_t>(e));
  }
  if (out.size() == 1 && n > 1) out.assign(n, out[0]);
  if (out.size() != n) return std::nullopt;
  return out;
}

// ---- convolution ----

// The im2col columns of a convolution as [N, C, K, o1, o2, ...] (K the kernel offsets in the
// weight's row-major order): one strided slice per offset, stacked. `reach` is each offset's
// slice extent, stride * (out - 1) + 1.
Result<Value*> offset_columns(Builder& b, SizeBuilder& sb, Value* x,
                              const std::vector<int64_t>& kernel,
                              const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& dilation,
                              const std::vector<Size>& reach) {
  const size_t spatial = kernel.size();
  int64_t offsets = 1;
  for (int64_t k : kernel) offsets *= k;
  std::vector<Value*> columns;
  for (int64_t flat = 0; flat < offsets; ++flat) {
    Value* v = x;
    int64_t rest = flat;
    std::vector<int64_t> at(spatial);
    for (size_t i = spatial; i-- > 0;) {
      at[i] = rest % kernel[i];
      rest /= kernel[i];
    }
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t start = at[i] * dilation[i];
      SPLICE_ASSIGN_OR_RETURN(Size end, sb.add(reach[i], SizeBuilder::constant(start)));
      SPLICE_ASSIGN_OR_RETURN(
          v, b.op(OpId::slice_Tensor, {Arg{v}, Arg{static_cast<int64_t>(2 + i)}, Arg{start},
                                       to_arg(end), Arg{stride[i]}}));
    }
    columns.push_back(v);
  }
  return b.op(OpId::stack, {Arg{columns}, Arg{int64_t{2}}});
}

// A patch embedding's columns (stride = kernel, no dilation, static spatial sizes: ViT,
// SigLIP, ConvNeXt's stem): the offsets' slices tile the input, so the input cropped to whole
// patches, viewed as [N, C, o1, k1, o2, k2, ...] and permuted to [N, C, k1, k2, ..., o1, o2,
// ...] holds the same elements in the same order as the stacked slices, for one copy (the
// reshape after it) instead of one copy kernel per offset (256 for a 16x16 patch). nullptr
// when the convolution is not one.
Result<Value*> patch_columns(Builder& b, SizeBuilder& sb, Value* x,
                             const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                             const std::vector<int64_t>& dilation) {
  const size_t spatial = kernel.size();
  std::vector<int64_t> outs;
  for (size_t i = 0; i < spatial; ++i) {
    const std::optional<int64_t> n = static_size(x->type(), static_cast<int64_t>(2 + i));
    if (!n || stride[i] != kernel[i] || (dilation[i] != 1 && kernel[i] != 1) || *n < kernel[i])
      return static_cast<Value*>(nullptr);
    outs.push_back(*n / kernel[i]);
  }
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t whole = outs[i] * kernel[i];
    if (whole == static_size(x->type(), static_cast<int64_t>(2 + i))) continue;
    SPLICE_ASSIGN_OR_RETURN(
        x, b.op(OpId::slice_Tensor, {Arg{x}, Arg{static_cast<int64_t>(2 + i)}, Arg{int64_t{0}},
                                     Arg{whole}, Arg{int64_t{1}}}));
  }
  SPLICE_ASSIGN_OR_RETURN(Size n, sb.dim(x, 0));
  SPLICE_ASSIGN_OR_RETURN(Size c, sb.dim(x, 1));
  std::vector<Size> split = {n, c};
  std::vector<ir::SymIntArg> order = {int64_t{0}, int64_t{1}};
  for (size_t i = 0; i < spatial; ++i) {
    split.push_back(SizeBuilder::constant(outs[i]));
    split.push_back(SizeBuilder::constant(kernel[i]));
    order.push_back(static_cast<int64_t>(3 + 2 * i));
  }
  for (size_t i = 0; i < spatial; ++i) order.push_back(static_cast<int64_t>(2 + 2 * i));
  SPLICE_ASSIGN_OR_RETURN(Value * tiles, b.op(OpId::reshape, {Arg{x}, Arg{to_list(split)}}));
  return b.op(OpId::permute, {Arg{tiles}, Arg{order}});
}

Result<bool> convolution(Rewriter& rw, Node* node) {
  Value* input = tensor_arg(*node, "input");
  Value* weight = tensor_arg(*node, "weight");
  Value* bias = tensor_arg(*node, "bias");
  if (input == nullptr || weight == nullptr) return false;
  Builder b{rw, node};
  const ir::TensorType& wt = weight->type();
  const size_t spatial = static_cast<size_t>(wt.rank() - 2);
  auto stride = constant_list(node->arg("stride"), spatial);
  auto dilation = constant_list(node->arg("dilation"), spatial);
  auto groups = constant_int(node->arg("groups"));
  if (!stride || !dilation || !groups)
    return unsupported(*node, "symbolic stride, dilation or groups are not supported");
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < spatial; ++i) {
    auto k = static_size(wt, static_cast<int64_t>(2 + i));
    if (!k) return unsupported(*node, "a convolution with a kernel of symbolic size");
    kernel.push_back(*k);
  }
  auto out_channels = static_size(wt, 0);
  auto in_per_group = static_size(wt, 1);
  if (!out_channels || !in_per_group)
    return unsupported(*node, "a convolution with symbolic channels");
  std::vector<int64_t> lo(spatial, 0), hi(spatial, 0);
  const Arg& padding = node->arg("padding");
  if (padding.is<std::string>()) {
    if (padding.as<std::string>() == "same") {
      // ATen's _convolution_mode: the total padding split with the extra element at the end.
      for (size_t i = 0; i < spatial; ++i) {
        const int64_t total = (*dilation)[i] * (kernel[i] - 1);
        lo[i] = total / 2;
        hi[i] = total - lo[i];
      }
    }
  } else {
    auto p = constant_list(padding, spatial);
    if (!p) return unsupported(*node, "symbolic padding is not supported");
    lo = hi = *p;
  }
  if (node->op().find_arg("transposed") && node->arg("transposed").is<bool>() &&
      node->arg("transposed").as<bool>())
    return unsupported(*node, "transposed convolution is not supported");

  Value* x = input;
  if (std::any_of(lo.begin(), lo.end(), [](int64_t v) { return v != 0; }) ||
      std::any_of(hi.begin(), hi.end(), [](int64_t v) { return v != 0; })) {
    std::vector<ir::SymIntArg> pad;
    for (size_t i = spatial; i-- > 0;) {
      pad.push_back(lo[i]);
      pad.push_back(hi[i]);
    }
    SPLICE_ASSIGN_OR_RETURN(x, b.op(OpId::constant_pad_nd, {Arg{x}, Arg{pad}, Arg{int64_t{0}}}));
  }
  // Output sizes, symbolic where the input's are (a causal conv1d over a dynamic sequence,
  // LFM2): (n + lo + hi - dilation * (k - 1) - 1) // stride + 1.
  SizeBuilder sb(rw, node);
  // reach: stride * (out - 1) + 1, the extent of each offset's strided slice.
  std::vector<Size> out_sizes, reach;
  int64_t offsets = 1;
  for (size_t i = 0; i < spatial; ++i) {
    SPLICE_ASSIGN_OR_RETURN(Size n, sb.dim(input, static_cast<int64_t>(2 + i)));
    SPLICE_ASSIGN_OR_RETURN(
        Size span,
        sb.add(n, SizeBuilder::constant(lo[i] + hi[i] - (*dilation)[i] * (kernel[i] - 1) - 1)));
    SPLICE_ASSIGN_OR_RETURN(Size steps, sb.floordiv(span, SizeBuilder::constant((*stride)[i])));
    SPLICE_ASSIGN_OR_RETURN(Size out, sb.add(steps, SizeBuilder::constant(1)));
    SPLICE_ASSIGN_OR_RETURN(Size extent, sb.mul(steps, SizeBuilder::constant((*stride)[i])));
    SPLICE_ASSIGN_OR_RETURN(extent, sb.add(extent, SizeBuilder::constant(1)));
    out_sizes.push_back(out);
    reach.push_back(extent);
    offsets *= kernel[i];
  }
  SPLICE_ASSIGN_OR_RETURN(Size positions, sb.product(out_sizes));
  SPLICE_ASSIGN_OR_RETURN(Value * stacked, patch_columns(b, sb, x, kernel, *stride, *dilation));
  if (stacked == nullptr) {
    SPLICE_ASSIGN_OR_RETURN(stacked, offset_columns(b, sb, x, kernel, *stride, *dilation, reach));
  }
  SPLICE_ASSIGN_OR_RETURN(Size n, sb.dim(input, 0));
  const int64_t g = *groups;
  const int64_t inner = *in_per_group * offsets;
  SPLICE_ASSIGN_OR_RETURN(
      Value * cols,
      b.op(OpId::reshape, {Arg{stacked}, Arg{to_list({n, SizeBuilder::constant(g),
                                                      SizeBuilder::constant(inner), positions})}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * w, b.op(OpId::reshape,
                      {Arg{weight}, Arg{std::vector<ir::SymIntArg>{g, *out_channels / g, inner}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * prod, b.op(OpId::matmul, {Arg{w}, Arg{cols}}));
  std::vector<Size> shape = {n, SizeBuilder::constant(*out_channels)};
  for (const Size& s : out_sizes) shape.push_back(s);
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::reshape, {Arg{prod}, Arg{to_list(shape)}}));
  if (bias != nullptr) {
    std::vector<ir::SymIntArg> bshape = {*out_channels};
    for (size_t i = 0; i < spatial; ++i) bshape.push_back(int64_t{1});
    SPLICE_ASSIGN_OR_RETURN(Value * bv, b.op(OpId::reshape, {Arg{bias}, Arg{bshape}}));
    SPLICE_ASSIGN_OR_RETURN(out, b.op(OpId::add_Tensor, {Arg{out}, Arg{bv}}));
  }
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// ---- argsort ----

// argsort (CompositeImplicit, so the training IR keeps it) is sort's indices output: a
// sort.default, or a sort.stable with the same stable flag. sort and topk themselves have
// kernels on every backend (O(n log n) time, O(n) memory along the dim).
Result<bool> argsort(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Builder b{rw, node};
  Node* sorted = nullptr;
  if (node->op().id == OpId::argsort_stable) {
    SPLICE_ASSIGN_OR_RETURN(sorted, b.op_node(OpId::sort_stable, {Arg{self}},
                                              {{"stable", node->arg("stable")},
                                               {"dim", node->arg("dim")},
                                               {"descending", node->arg("descending")}}));
  } else {
    SPLICE_ASSIGN_OR_RETURN(
        sorted, b.op_node(OpId::sort, {Arg{self}, node->arg("dim"), node->arg("descending")}));
  }
  SPLICE_TRY(replace_outputs(rw, node, {sorted->outputs()[1]}));
  return true;
}

// ---- histc ----

Result<bool> histc(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Builder b{rw, node};
  auto bins = constant_int(node->arg("bins"));
  auto lo = constant_number(node->arg("min"));
  auto hi = constant_number(node->arg("max"));
  if (!bins || !lo || !hi) return unsupported(*node, "symbolic bins, min or max");
  if (!(*lo < *hi))
    return unsupported(*node,
                       "min {} must be below max {} (a range taken from the data is not "
                       "supported)",
                       *lo, *hi);
  const DType dtype = self->type().dtype;
  SPLICE_ASSIGN_OR_RETURN(
      Value * x, b.op(OpId::reshape, {Arg{self}, Arg{std::vector<ir::SymIntArg>{int64_t{-1}}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * ge, b.op(OpId::ge_Scalar, {Arg{x}, Arg{*lo}}));
  SPLICE_ASSIGN_OR_RETURN(Value * le, b.op(OpId::le_Scalar, {Arg{x}, Arg{*hi}}));
  SPLICE_ASSIGN_OR_RETURN(Value * inside, b.op(OpId::logical_and, {Arg{ge}, Arg{le}}));
  SPLICE_ASSIGN_OR_RETURN(Value * t, b.op(OpId::sub_Scalar, {Arg{x}, Arg{*lo}}));
  SPLICE_ASSIGN_OR_RETURN(t, b.op(OpId::mul_Scalar, {Arg{t}, Arg{*bins}}));
  SPLICE_ASSIGN_OR_RETURN(t, b.op(OpId::div_Scalar, {Arg{t}, Arg{*hi - *lo}}));
  SPLICE_ASSIGN_OR_RETURN(t, b.op(OpId::where_ScalarOther, {Arg{inside}, Arg{t}, Arg{0.0}}));
  SPLICE_ASSIGN_OR_RETURN(Value * pos,
                          b.op(OpId::_to_copy, {Arg{t}}, {{"dtype", Arg{DType::kInt64}}}));
  SPLICE_ASSIGN_OR_RETURN(pos, b.op(OpId::clamp_max, {Arg{pos}, Arg{*bins - 1}}));
  SPLICE_ASSIGN_OR_RETURN(Value * ones,
                          b.op(OpId::_to_copy, {Arg{inside}}, {{"dtype", Arg{dtype}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * zeros, b.op(OpId::zeros, {Arg{std::vector<ir::SymIntArg>{*bins}}},
                                              {{"dtype", Arg{dtype}}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * counts,
      b.op(OpId::index_put, {Arg{zeros}, Arg{std::vector<Value*>{pos}}, Arg{ones}, Arg{true}}));
  SPLICE_TRY(replace_outputs(rw, node, {counts}));
  return true;
}

// ---- transformers::grouped_mm_fallback ----

// aten._grouped_mm(self, mat2, offs, bias=None, out_dtype): the same for a 2-d self and a
// 3-d mat2 (eager leaves rows past the last offset unwritten; here they are 0), a bmm for two
// 3-d operands without offs; with out_dtype the operands are cast to it.
Result<bool> grouped_mm_fallback(Rewriter& rw, Node* node) {
  const bool aten = node->op_id() == OpId::_grouped_mm;
  Value* input = tensor_arg(*node, aten ? "self" : "input");
  Value* weight = tensor_arg(*node, aten ? "mat2" : "weight");
  Value* offs = tensor_arg(*node, "offs");
  if (input == nullptr || weight == nullptr) return false;
  Builder b{rw, node};
  const DType out_dtype = node->output(0) ? node->output(0)->type().dtype : input->type().dtype;
  // An out_dtype other than the operands' (bf16 -> f32): the operands are cast first, so the
  // products accumulate and come out in out_dtype as eager's, never rounded to bf16 between.
  if (input->type().dtype != out_dtype) {
    SPLICE_ASSIGN_OR_RETURN(input, b.op(OpId::_to_copy, {Arg{input}}, {{"dtype", Arg{out_dtype}}}));
    SPLICE_ASSIGN_OR_RETURN(weight,
                            b.op(OpId::_to_copy, {Arg{weight}}, {{"dtype", Arg{out_dtype}}}));
  }
  auto finish = [&](Value* out) -> Result<bool> {
    SPLICE_TRY(replace_outputs(rw, node, {out}));
    return true;
  };
  if (offs == nullptr) {
    SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::bmm, {Arg{input}, Arg{weight}}));
    return finish(out);
  }
  auto experts = static_size(weight->type(), 0);
  if (!experts) return unsupported(*node, "a symbolic number of experts");
  SizeBuilder sb(rw, node);
  SPLICE_ASSIGN_OR_RETURN(Size rows, sb.dim(input, 0));
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.op(OpId::unsqueeze, {Arg{input}, Arg{int64_t{0}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * every, b.op(OpId::matmul, {Arg{x}, Arg{weight}}));  // [E, S, N]
  SPLICE_ASSIGN_OR_RETURN(Value * r,
                          b.op(OpId::arange, {to_arg(rows)}, {{"dtype", Arg{DType::kInt64}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * r2, b.op(OpId::unsqueeze, {Arg{r}, Arg{int64_t{1}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * o2, b.op(OpId::unsqueeze, {Arg{offs}, Arg{int64_t{0}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * passed, b.op(OpId::le_Tensor, {Arg{o2}, Arg{r2}}));  // [S, E]
  SPLICE_ASSIGN_OR_RETURN(
      Value * group, b.op(OpId::sum_dim_IntList,
                          {Arg{passed}, Arg{std::vector<ir::SymIntArg>{int64_t{1}}}, Arg{false}},
                          {{"dtype", Arg{DType::kInt64}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * valid, b.op(OpId::lt_Scalar, {Arg{group}, Arg{*experts}}));
  SPLICE_ASSIGN_OR_RETURN(group, b.op(OpId::clamp_max, {Arg{group}, Arg{*experts - 1}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * picked, b.op(OpId::index_Tensor, {Arg{every}, Arg{std::vector<Value*>{group, r}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * valid2, b.op(OpId::unsqueeze, {Arg{valid}, Arg{int64_t{1}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out,
                          b.op(OpId::where_ScalarOther, {Arg{valid2}, Arg{picked}, Arg{0.0}}));
  return finish(out);
}

constexpr Entry kEntries[] = {
    {OpId::convolution, convolution},
    {OpId::conv1d, convolution},
    {OpId::conv2d, convolution},
    {OpId::conv3d, convolution},
    {OpId::conv1d_padding, convolution},
    {OpId::conv2d_padding, convolution},
    {OpId::argsort, argsort},
    {OpId::argsort_stable, argsort},
    {OpId::histc, histc},
    {OpId::transformers_grouped_mm_fallback, grouped_mm_fallback},
    {OpId::_grouped_mm, grouped_mm_fallback},
};

}  // namespace

std::span<const Entry> model_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
