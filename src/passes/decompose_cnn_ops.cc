// Decompositions of the CNN ops transformers' convolutional models bring (ResNet, EfficientNet,
// RegNet, MobileNetV2; decompositions.h), so no backend needs a kernel of its own:
//   batch norm in every spelling export writes for a model in eval mode: batch_norm (the
//     training IR), _native_batch_norm_legit_no_training (running stats) and
//     _native_batch_norm_legit.no_stats (a BatchNorm without running stats normalises by the
//     batch's statistics, var_mean with correction 0). As eager's CPU kernel computes it: per
//     channel alpha = weight / sqrt(var + eps) and beta = bias - mean * alpha in the
//     computation dtype (float32 for a half or bfloat16 input), then out = x * alpha + beta,
//     cast back to the input's dtype. Batch norm that updates running statistics (training mode
//     with running_mean/running_var, _native_batch_norm_legit_functional) is refused.
//   max_pool2d and max_pool2d_with_indices: the input padded with -inf (the dtype's lowest value
//     for integers), one strided slice per kernel offset stacked before the spatial dims and an
//     amax over them (NaN propagates, as eager's). The indices, only when something reads them:
//     the flat position within the H*W plane of the first maximum of each window (the last NaN
//     when there is one: eager's scan replaces its maximum by any NaN), found among the stacked
//     offsets by comparisons, where and amin/amax, then gathered from the same slices of an
//     arange(H*W) plane padded with -1 (padding never counts as a maximum).
//   adaptive_avg_pool2d (and _adaptive_avg_pool2d, its core ATen form): to an output size
//     dividing the input's (a classifier head's global pool) a view into blocks and a mean
//     over them; to any other size the means of ATen's row windows, then of its column windows
//     (slices, keepdim means, a cat each); adaptive_avg_pool1d the 2-d pool of an unsqueezed
//     plane, as ATen's; adaptive_avg_pool3d (and _adaptive_avg_pool3d) one mean over the last
//     three dims for [1, 1, 1], else the window means of each dim in turn.
//   avg_pool2d: window sums of the zero-padded input over counts summed the same way from a mask
//     of ones (or divisor_override); windows tiling the input unpadded a view and one sum.
//   im2col (nn.Unfold): the zero-padded input's strided slice per kernel offset, stacked and
//     flattened; col2im (nn.Fold): each offset's block added into a zero canvas at its strided
//     slice (slice_scatter), in ATen's CPU loop order, the padding sliced off.
//   avg_pool1d the 2-d pool of an unsqueezed plane, as ATen's; glu a * sigmoid(b) of the halves;
//     _weight_norm (nn.utils weight norm) v * (g / |v|), the norm over every dim but dim.
//   hardswish and hardsigmoid: their clamp-and-scale formulas, in float for the half types.
#include <algorithm>
#include <limits>

#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// ---- batch norm ----

constexpr std::string_view kTrainingRefusal =
    "batch norm in training mode updates running_mean and running_var, which splice does not "
    "support; export the model after model.eval()";

// torch._prims_common.get_computation_dtype: float32 for the half types.
DType computation_dtype(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? DType::kFloat32 : dtype;
}

