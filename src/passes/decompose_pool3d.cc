// Decompositions of the 3-d poolings (torchvision's s3d): max_pool3d, max_pool3d_with_indices
// (its indices unread) and avg_pool3d, as two 2-d poolings — one over each frame's (H, W)
// plane, one over time — which the 2-d decompositions (decompose_cnn_ops.cc) then lower.
//
// Why two poolings compute the 3-d one: a window of a 3-d pooling is the product of one
// interval per dim, each clipped by the padding and ceil mode on its own dim alone (ATen's
// pool3d loops compute tstart/tend, hstart/hend, wstart/wend independently). So
//   - the maximum over a box is the maximum over time of the maxima over the planes (NaN
//     propagates through both);
//   - avg_pool3d divides the box's sum by a product of one factor per dim (the padded window
//     sizes with count_include_pad, the clipped ones without), so the plane averages averaged
//     over time give it; with divisor_override the planes are summed (divisor 1) and the
//     time pooling divides by the override.
// The time pooling runs as a 2-d pooling with kernel [1, kT] of the frames laid out as
// [L, oH * oW, T] (a transpose). float16 and bfloat16 average in float32, as ATen accumulates,
// so the plane averages are not rounded before the second pooling.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// One int for all three dims, or three; `fallback` when omitted (an empty stride).
std::optional<std::array<int64_t, 3>> triple(const Arg& a, std::array<int64_t, 3> fallback) {
  std::vector<int64_t> v;
  if (a.is<int64_t>()) v.push_back(a.as<int64_t>());
  if (a.is<std::vector<ir::SymIntArg>>())
    for (const ir::SymIntArg& e : a.as<std::vector<ir::SymIntArg>>()) {
      if (!std::holds_alternative<int64_t>(e)) return std::nullopt;
      v.push_back(std::get<int64_t>(e));
    }
  if (v.empty()) return fallback;
  if (v.size() == 1) return std::array<int64_t, 3>{v[0], v[0], v[0]};
  if (v.size() != 3) return std::nullopt;
  return std::array<int64_t, 3>{v[0], v[1], v[2]};
}

Result<bool> pool3d(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const bool average = node->op_id() == OpId::avg_pool3d;
  if (node->outputs().size() == 2 && is_used(rw.graph(), node->outputs()[1]))
    return unsupported(*node, "max_pool3d_with_indices whose indices are read");
  const ir::TensorType& type = self->type();
  const DType dtype = type.dtype;
  if (average && !is_floating(dtype)) return unsupported(*node, "avg_pool3d of an integer tensor");
  const auto kernel = triple(node->arg("kernel_size"), {0, 0, 0});
  if (!kernel) return false;
  const auto stride = triple(node->arg("stride"), *kernel);
  const auto padding = triple(node->arg("padding"), {0, 0, 0});
  const auto dilation = average ? std::optional<std::array<int64_t, 3>>{{1, 1, 1}}
                                : triple(node->arg("dilation"), {1, 1, 1});
  if (!stride || !padding || !dilation) return false;
  const int64_t rank = type.rank();
  const ir::TensorType& out_type = node->outputs()[0]->type();
  const auto t = static_size(type, rank - 3);
  if (!t) return unsupported(*node, "a 3-d pooling over a symbolic number of frames");
  std::array<int64_t, 3> pooled{};  // (oT, oH, oW)
  for (int i = 0; i < 3; ++i) {
    const auto o = static_size(out_type, rank - 3 + i);
    if (!o) return unsupported(*node, "a 3-d pooling with symbolic output sizes");
    pooled[i] = *o;
  }

  Builder b{rw, node};
  SizeBuilder sb(rw, node);
  Value* x = self;
  if (average && (dtype == DType::kFloat16 || dtype == DType::kBFloat16)) {
    // float16 and bfloat16 average in float32 through both poolings, rounded once.
    SPLICE_ASSIGN_OR_RETURN(x, b.cast(x, DType::kFloat32));
  }
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sb.dims(self));
  const std::vector<Size> leading(dims.begin(), dims.end() - 3);
  SPLICE_ASSIGN_OR_RETURN(Size lead, sb.product(leading));
  SPLICE_ASSIGN_OR_RETURN(Size frames, sb.mul(lead, SizeBuilder::constant(*t)));
  const Arg& ceil = node->arg("ceil_mode");
  // A 2-d pooling of `v`'s last two dims with the windows of dims (i, j) of the 3-d one; i -1:
  // a window of one element (the time pooling's first dim, each plane position on its own).
  auto pool2d = [&](Value* v, int i, int j) -> Result<Value*> {
    auto pick = [&](const std::array<int64_t, 3>& of, int64_t one) {
      return Arg{std::vector<ir::SymIntArg>{i < 0 ? one : of[i], of[j]}};
    };
    if (!average) {
      return b.op(OpId::max_pool2d, {Arg{v}, pick(*kernel, 1), pick(*stride, 1), pick(*padding, 0),
                                     pick(*dilation, 1), ceil});
    }
    std::vector<Arg> args = {Arg{v},
                             pick(*kernel, 1),
                             pick(*stride, 1),
                             pick(*padding, 0),
                             ceil,
                             node->arg("count_include_pad")};
    // With divisor_override the planes are summed (divisor 1), the time pooling divides.
    const Arg& divisor = node->arg("divisor_override");
    if (i < 0 || divisor.is_none()) {
      args.push_back(divisor);
    } else {
      args.push_back(Arg{int64_t{1}});
    }
    return b.op(OpId::avg_pool2d, std::move(args));
  };

  // Each frame's plane: [L * T, H, W] -> [L * T, oH, oW].
  SPLICE_ASSIGN_OR_RETURN(Size h, sb.dim(self, rank - 2));
  SPLICE_ASSIGN_OR_RETURN(Size w, sb.dim(self, rank - 1));
  SPLICE_ASSIGN_OR_RETURN(Value * planes,
                          b.op(OpId::reshape, {Arg{x}, Arg{to_list({frames, h, w})}}));
  SPLICE_ASSIGN_OR_RETURN(planes, pool2d(planes, 1, 2));
  // Time: [L, T, oH * oW] -> [L, oH * oW, T] -> pooled [L, oH * oW, oT] -> [..., oT, oH, oW].
  const Size area = SizeBuilder::constant(pooled[1] * pooled[2]);
  SPLICE_ASSIGN_OR_RETURN(
      Value * series,
      b.op(OpId::reshape, {Arg{planes}, Arg{to_list({lead, SizeBuilder::constant(*t), area})}}));
  SPLICE_ASSIGN_OR_RETURN(
      series, b.op(OpId::transpose_int, {Arg{series}, Arg{int64_t{1}}, Arg{int64_t{2}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * out, pool2d(series, -1, 0));
  SPLICE_ASSIGN_OR_RETURN(out,
                          b.op(OpId::transpose_int, {Arg{out}, Arg{int64_t{1}}, Arg{int64_t{2}}}));
  std::vector<Size> shape = leading;
  for (int64_t o : pooled) shape.push_back(SizeBuilder::constant(o));
  SPLICE_ASSIGN_OR_RETURN(out, b.op(OpId::reshape, {Arg{out}, Arg{to_list(shape)}}));
  SPLICE_ASSIGN_OR_RETURN(out, b.cast(out, dtype));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::max_pool3d, pool3d},
    {OpId::max_pool3d_with_indices, pool3d},
    {OpId::avg_pool3d, pool3d},
};

}  // namespace

std::span<const Entry> pool3d_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
