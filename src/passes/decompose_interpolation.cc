// Decompositions of the 2-d resampling ops (decompositions.h) — upsample_nearest2d,
// upsample_bilinear2d and upsample_bicubic2d, both overloads — as ATen's CPU kernels compute
// them (aten/src/ATen/native/UpSample.h): each spatial dim is resized on its own, the output
// picking input rows by index_select with indices computed from an arange in the same float
// operations ATen uses, so the picked rows and the weights round as eager's do.
//   nearest: src = min(floor(dst * scale), in - 1), scale = in / out in float (1 / scale_factor
//     when one is given; 0.5 when out == 2 * in, ATen's shift; a dim of equal sizes is kept).
//   bilinear: real = scale * (dst + 0.5) - 0.5 clamped at 0 (align_corners: scale * dst, with
//     scale = (in - 1) / (out - 1)); the rows floor(real) and the next one (the last row
//     repeats), weighted 1 - t and t, t = real - floor(real) clamped to [0, 1].
//   bicubic: the same source index without the clamp, four rows from floor(real) - 1 (clamped
//     into the input), weighted by Keys' cubic convolution with A = -0.75.
// The half types compute in float and round once at the end. Spatial sizes must be static: the
// scale is a number of the program, as in every exported vision model. _unsafe_index, what
// run_decompositions({}) makes of these ops, is index.Tensor here.
#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "ir/pointwise.h"
#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

enum class Mode { kNearest, kLinear, kCubic };

// One spatial dim's resize: its sizes and the scale argument the op was given (scales_h,
// scale_factors[0], ...).
struct Resize {
  int64_t dim = 2;
  int64_t in = 0;
  int64_t out = 0;
  std::optional<double> scale;
};

// ATen's compute_scales_value in `T`: 1 / scale when one is given and positive, else in / out.
template <typename T>
T scales_value(const Resize& r) {
  if (r.scale && *r.scale > 0) return static_cast<T>(1.0 / *r.scale);
  return static_cast<T>(r.in) / static_cast<T>(r.out);
}

// ATen's area_pixel_compute_scale in `T`.
template <typename T>
T area_scale(const Resize& r, bool align_corners) {
  if (!align_corners) return scales_value<T>(r);
  return r.out > 1 ? static_cast<T>(r.in - 1) / static_cast<T>(r.out - 1) : T(0);
}

// The scale as the Scalar argument of a pointwise op computing in `compute`: exactly the value
// ATen computes in that dtype (a float32 scale stays a float32 value once converted back).
double area_scale_number(const Resize& r, bool align_corners, DType compute) {
  if (compute == DType::kFloat64) return area_scale<double>(r, align_corners);
  return static_cast<double>(area_scale<float>(r, align_corners));
}