// out = x * alpha + beta with alpha = weight * invstd and beta = bias - mean * alpha per channel
// (mean and invstd [C] in the computation dtype), as eager's CPU batch norm computes its
// output; cast back to the input's dtype.
Result<Value*> normalize(Builder& b, Value* input, Value* weight, Value* bias, Value* mean,
                         Value* invstd) {
  const DType acc = computation_dtype(input->type().dtype);
  Value* alpha = invstd;
  if (weight != nullptr) {
    SPLICE_ASSIGN_OR_RETURN(Value * w, b.cast(weight, acc));
    SPLICE_ASSIGN_OR_RETURN(alpha, b.op(OpId::mul_Tensor, {Arg{invstd}, Arg{w}}));
  }
  SPLICE_ASSIGN_OR_RETURN(Value * shift, b.op(OpId::mul_Tensor, {Arg{mean}, Arg{alpha}}));
  // Without a bias, beta = -(mean * alpha): x * alpha - mean * alpha gives the same bits.
  Value* beta = shift;
  if (bias != nullptr) {
    SPLICE_ASSIGN_OR_RETURN(Value * bb, b.cast(bias, acc));
    SPLICE_ASSIGN_OR_RETURN(beta, b.op(OpId::sub_Tensor, {Arg{bb}, Arg{shift}}));
  }
  std::vector<ir::SymIntArg> channel = {int64_t{-1}};
  for (int64_t d = 2; d < input->type().rank(); ++d) channel.push_back(int64_t{1});
  SPLICE_ASSIGN_OR_RETURN(alpha, b.op(OpId::view, {Arg{alpha}, Arg{channel}}));
  SPLICE_ASSIGN_OR_RETURN(beta, b.op(OpId::view, {Arg{beta}, Arg{channel}}));
  SPLICE_ASSIGN_OR_RETURN(Value * scaled, b.op(OpId::mul_Tensor, {Arg{input}, Arg{alpha}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(bias != nullptr ? OpId::add_Tensor : OpId::sub_Tensor,
                                            {Arg{scaled}, Arg{beta}}));
  return b.cast(out, input->type().dtype);
}

// 1 / sqrt(var + eps), as eager's kernels take it (not rsqrt).
Result<Value*> inverse_std(Builder& b, Value* var, double eps) {
  SPLICE_ASSIGN_OR_RETURN(Value * shifted, b.op(OpId::add_Scalar, {Arg{var}, Arg{eps}}));
  SPLICE_ASSIGN_OR_RETURN(Value * std, b.op(OpId::sqrt, {Arg{shifted}}));
  return b.op(OpId::reciprocal, {Arg{std}});
}

Result<bool> batch_norm(Rewriter& rw, Node* node) {
  Value* input = tensor_arg(*node, "input");
  if (input == nullptr) return false;
  Builder b{rw, node};
  const ir::OpId id = node->op_id();
  Value* weight = tensor_arg(*node, "weight");
  Value* bias = tensor_arg(*node, "bias");
  Value* running_mean =
      node->op().find_arg("running_mean") ? tensor_arg(*node, "running_mean") : nullptr;
  Value* running_var =
      node->op().find_arg("running_var") ? tensor_arg(*node, "running_var") : nullptr;
  bool training = id == OpId::_native_batch_norm_legit_no_stats;
  if (node->op().find_arg("training")) training = node->arg("training").as<bool>();
  if (id == OpId::_native_batch_norm_legit_functional) return unsupported(*node, kTrainingRefusal);
  if (id == OpId::_native_batch_norm_legit_no_stats && !training)
    return unsupported(*node, "batch norm without running stats needs training=True");
  if (training && (running_mean != nullptr || running_var != nullptr))
    return unsupported(*node, kTrainingRefusal);
  const double eps = node->arg("eps").as<double>();
  const DType dtype = input->type().dtype;
  const DType acc = computation_dtype(dtype);
  const int64_t rank = input->type().rank();
  Value* mean = nullptr;
  Value* var = nullptr;
  if (training) {
    // The batch's statistics over every dim but the channels, biased (correction 0).
    std::vector<ir::SymIntArg> dims = {int64_t{0}};
    for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
    SPLICE_ASSIGN_OR_RETURN(Value * x, b.cast(input, acc));
    SPLICE_ASSIGN_OR_RETURN(Node * vm, b.op_node(OpId::var_mean_correction, {Arg{x}, Arg{dims}},
                                                 {{"correction", Arg{int64_t{0}}}}));
    var = vm->outputs()[0];
    mean = vm->outputs()[1];
  } else {
    SPLICE_ASSIGN_OR_RETURN(mean, b.cast(running_mean, acc));
    SPLICE_ASSIGN_OR_RETURN(var, b.cast(running_var, acc));
  }
  SPLICE_ASSIGN_OR_RETURN(Value * invstd, inverse_std(b, var, eps));
  SPLICE_ASSIGN_OR_RETURN(Value * out, normalize(b, input, weight, bias, mean, invstd));
  std::vector<Value*> outs = {out};
  if (node->outputs().size() == 3) {
    if (training) {
      SPLICE_ASSIGN_OR_RETURN(Value * m, b.cast(mean, dtype));
      SPLICE_ASSIGN_OR_RETURN(Value * r, b.cast(invstd, dtype));
      outs.push_back(m);
      outs.push_back(r);
    } else {
      // Evaluation mode saves nothing: two empty tensors.
      for (int i = 0; i < 2; ++i) {
        SPLICE_ASSIGN_OR_RETURN(Value * empty,
                                b.op(OpId::zeros, {Arg{std::vector<ir::SymIntArg>{int64_t{0}}}},
                                     {{"dtype", Arg{dtype}}}));
        outs.push_back(empty);
      }
    }
  }
  SPLICE_TRY(replace_outputs(rw, node, outs));
  return true;
}

// ---- max_pool2d ----

std::pair<int64_t, int64_t> pair_of(const std::vector<int64_t>& v, std::pair<int64_t, int64_t> d) {
  if (v.empty()) return d;
  return {v[0], v.back()};
}

std::vector<int64_t> int_list(const Arg& a) {
  std::vector<int64_t> out;
  if (a.is<int64_t>()) return {a.as<int64_t>()};
  if (a.is<std::vector<ir::SymIntArg>>())
    for (const ir::SymIntArg& e : a.as<std::vector<ir::SymIntArg>>())
      if (std::holds_alternative<int64_t>(e)) out.push_back(std::get<int64_t>(e));
  return out;
}

// The lowest value of `dtype`, what padding must never beat.
Arg lowest(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return Arg{int64_t{0}};
    case DType::kInt8:
      return Arg{int64_t{std::numeric_limits<int8_t>::min()}};
    case DType::kInt16:
      return Arg{int64_t{std::numeric_limits<int16_t>::min()}};
    case DType::kInt32:
      return Arg{int64_t{std::numeric_limits<int32_t>::min()}};
    case DType::kInt64:
      return Arg{std::numeric_limits<int64_t>::min()};
    default:
      return Arg{-std::numeric_limits<double>::infinity()};
  }
}

// A 2-d pooling's windows over the last two dims of a [..., H, W] input, every size static (the
// output's as the node records it, checked by the shape rule), and the padding after the input
// that lets the last window fit (ceil mode may need more than `padding`).
struct PoolWindows {
  int64_t h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, hi_h, hi_w;

  bool padded() const { return ph != 0 || pw != 0 || hi_h != 0 || hi_w != 0; }
  std::vector<ir::SymIntArg> pad() const { return {pw, hi_w, ph, hi_h}; }

  // One strided slice of `v`'s last two dims per kernel offset (row-major), stacked at `dim`.
  Result<Value*> stack(Builder& b, Value* v, int64_t dim) const {
    const int64_t r = v->type().rank();
    std::vector<Value*> parts;
    for (int64_t i = 0; i < kh; ++i) {
      SPLICE_ASSIGN_OR_RETURN(Value * rows,
                              b.op(OpId::slice_Tensor, {Arg{v}, Arg{r - 2}, Arg{i * dh},
                                                        Arg{i * dh + sh * (oh - 1) + 1}, Arg{sh}}));
      for (int64_t j = 0; j < kw; ++j) {
        SPLICE_ASSIGN_OR_RETURN(
            Value * cols, b.op(OpId::slice_Tensor, {Arg{rows}, Arg{r - 1}, Arg{j * dw},
                                                    Arg{j * dw + sw * (ow - 1) + 1}, Arg{sw}}));
        parts.push_back(cols);
      }
    }
    if (parts.size() == 1) return b.op(OpId::unsqueeze, {Arg{parts[0]}, Arg{dim}});
    return b.op(OpId::stack, {Arg{parts}, Arg{dim}});
  }
};

Result<PoolWindows> pool_windows(const Node& node, std::string_view op, const Value* self) {
  const ir::TensorType& type = self->type();
  const int64_t rank = type.rank();
  const auto h = static_size(type, rank - 2);
  const auto w = static_size(type, rank - 1);
  if (!h || !w) return unsupported(node, fmt::format("{} over symbolic spatial sizes", op));
  const ir::TensorType& out_type = node.outputs()[0]->type();
  const auto oh = static_size(out_type, rank - 2);
  const auto ow = static_size(out_type, rank - 1);
  if (!oh || !ow) return unsupported(node, fmt::format("{} with symbolic output sizes", op));
  PoolWindows p{};
  p.h = *h, p.w = *w, p.oh = *oh, p.ow = *ow;
  std::tie(p.kh, p.kw) = pair_of(int_list(node.arg("kernel_size")), {1, 1});
  std::tie(p.sh, p.sw) = pair_of(int_list(node.arg("stride")), {p.kh, p.kw});
  std::tie(p.ph, p.pw) = pair_of(int_list(node.arg("padding")), {0, 0});
  p.dh = p.dw = 1;
  const bool average = node.op_id() == OpId::avg_pool2d;
  if (!average)  // avg_pool2d has no dilation
    std::tie(p.dh, p.dw) = pair_of(int_list(node.arg("dilation")), {1, 1});
  if (average) {
    // Kernel offsets past the input and its padding on both sides only add zeros to every sum
    // and count: EfficientNet pools with a kernel far larger than its input.
    p.kh = std::min(p.kh, p.h + 2 * p.ph);
    p.kw = std::min(p.kw, p.w + 2 * p.pw);
  }
  // One slice per kernel offset: a bound so a huge kernel is an error, not a huge program.
  constexpr int64_t kMaxOffsets = 1024;
  if (p.kh * p.kw > kMaxOffsets)
    return unsupported(node, fmt::format("{} with a {}x{} kernel (more than {} offsets)", op, p.kh,
                                         p.kw, kMaxOffsets));
  p.hi_h = std::max<int64_t>(0, (p.oh - 1) * p.sh + p.dh * (p.kh - 1) + 1 - p.h - p.ph);
  p.hi_w = std::max<int64_t>(0, (p.ow - 1) * p.sw + p.dw * (p.kw - 1) + 1 - p.w - p.pw);
  return p;
}

// `v` [..., H, W] viewed as [..., oh, H / oh, ow, W / ow]: the disjoint windows of a pool whose
// windows tile the plane, to be reduced over dims rank - 1 and rank + 1.
Result<Value*> tile_view(Rewriter& rw, Builder& b, Value* v, int64_t oh, int64_t bh, int64_t ow,
                         int64_t bw) {
  SizeBuilder sb(rw, b.node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sb.dims(v));
  std::vector<Size> blocks(dims.begin(), dims.end() - 2);
  for (int64_t s : {oh, bh, ow, bw}) blocks.push_back(SizeBuilder::constant(s));
  return b.op(OpId::view, {Arg{v}, Arg{to_list(blocks)}});
}

Result<bool> max_pool2d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Builder b{rw, node};
  const ir::TensorType& type = self->type();
  const int64_t rank = type.rank();
  SPLICE_ASSIGN_OR_RETURN(const PoolWindows p, pool_windows(*node, "max_pool2d", self));
  Value* x = self;
  if (p.padded()) {
    SPLICE_ASSIGN_OR_RETURN(
        x, b.op(OpId::constant_pad_nd, {Arg{x}, Arg{p.pad()}, lowest(type.dtype)}));
  }
  const int64_t at = rank - 2;  // the stacked offsets' dim, before the output's spatial dims
  SPLICE_ASSIGN_OR_RETURN(Value * stacked, p.stack(b, x, at));
  const std::vector<ir::SymIntArg> reduce = {at};
  SPLICE_ASSIGN_OR_RETURN(Value * values, b.op(OpId::amax, {Arg{stacked}, Arg{reduce}}));
  std::vector<Value*> outs = {values};
  if (node->outputs().size() == 2 && is_used(rw.graph(), node->outputs()[1])) {
    // Each offset's flat input position per output element, -1 in the padding: [K, OH, OW].
    const int64_t k = p.kh * p.kw;
    SPLICE_ASSIGN_OR_RETURN(Value * flat,
                            b.op(OpId::arange, {Arg{p.h * p.w}}, {{"dtype", Arg{DType::kInt64}}}));
    SPLICE_ASSIGN_OR_RETURN(
        Value * plane, b.op(OpId::view, {Arg{flat}, Arg{std::vector<ir::SymIntArg>{p.h, p.w}}}));
    if (p.padded()) {
      SPLICE_ASSIGN_OR_RETURN(
          plane, b.op(OpId::constant_pad_nd, {Arg{plane}, Arg{p.pad()}, Arg{int64_t{-1}}}));
    }
    SPLICE_ASSIGN_OR_RETURN(Value * positions, p.stack(b, plane, 0));
    SPLICE_ASSIGN_OR_RETURN(Value * valid,
                            b.op(OpId::ge_Scalar, {Arg{positions}, Arg{int64_t{0}}}));
    SPLICE_ASSIGN_OR_RETURN(Value * offsets,
                            b.op(OpId::arange, {Arg{k}}, {{"dtype", Arg{DType::kInt64}}}));
    SPLICE_ASSIGN_OR_RETURN(
        offsets, b.op(OpId::view, {Arg{offsets}, Arg{std::vector<ir::SymIntArg>{k, 1, 1}}}));
    // The first offset holding the maximum.
    SPLICE_ASSIGN_OR_RETURN(Value * top, b.op(OpId::unsqueeze, {Arg{values}, Arg{at}}));
    SPLICE_ASSIGN_OR_RETURN(Value * hit, b.op(OpId::eq_Tensor, {Arg{stacked}, Arg{top}}));
    SPLICE_ASSIGN_OR_RETURN(hit, b.op(OpId::logical_and, {Arg{hit}, Arg{valid}}));
    SPLICE_ASSIGN_OR_RETURN(Value * first,
                            b.op(OpId::where_ScalarOther, {Arg{hit}, Arg{offsets}, Arg{k}}));
    SPLICE_ASSIGN_OR_RETURN(Value * pick, b.op(OpId::amin, {Arg{first}, Arg{reduce}}));
    if (is_floating(type.dtype)) {
      // The last NaN, if any.
      SPLICE_ASSIGN_OR_RETURN(Value * nan, b.op(OpId::isnan, {Arg{stacked}}));
      SPLICE_ASSIGN_OR_RETURN(Value * nan_at, b.op(OpId::where_ScalarOther,
                                                   {Arg{nan}, Arg{offsets}, Arg{int64_t{-1}}}));
      SPLICE_ASSIGN_OR_RETURN(Value * last, b.op(OpId::amax, {Arg{nan_at}, Arg{reduce}}));
      SPLICE_ASSIGN_OR_RETURN(Value * any, b.op(OpId::ge_Scalar, {Arg{last}, Arg{int64_t{0}}}));
      SPLICE_ASSIGN_OR_RETURN(pick, b.op(OpId::where_self, {Arg{any}, Arg{last}, Arg{pick}}));
    }
    SizeBuilder sb(rw, node);
    SPLICE_ASSIGN_OR_RETURN(std::vector<Size> shape, sb.dims(stacked));
    SPLICE_ASSIGN_OR_RETURN(Value * every,
                            b.op(OpId::expand, {Arg{positions}, Arg{to_list(shape)}}));
    SPLICE_ASSIGN_OR_RETURN(Value * where, b.op(OpId::unsqueeze, {Arg{pick}, Arg{at}}));
    SPLICE_ASSIGN_OR_RETURN(Value * index, b.op(OpId::gather, {Arg{every}, Arg{at}, Arg{where}}));
    SPLICE_ASSIGN_OR_RETURN(
        index, b.op(OpId::squeeze_dims, {Arg{index}, Arg{std::vector<ir::SymIntArg>{at}}}));
    outs.push_back(index);
  }
  SPLICE_TRY(replace_outputs(rw, node, outs));
  return true;
}

// ---- adaptive_avg_pool2d ----

// The windows of adaptive pooling along one dim of size `in` to `out`: window i covers
// [floor(i * in / out), ceil((i + 1) * in / out)), as ATen's start_index/end_index.
Result<Value*> adaptive_means(Builder& b, Value* v, int64_t dim, int64_t in, int64_t out) {
  std::vector<Value*> parts;
  const std::vector<ir::SymIntArg> reduce = {dim};
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out;
    const int64_t end = ((i + 1) * in + out - 1) / out;
    SPLICE_ASSIGN_OR_RETURN(Value * window, b.op(OpId::slice_Tensor, {Arg{v}, Arg{dim}, Arg{start},
                                                                      Arg{end}, Arg{int64_t{1}}}));
    SPLICE_ASSIGN_OR_RETURN(Value * mean,
                            b.op(OpId::mean_dim, {Arg{window}, Arg{reduce}, Arg{true}}));
    parts.push_back(mean);
  }
  if (parts.size() == 1) return parts[0];
  return b.op(OpId::cat, {Arg{parts}, Arg{dim}});
}

// An output size that divides the input's (the global pool of a classifier head, [1, 1]):
// each window is a block of H/oh x W/ow, so a view to [.., oh, H/oh, ow, W/ow] and a mean over
// the block dims. Other sizes (windows of varying size that may overlap, or an output larger
// than the input: VGG's and AlexNet's [7, 7] and [6, 6] pools of a small image) are separable:
// the mean of each row window (a slice and a keepdim mean, concatenated), then of each column
// window of those — (sum / kh) / kw summed in two passes where eager divides the window's sum
// by kh then kw, a difference of float rounding; O(oh + ow) ops, each input element read at
// most twice (windows overlap by less than one element per side).
Result<bool> adaptive_avg_pool2d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Builder b{rw, node};
  const ir::TensorType& type = self->type();
  const int64_t rank = type.rank();
  const ir::TensorType& out_type = node->outputs()[0]->type();
  const auto h = static_size(type, rank - 2);
  const auto w = static_size(type, rank - 1);
  const auto oh = static_size(out_type, rank - 2);
  const auto ow = static_size(out_type, rank - 1);
  if (!h || !w || !oh || !ow)
    return unsupported(*node, "adaptive_avg_pool2d over symbolic spatial sizes");
  if (*oh <= 0 || *ow <= 0 || *h <= 0 || *w <= 0)
    return unsupported(
        *node, fmt::format("adaptive_avg_pool2d of [{}, {}] to [{}, {}]", *h, *w, *oh, *ow));
  if (*h % *oh != 0 || *w % *ow != 0) {
    SPLICE_ASSIGN_OR_RETURN(Value * rows, adaptive_means(b, self, rank - 2, *h, *oh));
    SPLICE_ASSIGN_OR_RETURN(Value * out, adaptive_means(b, rows, rank - 1, *w, *ow));
    SPLICE_TRY(replace_outputs(rw, node, {out}));
    return true;
  }
  SPLICE_ASSIGN_OR_RETURN(Value * view, tile_view(rw, b, self, *oh, *h / *oh, *ow, *w / *ow));
  const std::vector<ir::SymIntArg> reduce = {rank - 1, rank + 1};
  SPLICE_ASSIGN_OR_RETURN(Value * mean, b.op(OpId::mean_dim, {Arg{view}, Arg{reduce}, Arg{false}}));
  SPLICE_TRY(replace_outputs(rw, node, {mean}));
  return true;
}