// ((A + 2) * x - (A + 3)) * x * x + 1, for |x| <= 1.
Result<Value*> convolution1(Builder& b, Value* x, double A) {
  SPLICE_ASSIGN_OR_RETURN(Value * v, b.op(OpId::mul_Scalar, {Arg{x}, Arg{A + 2}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::sub_Scalar, {Arg{v}, Arg{A + 3}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::mul_Tensor, {Arg{v}, Arg{x}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::mul_Tensor, {Arg{v}, Arg{x}}));
  return b.op(OpId::add_Scalar, {Arg{v}, Arg{1.0}});
}

// ((A * x - 5A) * x + 8A) * x - 4A, for 1 < |x| < 2.
Result<Value*> convolution2(Builder& b, Value* x, double A) {
  SPLICE_ASSIGN_OR_RETURN(Value * v, b.op(OpId::mul_Scalar, {Arg{x}, Arg{A}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::sub_Scalar, {Arg{v}, Arg{5 * A}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::mul_Tensor, {Arg{v}, Arg{x}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::add_Scalar, {Arg{v}, Arg{8 * A}}));
  SPLICE_ASSIGN_OR_RETURN(v, b.op(OpId::mul_Tensor, {Arg{v}, Arg{x}}));
  return b.op(OpId::sub_Scalar, {Arg{v}, Arg{4 * A}});
}

// Builds one dim's resize of `x` (already in the compute dtype for linear and cubic).
class DimResizer {
 public:
  DimResizer(Builder& b, DType compute) : b_(b), compute_(compute) {}

  Result<Value*> nearest(Value* x, const Resize& r) {
    // ATen's nearest_idx: out == 2 * in shifts (the same as a float scale of 0.5).
    const double scale = r.out == 2 * r.in ? 0.5 : static_cast<double>(scales_value<float>(r));
    SPLICE_ASSIGN_OR_RETURN(Value * dst, positions(r, DType::kFloat32));
    SPLICE_ASSIGN_OR_RETURN(Value * src, b_.op(OpId::mul_Scalar, {Arg{dst}, Arg{scale}}));
    SPLICE_ASSIGN_OR_RETURN(src, b_.op(OpId::floor, {Arg{src}}));
    SPLICE_ASSIGN_OR_RETURN(Value * index, b_.cast(src, DType::kInt64));
    SPLICE_ASSIGN_OR_RETURN(index, b_.op(OpId::clamp_max, {Arg{index}, Arg{r.in - 1}}));
    return b_.op(OpId::index_select, {Arg{x}, Arg{r.dim}, Arg{index}});
  }

  Result<Value*> linear(Value* x, const Resize& r, bool align_corners) {
    SPLICE_ASSIGN_OR_RETURN(Value * real, source_index(r, align_corners, /*cubic=*/false));
    SPLICE_ASSIGN_OR_RETURN(auto floor_and_t, guard(real, r));
    auto [index0, t] = floor_and_t;
    SPLICE_ASSIGN_OR_RETURN(Value * next, b_.op(OpId::add_Scalar, {Arg{index0}, Arg{int64_t{1}}}));
    SPLICE_ASSIGN_OR_RETURN(Value * index1, b_.op(OpId::clamp_max, {Arg{next}, Arg{r.in - 1}}));
    SPLICE_ASSIGN_OR_RETURN(Value * w0, b_.op(OpId::rsub_Scalar, {Arg{t}, Arg{1.0}}));
    const std::array<Value*, 2> indices = {index0, index1}, weights = {w0, t};
    return weighted_sum(x, r, indices, weights);
  }

  Result<Value*> cubic(Value* x, const Resize& r, bool align_corners) {
    SPLICE_ASSIGN_OR_RETURN(Value * real, source_index(r, align_corners, /*cubic=*/true));
    SPLICE_ASSIGN_OR_RETURN(auto floor_and_t, guard(real, r));
    auto [index, t] = floor_and_t;
    SPLICE_ASSIGN_OR_RETURN(const auto weights, cubic_weights(b_, t, CubicTaps::kUpsample));
    std::array<Value*, 4> indices{};
    for (int64_t k = 0; k < 4; ++k) {
      SPLICE_ASSIGN_OR_RETURN(Value * tap, b_.op(OpId::add_Scalar, {Arg{index}, Arg{k - 1}}));
      SPLICE_ASSIGN_OR_RETURN(indices[k],
                              b_.op(OpId::clamp, {Arg{tap}, Arg{int64_t{0}}, Arg{r.in - 1}}));
    }
    return weighted_sum(x, r, indices, weights);
  }

 private:
  // arange(out) in `dtype`.
  Result<Value*> positions(const Resize& r, DType dtype) {
    SPLICE_ASSIGN_OR_RETURN(Value * dst,
                            b_.op(OpId::arange, {Arg{r.out}}, {{"dtype", Arg{DType::kInt64}}}));
    return b_.cast(dst, dtype);
  }

  // area_pixel_compute_source_index in the compute dtype.
  Result<Value*> source_index(const Resize& r, bool align_corners, bool cubic) {
    const double scale = area_scale_number(r, align_corners, compute_);
    SPLICE_ASSIGN_OR_RETURN(Value * dst, positions(r, compute_));
    if (align_corners) return b_.op(OpId::mul_Scalar, {Arg{dst}, Arg{scale}});
    SPLICE_ASSIGN_OR_RETURN(Value * centre, b_.op(OpId::add_Scalar, {Arg{dst}, Arg{0.5}}));
    SPLICE_ASSIGN_OR_RETURN(Value * scaled, b_.op(OpId::mul_Scalar, {Arg{centre}, Arg{scale}}));
    SPLICE_ASSIGN_OR_RETURN(Value * real, b_.op(OpId::sub_Scalar, {Arg{scaled}, Arg{0.5}}));
    if (cubic) return real;
    return b_.op(OpId::clamp_min, {Arg{real}, Arg{0.0}});
  }

  // ATen's guard_index_and_lambda: index = min(floor(real), in - 1) as int64, and
  // t = clamp(real - index, 0, 1) in the compute dtype (the int64 index promoted by the sub,
  // as torch/_decomp's upsample computes it).
  Result<std::pair<Value*, Value*>> guard(Value* real, const Resize& r) {
    SPLICE_ASSIGN_OR_RETURN(Value * floored, b_.op(OpId::floor, {Arg{real}}));
    SPLICE_ASSIGN_OR_RETURN(Value * index, b_.cast(floored, DType::kInt64));
    SPLICE_ASSIGN_OR_RETURN(index, b_.op(OpId::clamp_max, {Arg{index}, Arg{r.in - 1}}));
    SPLICE_ASSIGN_OR_RETURN(Value * t, b_.op(OpId::sub_Tensor, {Arg{real}, Arg{index}}));
    SPLICE_ASSIGN_OR_RETURN(t, b_.op(OpId::clamp, {Arg{t}, Arg{0.0}, Arg{1.0}}));
    return std::make_pair(index, t);
  }

  // sum_k index_select(x, dim, indices[k]) * weights[k], the weights ([out]) broadcast along
  // `dim` of the [N, C, H, W] tensor.
  Result<Value*> weighted_sum(Value* x, const Resize& r, std::span<Value* const> indices,
                              std::span<Value* const> weights) {
    Value* sum = nullptr;
    for (size_t k = 0; k < indices.size(); ++k) {
      SPLICE_ASSIGN_OR_RETURN(Value * rows,
                              b_.op(OpId::index_select, {Arg{x}, Arg{r.dim}, Arg{indices[k]}}));
      Value* w = weights[k];
      if (r.dim == 2) {
        SPLICE_ASSIGN_OR_RETURN(w, b_.op(OpId::unsqueeze, {Arg{w}, Arg{int64_t{-1}}}));
      }
      SPLICE_ASSIGN_OR_RETURN(Value * term, b_.op(OpId::mul_Tensor, {Arg{rows}, Arg{w}}));
      if (sum == nullptr) {
        sum = term;
      } else {
        SPLICE_ASSIGN_OR_RETURN(sum, b_.op(OpId::add_Tensor, {Arg{sum}, Arg{term}}));
      }
    }
    return sum;
  }

  Builder& b_;
  DType compute_;
};

Result<bool> upsample2d(Rewriter& rw, Node* node) {
  const bool vec = node->op().find_arg("input").has_value();
  Value* x = tensor_arg(*node, vec ? "input" : "self");
  if (x == nullptr || node->outputs().empty()) return false;
  const ir::TensorType& out_type = node->outputs()[0]->type();
  Mode mode = Mode::kNearest;
  switch (node->op_id()) {
    case OpId::upsample_bilinear2d:
    case OpId::upsample_bilinear2d_vec:
      mode = Mode::kLinear;
      break;
    case OpId::upsample_bicubic2d:
    case OpId::upsample_bicubic2d_vec:
      mode = Mode::kCubic;
      break;
    default:
      break;
  }
  const bool align_corners = mode != Mode::kNearest && node->arg("align_corners").is<bool>() &&
                             node->arg("align_corners").as<bool>();
  std::vector<Resize> dims(2);
  for (int64_t i = 0; i < 2; ++i) {
    Resize& r = dims[i];
    r.dim = 2 + i;
    auto in = static_size(x->type(), r.dim);
    auto out = static_size(out_type, r.dim);
    if (!in || !out)
      return make_error(ErrorKind::kUnsupportedOp,
                        "{}: resampling a symbolic spatial size is not supported",
                        node_label(*node));
    r.in = *in;
    r.out = *out;
    if (vec) {
      const Arg& factors = node->arg("scale_factors");
      if (factors.is<std::vector<double>>() &&
          static_cast<int64_t>(factors.as<std::vector<double>>().size()) > i)
        r.scale = factors.as<std::vector<double>>()[i];
    } else {
      r.scale = constant_number(node->arg(i == 0 ? "scales_h" : "scales_w"));
    }
  }
  Builder b{rw, node};
  const DType dtype = x->type().dtype;
  const DType compute = ir::opmath_dtype(dtype);
  DimResizer resize(b, compute);
  Value* y = x;
  if (mode != Mode::kNearest) {
    SPLICE_ASSIGN_OR_RETURN(y, b.cast(y, compute));
  }
  // The width first, then the height, as ATen's separable kernel.
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const Resize& r = *it;
    if (mode == Mode::kNearest) {
      if (r.out == r.in) continue;  // nearest_idx's identity
      SPLICE_ASSIGN_OR_RETURN(y, resize.nearest(y, r));
    } else if (mode == Mode::kLinear) {
      if (r.out == r.in) continue;  // compute_source_index_and_lambda's copy
      SPLICE_ASSIGN_OR_RETURN(y, resize.linear(y, r, align_corners));
    } else {
      SPLICE_ASSIGN_OR_RETURN(y, resize.cubic(y, r, align_corners));
    }
  }
  SPLICE_ASSIGN_OR_RETURN(y, b.cast(y, dtype));
  if (y == x) {
    // Nothing resized: the op still returns a new tensor.
    SPLICE_ASSIGN_OR_RETURN(y, b.op(OpId::clone, {Arg{x}}));
  }
  SPLICE_TRY(replace_outputs(rw, node, {y}));
  return true;
}

// _unsafe_index(self, indices): index.Tensor, whose bounds check the indices the upsample
// decompositions of run_decompositions({}) compute always pass.
Result<bool> unsafe_index(Rewriter& rw, Node* node) {
  std::vector<Arg> args = node->args();
  SPLICE_TRY(rw.replace(node, OpId::index_Tensor, std::move(args)));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::_unsafe_index_Tensor, unsafe_index},  {OpId::upsample_nearest2d, upsample2d},
    {OpId::upsample_nearest2d_vec, upsample2d},  {OpId::upsample_bilinear2d, upsample2d},
    {OpId::upsample_bilinear2d_vec, upsample2d}, {OpId::upsample_bicubic2d, upsample2d},
    {OpId::upsample_bicubic2d_vec, upsample2d},
};

}  // namespace

Result<std::array<Value*, 4>> cubic_weights(Builder& b, Value* t, CubicTaps taps) {
  constexpr double A = -0.75;
  SPLICE_ASSIGN_OR_RETURN(Value * t1, b.op(OpId::add_Scalar, {Arg{t}, Arg{1.0}}));
  SPLICE_ASSIGN_OR_RETURN(Value * u, b.op(OpId::rsub_Scalar, {Arg{t}, Arg{1.0}}));
  SPLICE_ASSIGN_OR_RETURN(Value * u1, taps == CubicTaps::kUpsample
                                          ? b.op(OpId::add_Scalar, {Arg{u}, Arg{1.0}})
                                          : b.op(OpId::rsub_Scalar, {Arg{t}, Arg{2.0}}));
  std::array<Value*, 4> w{};
  SPLICE_ASSIGN_OR_RETURN(w[0], convolution2(b, t1, A));
  SPLICE_ASSIGN_OR_RETURN(w[1], convolution1(b, t, A));
  SPLICE_ASSIGN_OR_RETURN(w[2], convolution1(b, u, A));
  SPLICE_ASSIGN_OR_RETURN(w[3], convolution2(b, u1, A));
  return w;
}

std::span<const Entry> interpolation_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