// adaptive_avg_pool3d (and _adaptive_avg_pool3d, its core ATen form) to an output size: the
// global pool of a video classifier's head ([1, 1, 1]) is one mean over the last three dims,
// which sums each plane's elements as eager's window does; any other size is separable, the
// windows of each dim in turn (adaptive_means), as the 2-d pool's sizes that do not divide.
Result<bool> adaptive_avg_pool3d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Builder b{rw, node};
  const ir::TensorType& type = self->type();
  const ir::TensorType& out_type = node->outputs()[0]->type();
  const int64_t rank = type.rank();
  int64_t in[3], out[3];
  for (int d = 0; d < 3; ++d) {
    const auto i = static_size(type, rank - 3 + d);
    const auto o = static_size(out_type, rank - 3 + d);
    if (!i || !o) return unsupported(*node, "adaptive_avg_pool3d over symbolic spatial sizes");
    if (*i <= 0 || *o <= 0)
      return unsupported(*node, fmt::format("adaptive_avg_pool3d of size {} to {}", *i, *o));
    in[d] = *i;
    out[d] = *o;
  }
  if (out[0] == 1 && out[1] == 1 && out[2] == 1) {
    const std::vector<ir::SymIntArg> dims = {rank - 3, rank - 2, rank - 1};
    SPLICE_ASSIGN_OR_RETURN(Value * mean, b.op(OpId::mean_dim, {Arg{self}, Arg{dims}, Arg{true}}));
    SPLICE_TRY(replace_outputs(rw, node, {mean}));
    return true;
  }
  Value* v = self;
  for (int d = 0; d < 3; ++d) {
    SPLICE_ASSIGN_OR_RETURN(v, adaptive_means(b, v, rank - 3 + d, in[d], out[d]));
  }
  SPLICE_TRY(replace_outputs(rw, node, {v}));
  return true;
}

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
// the window sums of the zero-padded input (in float for the half types) divided by
// divisor_override, or else by each window's count — the same window sums over a mask of ones
// where eager counts: the input and, with count_include_pad, its explicit padding (never the
// extra right padding of ceil mode), as ATen's avg_pool2d computes pool_size.
Result<bool> avg_pool2d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const DType dtype = self->type().dtype;
  if (!is_floating(dtype)) return unsupported(*node, "avg_pool2d of an integer tensor");
  Builder b{rw, node};
  SPLICE_ASSIGN_OR_RETURN(const PoolWindows p, pool_windows(*node, "avg_pool2d", self));
  const DType acc = computation_dtype(dtype);
  const int64_t at = self->type().rank() - 2;
  const std::vector<ir::SymIntArg> reduce = {at};
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.cast(self, acc));
  const Arg& divisor = node->arg("divisor_override");
  // Unpadded windows that tile the input exactly (a global pool, or stride = kernel dividing
  // it): a view into blocks and one sum over them, each window counting its kh * kw elements.
  const bool tiles_h =
      p.ph == 0 && p.hi_h == 0 && (p.oh == 1 ? p.kh == p.h : p.sh == p.kh && p.h == p.oh * p.kh);
  const bool tiles_w =
      p.pw == 0 && p.hi_w == 0 && (p.ow == 1 ? p.kw == p.w : p.sw == p.kw && p.w == p.ow * p.kw);
  if (tiles_h && tiles_w) {
    SPLICE_ASSIGN_OR_RETURN(Value * view, tile_view(rw, b, x, p.oh, p.kh, p.ow, p.kw));
    const std::vector<ir::SymIntArg> inner = {at + 1, at + 3};
    SPLICE_ASSIGN_OR_RETURN(Value * sum, b.op(OpId::sum_dim_IntList, {Arg{view}, Arg{inner}}));
    const Arg count = divisor.is<int64_t>() ? divisor : Arg{p.kh * p.kw};
    SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::div_Scalar, {Arg{sum}, count}));
    SPLICE_ASSIGN_OR_RETURN(out, b.cast(out, dtype));
    SPLICE_TRY(replace_outputs(rw, node, {out}));
    return true;
  }
  if (p.padded()) {
    SPLICE_ASSIGN_OR_RETURN(x, b.op(OpId::constant_pad_nd, {Arg{x}, Arg{p.pad()}, Arg{0.0}}));
  }
  SPLICE_ASSIGN_OR_RETURN(Value * stacked, p.stack(b, x, at));
  SPLICE_ASSIGN_OR_RETURN(Value * sum, b.op(OpId::sum_dim_IntList, {Arg{stacked}, Arg{reduce}}));
  Value* out = nullptr;
  if (divisor.is<int64_t>()) {
    SPLICE_ASSIGN_OR_RETURN(out, b.op(OpId::div_Scalar, {Arg{sum}, divisor}));
  } else {
    const bool include_pad = node->arg("count_include_pad").as<bool>();
    const std::vector<ir::SymIntArg> plane = {p.h, p.w};
    SPLICE_ASSIGN_OR_RETURN(Value * mask, b.op(OpId::ones, {Arg{plane}}, {{"dtype", Arg{acc}}}));
    // Ones over the counted region, zeros beyond it up to the padded input's size.
    const int64_t lo_h = include_pad ? p.ph : 0, lo_w = include_pad ? p.pw : 0;
    const int64_t in_h = include_pad ? std::min(p.ph, p.hi_h) : 0;
    const int64_t in_w = include_pad ? std::min(p.pw, p.hi_w) : 0;
    if (lo_h != 0 || lo_w != 0 || in_h != 0 || in_w != 0) {
      const std::vector<ir::SymIntArg> pad = {lo_w, in_w, lo_h, in_h};
      SPLICE_ASSIGN_OR_RETURN(mask, b.op(OpId::constant_pad_nd, {Arg{mask}, Arg{pad}, Arg{1.0}}));
    }
    const std::vector<ir::SymIntArg> rest = {p.pw - lo_w, p.hi_w - in_w, p.ph - lo_h,
                                             p.hi_h - in_h};
    if (p.pw != lo_w || p.hi_w != in_w || p.ph != lo_h || p.hi_h != in_h) {
      SPLICE_ASSIGN_OR_RETURN(mask, b.op(OpId::constant_pad_nd, {Arg{mask}, Arg{rest}, Arg{0.0}}));
    }
    SPLICE_ASSIGN_OR_RETURN(Value * counted, p.stack(b, mask, 0));
    const std::vector<ir::SymIntArg> first = {int64_t{0}};
    SPLICE_ASSIGN_OR_RETURN(Value * counts,
                            b.op(OpId::sum_dim_IntList, {Arg{counted}, Arg{first}}));
    SPLICE_ASSIGN_OR_RETURN(out, b.op(OpId::div_Tensor, {Arg{sum}, Arg{counts}}));
  }
  SPLICE_ASSIGN_OR_RETURN(out, b.cast(out, dtype));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// adaptive_avg_pool1d(self, [L]) as ATen computes it: the 2-d pool of self unsqueezed before its
// last dim, squeezed back (Swin's classifier head).
Result<bool> adaptive_avg_pool1d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  const std::vector<int64_t> size = int_list(node->arg("output_size"));
  if (self == nullptr || size.size() != 1) return false;
  Builder b{rw, node};
  const int64_t plane = self->type().rank() - 1;
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.op(OpId::unsqueeze, {Arg{self}, Arg{plane}}));
  const std::vector<ir::SymIntArg> size2 = {int64_t{1}, size[0]};
  SPLICE_ASSIGN_OR_RETURN(Value * pooled, b.op(OpId::adaptive_avg_pool2d, {Arg{x}, Arg{size2}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::squeeze_dim, {Arg{pooled}, Arg{plane}}));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// ---- im2col, col2im (nn.Unfold, nn.Fold) ----

// The sliding blocks of im2col/col2im over a static H x W plane: PoolWindows with the padding
// `padding` on both sides (the blocks' count as ATen's im2col_shape_check computes it).
Result<PoolWindows> sliding_blocks(const Node& node, std::string_view op, int64_t h, int64_t w) {
  PoolWindows p{};
  p.h = h, p.w = w;
  std::tie(p.kh, p.kw) = pair_of(int_list(node.arg("kernel_size")), {1, 1});
  std::tie(p.dh, p.dw) = pair_of(int_list(node.arg("dilation")), {1, 1});
  std::tie(p.ph, p.pw) = pair_of(int_list(node.arg("padding")), {0, 0});
  std::tie(p.sh, p.sw) = pair_of(int_list(node.arg("stride")), {1, 1});
  p.hi_h = p.ph, p.hi_w = p.pw;
  p.oh = (h + 2 * p.ph - (p.dh * (p.kh - 1) + 1)) / p.sh + 1;
  p.ow = (w + 2 * p.pw - (p.dw * (p.kw - 1) + 1)) / p.sw + 1;
  constexpr int64_t kMaxOffsets = 1024;  // one slice per kernel offset, as the pools
  if (p.kh * p.kw > kMaxOffsets)
    return unsupported(node, fmt::format("{} with a {}x{} kernel (more than {} offsets)", op, p.kh,
                                         p.kw, kMaxOffsets));
  return p;
}

// im2col(self [(N,) C, H, W], kernel_size, dilation, padding, stride) -> [(N,) C*kh*kw, L]: the
// zero-padded input's strided slice per kernel offset (row-major), stacked after the channels,
// the channels and offsets then the block rows and columns flattened. Data movement only.
Result<bool> im2col(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const ir::TensorType& type = self->type();
  const int64_t rank = type.rank();
  const auto h = static_size(type, rank - 2);
  const auto w = static_size(type, rank - 1);
  if (!h || !w) return unsupported(*node, "im2col over symbolic spatial sizes");
  Builder b{rw, node};
  SPLICE_ASSIGN_OR_RETURN(const PoolWindows p, sliding_blocks(*node, "im2col", *h, *w));
  Value* x = self;
  if (p.padded()) {
    SPLICE_ASSIGN_OR_RETURN(x, b.op(OpId::constant_pad_nd, {Arg{x}, Arg{p.pad()}, Arg{0.0}}));
  }
  // [(N,) C, K, oh, ow] -> [(N,) C*K, oh*ow]
  SPLICE_ASSIGN_OR_RETURN(Value * stacked, p.stack(b, x, rank - 2));
  SPLICE_ASSIGN_OR_RETURN(Value * out,
                          b.op(OpId::flatten_using_ints, {Arg{stacked}, Arg{rank - 1}, Arg{rank}}));
  SPLICE_ASSIGN_OR_RETURN(out,
                          b.op(OpId::flatten_using_ints, {Arg{out}, Arg{rank - 3}, Arg{rank - 2}}));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// col2im(self [(N,) C*kh*kw, L], output_size, kernel_size, dilation, padding, stride) ->
// [(N,) C, H, W]: a zero canvas of the padded plane to which each kernel offset's block
// [(N,) C, oh, ow] is added at its strided slice (slice, add, slice_scatter), offsets in
// row-major order — the order of ATen's CPU col2im loop, so overlapping blocks sum in the same
// order from the same zero — then the padding sliced off.
Result<bool> col2im(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const ir::TensorType& out_type = node->outputs()[0]->type();
  const int64_t rank = out_type.rank();  // 3 or 4
  const auto c = static_size(out_type, rank - 3);
  const auto h = static_size(out_type, rank - 2);
  const auto w = static_size(out_type, rank - 1);
  if (!c || !h || !w) return unsupported(*node, "col2im to symbolic sizes");
  Builder b{rw, node};
  SPLICE_ASSIGN_OR_RETURN(const PoolWindows p, sliding_blocks(*node, "col2im", *h, *w));
  const int64_t k = p.kh * p.kw;
  SizeBuilder sb(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sb.dims(self));
  std::vector<Size> shape(dims.begin(), dims.end() - 2);  // the batch dim, if any
  std::vector<Size> canvas_shape = shape;
  for (int64_t s : {*c, k, p.oh, p.ow}) shape.push_back(SizeBuilder::constant(s));
  for (int64_t s : {*c, p.h + 2 * p.ph, p.w + 2 * p.pw})
    canvas_shape.push_back(SizeBuilder::constant(s));
  SPLICE_ASSIGN_OR_RETURN(Value * cols, b.op(OpId::view, {Arg{self}, Arg{to_list(shape)}}));
  SPLICE_ASSIGN_OR_RETURN(Value * canvas, b.op(OpId::zeros, {Arg{to_list(canvas_shape)}},
                                               {{"dtype", Arg{self->type().dtype}}}));
  const int64_t hd = rank - 2, wd = rank - 1;
  for (int64_t i = 0; i < p.kh; ++i) {
    const int64_t h0 = i * p.dh, h1 = h0 + p.sh * (p.oh - 1) + 1;
    for (int64_t j = 0; j < p.kw; ++j) {
      const int64_t w0 = j * p.dw, w1 = w0 + p.sw * (p.ow - 1) + 1;
      SPLICE_ASSIGN_OR_RETURN(
          Value * block, b.op(OpId::select_int, {Arg{cols}, Arg{rank - 2}, Arg{i * p.kw + j}}));
      SPLICE_ASSIGN_OR_RETURN(Value * rows, b.op(OpId::slice_Tensor, {Arg{canvas}, Arg{hd}, Arg{h0},
                                                                      Arg{h1}, Arg{p.sh}}));
      SPLICE_ASSIGN_OR_RETURN(Value * region, b.op(OpId::slice_Tensor, {Arg{rows}, Arg{wd}, Arg{w0},
                                                                        Arg{w1}, Arg{p.sw}}));
      SPLICE_ASSIGN_OR_RETURN(Value * sum, b.op(OpId::add_Tensor, {Arg{region}, Arg{block}}));
      SPLICE_ASSIGN_OR_RETURN(rows, b.op(OpId::slice_scatter, {Arg{rows}, Arg{sum}, Arg{wd},
                                                               Arg{w0}, Arg{w1}, Arg{p.sw}}));
      SPLICE_ASSIGN_OR_RETURN(canvas, b.op(OpId::slice_scatter, {Arg{canvas}, Arg{rows}, Arg{hd},
                                                                 Arg{h0}, Arg{h1}, Arg{p.sh}}));
    }
  }
  Value* out = canvas;
  if (p.ph != 0) {
    SPLICE_ASSIGN_OR_RETURN(out, b.op(OpId::slice_Tensor, {Arg{out}, Arg{hd}, Arg{p.ph},
                                                           Arg{p.ph + p.h}, Arg{int64_t{1}}}));
  }
  if (p.pw != 0) {
    SPLICE_ASSIGN_OR_RETURN(out, b.op(OpId::slice_Tensor, {Arg{out}, Arg{wd}, Arg{p.pw},
                                                           Arg{p.pw + p.w}, Arg{int64_t{1}}}));
  }
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// avg_pool1d(self, [k], [s], [p], ceil_mode, count_include_pad) as ATen computes it: the 2-d
// pool of self unsqueezed before its last dim with kernel [1, k], stride [1, s], padding [0, p],
// squeezed back (SEW's downsampling).
Result<bool> avg_pool1d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  const std::vector<int64_t> k = int_list(node->arg("kernel_size"));
  const std::vector<int64_t> s = int_list(node->arg("stride"));
  const std::vector<int64_t> p = int_list(node->arg("padding"));
  if (self == nullptr || k.size() != 1 || p.size() != 1) return false;
  Builder b{rw, node};
  const int64_t plane = self->type().rank() - 1;
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.op(OpId::unsqueeze, {Arg{self}, Arg{plane}}));
  const std::vector<ir::SymIntArg> kernel = {int64_t{1}, k[0]};
  const std::vector<ir::SymIntArg> stride = {int64_t{1}, s.empty() ? k[0] : s[0]};
  const std::vector<ir::SymIntArg> padding = {int64_t{0}, p[0]};
  SPLICE_ASSIGN_OR_RETURN(
      Value * pooled,
      b.op(OpId::avg_pool2d, {Arg{x}, Arg{kernel}, Arg{stride}, Arg{padding},
                              node->arg("ceil_mode"), node->arg("count_include_pad"), Arg{}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::squeeze_dim, {Arg{pooled}, Arg{plane}}));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// glu(self, dim) = a * sigmoid(b), a and b the first and second halves of dim (ATen's glu).
Result<bool> glu(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const int64_t rank = self->type().rank();
  int64_t dim = node->arg("dim").as<int64_t>();
  if (dim < 0) dim += rank;
  const auto n = static_size(self->type(), dim);
  if (!n) return unsupported(*node, "glu over a symbolic size");
  Builder b{rw, node};
  const int64_t half = *n / 2;
  SPLICE_ASSIGN_OR_RETURN(
      Value * first,
      b.op(OpId::slice_Tensor, {Arg{self}, Arg{dim}, Arg{int64_t{0}}, Arg{half}, Arg{int64_t{1}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * second, b.op(OpId::slice_Tensor, {Arg{self}, Arg{dim}, Arg{half},
                                                                    Arg{*n}, Arg{int64_t{1}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * gate, b.op(OpId::sigmoid, {Arg{second}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::mul_Tensor, {Arg{first}, Arg{gate}}));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// _weight_norm(v, g, dim) (nn.utils weight_norm's parametrization): v * (g / |v|), |v| the
// 2-norm over every dim but dim (over all of v for dim -1) kept as size-1 dims, in float for the
// half types as ATen's weight-norm kernels accumulate, cast back.
Result<bool> weight_norm(Rewriter& rw, Node* node) {
  Value* v = tensor_arg(*node, "v");
  Value* g = tensor_arg(*node, "g");
  if (v == nullptr || g == nullptr) return false;
  const int64_t rank = v->type().rank();
  const int64_t dim = node->arg("dim").as<int64_t>();
  const DType dtype = v->type().dtype;
  Builder b{rw, node};
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.cast(v, computation_dtype(dtype)));
  SPLICE_ASSIGN_OR_RETURN(Value * gain, b.cast(g, computation_dtype(dtype)));
  std::vector<ir::SymIntArg> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) dims.push_back(d);
  SPLICE_ASSIGN_OR_RETURN(Value * squares, b.op(OpId::mul_Tensor, {Arg{x}, Arg{x}}));
  SPLICE_ASSIGN_OR_RETURN(Value * sum,
                          b.op(OpId::sum_dim_IntList, {Arg{squares}, Arg{dims}, Arg{true}}));
  SPLICE_ASSIGN_OR_RETURN(Value * norm, b.op(OpId::sqrt, {Arg{sum}}));
  SPLICE_ASSIGN_OR_RETURN(Value * scale, b.op(OpId::div_Tensor, {Arg{gain}, Arg{norm}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::mul_Tensor, {Arg{x}, Arg{scale}}));
  SPLICE_ASSIGN_OR_RETURN(out, b.cast(out, dtype));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// ---- hardswish, hardsigmoid ----

// hardsigmoid(x) = min(max(x + 3, 0), 6) / 6 and hardswish(x) = x * that before the division,
// as ATen's kernels compute them (MobileNetV3, LeViT): in float for half and bfloat16, rounded
// once at the end.
Result<bool> hard_activation(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Builder b{rw, node};
  const DType dtype = self->type().dtype;
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.cast(self, computation_dtype(dtype)));
  SPLICE_ASSIGN_OR_RETURN(Value * shifted, b.op(OpId::add_Scalar, {Arg{x}, Arg{3.0}}));
  SPLICE_ASSIGN_OR_RETURN(Value * clamped, b.op(OpId::clamp, {Arg{shifted}, Arg{0.0}, Arg{6.0}}));
  Value* scaled = clamped;
  if (node->op_id() == OpId::hardswish) {
    SPLICE_ASSIGN_OR_RETURN(scaled, b.op(OpId::mul_Tensor, {Arg{x}, Arg{clamped}}));
  }
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::div_Scalar, {Arg{scaled}, Arg{6.0}}));
  SPLICE_ASSIGN_OR_RETURN(out, b.cast(out, dtype));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::batch_norm, batch_norm},
    {OpId::_native_batch_norm_legit_no_training, batch_norm},
    {OpId::_native_batch_norm_legit_no_stats, batch_norm},
    {OpId::_native_batch_norm_legit_functional, batch_norm},
    {OpId::max_pool2d, max_pool2d},
    {OpId::max_pool2d_with_indices, max_pool2d},
    {OpId::adaptive_avg_pool2d, adaptive_avg_pool2d},
    {OpId::_adaptive_avg_pool2d, adaptive_avg_pool2d},
    {OpId::adaptive_avg_pool1d, adaptive_avg_pool1d},
    {OpId::adaptive_avg_pool3d, adaptive_avg_pool3d},
    {OpId::_adaptive_avg_pool3d, adaptive_avg_pool3d},
    {OpId::avg_pool2d, avg_pool2d},
    {OpId::im2col, im2col},
    {OpId::col2im, col2im},
    {OpId::avg_pool1d, avg_pool1d},
    {OpId::glu, glu},
    {OpId::_weight_norm, weight_norm},
    {OpId::hardswish, hard_activation},
    {OpId::hardsigmoid, hard_activation},
};

}  // namespace

std::span<const Entry> cnn_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
