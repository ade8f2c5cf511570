// Decompositions of grid sampling (RAFT's correlation lookups and warps, spatial transformers):
// grid_sampler (the training IR's op) and grid_sampler_2d (its core form) of a 4-d input, step
// for step as ATen's CPU kernel computes them (native/cpu/GridSamplerKernel.cpp: every
// operation in the input's dtype, so float16 rounds where eager's does). For each output pixel
// the grid's (x, y) in [-1, 1] becomes a source position:
//   unnormalize: (x + 1) * (W - 1) / 2 with align_corners (the corner pixels' centres at -1
//     and 1), else (x + 1) * W / 2 - 0.5 (the corners' outer edges);
//   padding: zeros keeps it; border clips it into [0, W - 1] (NaN to 0); reflection folds it
//     into [low, low + span] (the centres 0 and W - 1 with align_corners, else the edges -0.5
//     and W - 0.5): e = |pos - low| - trunc(|pos - low| / 2span) * 2span, min(e, 2span - e) +
//     low, then clips it.
// bilinear reads the four pixels around the position, weighted by the distances to the far
// sides (ATen's nw = s * e, ...); nearest the pixel at the position rounded half to even;
// bicubic the 4 x 4 pixels around the unpadded position, each coordinate padded on its own,
// weighted by Keys' cubic convolution along x, then along y. A pixel outside the input adds 0:
// its index is replaced by 0 and its term by 0 (never read out of bounds; a NaN position reads
// nothing). Each tap is one index.Tensor gather of the input viewed as [N, C, H * W] at the flat
// index y * W + x of every output pixel (N and C by broadcast aranges).
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::SymIntArg;
using ir::Value;

enum class Padding { kZeros = 0, kBorder = 1, kReflection = 2 };

// The sizes a sampling works over: the input's N, C, H, W and the grid's oH, oW.
struct Sizes {
  int64_t n = 0, c = 0, h = 0, w = 0, out_h = 0, out_w = 0;
};

class GridSampler {
 public:
  GridSampler(Builder& b, const Sizes& s, Padding padding, bool align_corners)
      : b_(b), s_(s), extent_{s.w, s.h}, padding_(padding), align_corners_(align_corners) {}

  // The input as [N, C, H * W], and the broadcast N and C indices of every gather.
  Result<void> set_input(Value* input) {
    const std::vector<SymIntArg> flat = {s_.n, s_.c, s_.h * s_.w};
    SPLICE_ASSIGN_OR_RETURN(flat_, b_.op(OpId::reshape, {Arg{input}, Arg{flat}}));
    SPLICE_ASSIGN_OR_RETURN(batch_, index_column(s_.n, {s_.n, 1, 1}));
    SPLICE_ASSIGN_OR_RETURN(channel_, index_column(s_.c, {1, s_.c, 1}));
    return ok_result();
  }

  // Grid coordinate `coord` ([N, oH, oW]; axis 0: x, 1: y) as a position in pixels.
  Result<Value*> unnormalize(Value* coord, int axis) {
    const double size = static_cast<double>(extent_[axis]);
    SPLICE_ASSIGN_OR_RETURN(Value * v, b_.op(OpId::add_Scalar, {Arg{coord}, Arg{1.0}}));
    if (align_corners_) return b_.op(OpId::mul_Scalar, {Arg{v}, Arg{(size - 1) / 2}});
    SPLICE_ASSIGN_OR_RETURN(v, b_.op(OpId::mul_Scalar, {Arg{v}, Arg{size / 2}}));
    return b_.op(OpId::sub_Scalar, {Arg{v}, Arg{0.5}});
  }

  // ATen's compute_coordinates: a position moved inside the input by the padding mode.
  Result<Value*> pad(Value* pos, int axis) {
    if (padding_ == Padding::kZeros) return pos;
    if (padding_ == Padding::kReflection) {
      SPLICE_ASSIGN_OR_RETURN(pos, reflect(pos, axis));
    }
    // clip_coordinates: max(0, pos) with NaN to 0, then min(size - 1, ...).
    SPLICE_ASSIGN_OR_RETURN(Value * above, b_.op(OpId::ge_Scalar, {Arg{pos}, Arg{0.0}}));
    SPLICE_ASSIGN_OR_RETURN(pos, b_.op(OpId::where_ScalarOther, {Arg{above}, Arg{pos}, Arg{0.0}}));
    return b_.op(OpId::clamp_max, {Arg{pos}, Arg{static_cast<double>(extent_[axis] - 1)}});
  }

  // An integral position along `axis` ([N, oH, oW]) as the gathers read it: whether it lies
  // inside the input, and its index there (0 outside or NaN: an outside position is never
  // converted to an integer). Computed once per position and shared by every tap that reads it
  // (bilinear's 4 taps read 2 positions per axis, bicubic's 16 read 4).
  struct Coord {
    Value* inside = nullptr;
    Value* index = nullptr;  // int64
  };
  Result<Coord> coord(Value* pos, int axis) {
    SPLICE_ASSIGN_OR_RETURN(Value * low, b_.op(OpId::ge_Scalar, {Arg{pos}, Arg{0.0}}));
    SPLICE_ASSIGN_OR_RETURN(
        Value * high, b_.op(OpId::lt_Scalar, {Arg{pos}, Arg{static_cast<double>(extent_[axis])}}));
    SPLICE_ASSIGN_OR_RETURN(Value * inside, b_.op(OpId::logical_and, {Arg{low}, Arg{high}}));
    SPLICE_ASSIGN_OR_RETURN(Value * index,
                            b_.op(OpId::where_ScalarOther, {Arg{inside}, Arg{pos}, Arg{0.0}}));
    SPLICE_ASSIGN_OR_RETURN(index, b_.cast(index, DType::kInt64));
    return Coord{inside, index};
  }

  // The pixels at (x, y) as [N, C, oH, oW], times `weight` ([N, oH, oW]) when one is given; 0
  // where (x, y) lies outside the input. Where only one of x and y is inside, the gather reads
  // the in-bounds pixel of the other's index 0 and the mask drops it.
  Result<Value*> tap(const Coord& x, const Coord& y, Value* weight) {
    SPLICE_ASSIGN_OR_RETURN(Value * inside,
                            b_.op(OpId::logical_and, {Arg{x.inside}, Arg{y.inside}}));
    SPLICE_ASSIGN_OR_RETURN(Value * flat, b_.op(OpId::mul_Scalar, {Arg{y.index}, Arg{s_.w}}));
    SPLICE_ASSIGN_OR_RETURN(flat, b_.op(OpId::add_Tensor, {Arg{flat}, Arg{x.index}}));
    const std::vector<SymIntArg> per_image = {s_.n, 1, s_.out_h * s_.out_w};
    SPLICE_ASSIGN_OR_RETURN(flat, b_.op(OpId::reshape, {Arg{flat}, Arg{per_image}}));
    const std::vector<Value*> indices = {batch_, channel_, flat};
    SPLICE_ASSIGN_OR_RETURN(Value * pixels, b_.op(OpId::index_Tensor, {Arg{flat_}, Arg{indices}}));
    const std::vector<SymIntArg> image = {s_.n, s_.c, s_.out_h, s_.out_w};
    SPLICE_ASSIGN_OR_RETURN(pixels, b_.op(OpId::reshape, {Arg{pixels}, Arg{image}}));
    if (weight != nullptr) {
      SPLICE_ASSIGN_OR_RETURN(Value * w, b_.op(OpId::unsqueeze, {Arg{weight}, Arg{int64_t{1}}}));
      SPLICE_ASSIGN_OR_RETURN(pixels, b_.op(OpId::mul_Tensor, {Arg{pixels}, Arg{w}}));
    }
    SPLICE_ASSIGN_OR_RETURN(inside, b_.op(OpId::unsqueeze, {Arg{inside}, Arg{int64_t{1}}}));
    return b_.op(OpId::where_ScalarOther, {Arg{inside}, Arg{pixels}, Arg{0.0}});
  }

 private:
  // [0, 1, ..., count - 1] viewed as `shape` (a broadcast index of advanced indexing).
  Result<Value*> index_column(int64_t count, std::vector<SymIntArg> shape) {
    SPLICE_ASSIGN_OR_RETURN(Value * v,
                            b_.op(OpId::arange, {Arg{count}}, {{"dtype", Arg{DType::kInt64}}}));
    return b_.op(OpId::view, {Arg{v}, Arg{std::move(shape)}});
  }

  // ATen's reflect_coordinates (the top of the file); with align_corners an input of one pixel
  // (no span between the centres) reflects everything to 0.
  Result<Value*> reflect(Value* pos, int axis) {
    const int64_t size = extent_[axis];
    if (align_corners_ && size <= 1) return b_.op(OpId::zeros_like, {Arg{pos}});
    const double low = align_corners_ ? 0.0 : -0.5;
    const double twice_span = static_cast<double>(align_corners_ ? (size - 1) * 2 : size * 2);
    Value* d = pos;
    if (!align_corners_) {
      SPLICE_ASSIGN_OR_RETURN(d, b_.op(OpId::sub_Scalar, {Arg{pos}, Arg{low}}));
    }
    SPLICE_ASSIGN_OR_RETURN(d, b_.op(OpId::abs, {Arg{d}}));
    SPLICE_ASSIGN_OR_RETURN(Value * flips, b_.op(OpId::div_Scalar, {Arg{d}, Arg{twice_span}}));
    // trunc, as ATen takes it: floor of a value that is never negative.
    SPLICE_ASSIGN_OR_RETURN(flips, b_.op(OpId::floor, {Arg{flips}}));
    SPLICE_ASSIGN_OR_RETURN(flips, b_.op(OpId::mul_Scalar, {Arg{flips}, Arg{twice_span}}));
    SPLICE_ASSIGN_OR_RETURN(Value * extra, b_.op(OpId::sub_Tensor, {Arg{d}, Arg{flips}}));
    SPLICE_ASSIGN_OR_RETURN(Value * other, b_.op(OpId::rsub_Scalar, {Arg{extra}, Arg{twice_span}}));
    SPLICE_ASSIGN_OR_RETURN(Value * folded, b_.op(OpId::minimum, {Arg{extra}, Arg{other}}));
    if (align_corners_) return folded;
    return b_.op(OpId::add_Scalar, {Arg{folded}, Arg{low}});
  }

  Builder& b_;
  Sizes s_;
  std::array<int64_t, 2> extent_;  // W, H: the size along each axis
  Padding padding_;
  bool align_corners_;
  Value* flat_ = nullptr;
  Value* batch_ = nullptr;
  Value* channel_ = nullptr;
};

Result<Value*> add(Builder& b, Value* sum, Value* term) {
  if (sum == nullptr) return term;
  return b.op(OpId::add_Tensor, {Arg{sum}, Arg{term}});
}

// ((values[0] * weights[0] + values[1] * weights[1]) + ...), the weights ([N, oH, oW]) broadcast
// over the channels.
Result<Value*> cubic_sum(Builder& b, const std::array<Value*, 4>& values,
                         const std::array<Value*, 4>& weights) {
  Value* sum = nullptr;
  for (size_t k = 0; k < 4; ++k) {
    SPLICE_ASSIGN_OR_RETURN(Value * w, b.op(OpId::unsqueeze, {Arg{weights[k]}, Arg{int64_t{1}}}));
    SPLICE_ASSIGN_OR_RETURN(Value * term, b.op(OpId::mul_Tensor, {Arg{values[k]}, Arg{w}}));
    SPLICE_ASSIGN_OR_RETURN(sum, add(b, sum, term));
  }
  return sum;
}

// The four corners around each position, weighted by the distances to the far sides: from
// west = pos - floor(pos) and east = 1 - west (north and south along y), nw = s * e, ne = s * w,
// sw = n * e, se = n * w, summed in that order.
Result<Value*> bilinear(Builder& b, GridSampler& sampler, const std::array<Value*, 2>& pos) {
  std::array<GridSampler::Coord, 2> low{}, high{};
  std::array<Value*, 2> to_low{}, to_high{};
  for (int axis = 0; axis < 2; ++axis) {
    SPLICE_ASSIGN_OR_RETURN(Value * first, b.op(OpId::floor, {Arg{pos[axis]}}));
    SPLICE_ASSIGN_OR_RETURN(Value * second, b.op(OpId::add_Scalar, {Arg{first}, Arg{1.0}}));
    SPLICE_ASSIGN_OR_RETURN(to_low[axis], b.op(OpId::sub_Tensor, {Arg{pos[axis]}, Arg{first}}));
    SPLICE_ASSIGN_OR_RETURN(to_high[axis], b.op(OpId::rsub_Scalar, {Arg{to_low[axis]}, Arg{1.0}}));
    SPLICE_ASSIGN_OR_RETURN(low[axis], sampler.coord(first, axis));
    SPLICE_ASSIGN_OR_RETURN(high[axis], sampler.coord(second, axis));
  }
  Value* out = nullptr;
  for (const auto& [x_high, y_high] : {std::pair{false, false}, std::pair{true, false},
                                       std::pair{false, true}, std::pair{true, true}}) {
    SPLICE_ASSIGN_OR_RETURN(Value * weight,
                            b.op(OpId::mul_Tensor, {Arg{y_high ? to_low[1] : to_high[1]},
                                                    Arg{x_high ? to_low[0] : to_high[0]}}));
    SPLICE_ASSIGN_OR_RETURN(
        Value * term, sampler.tap(x_high ? high[0] : low[0], y_high ? high[1] : low[1], weight));
    SPLICE_ASSIGN_OR_RETURN(out, add(b, out, term));
  }
  return out;
}

// The 4 x 4 pixels from floor(pos) - 1 to floor(pos) + 2 along each axis (each coordinate
// padded on its own), along x first, then along y.
Result<Value*> bicubic(Builder& b, GridSampler& sampler, const std::array<Value*, 2>& pos) {
  std::array<std::array<GridSampler::Coord, 4>, 2> taps{};
  std::array<std::array<Value*, 4>, 2> weights{};
  for (int axis = 0; axis < 2; ++axis) {
    SPLICE_ASSIGN_OR_RETURN(Value * first, b.op(OpId::floor, {Arg{pos[axis]}}));
    SPLICE_ASSIGN_OR_RETURN(Value * t, b.op(OpId::sub_Tensor, {Arg{pos[axis]}, Arg{first}}));
    SPLICE_ASSIGN_OR_RETURN(weights[axis], cubic_weights(b, t, CubicTaps::kGridSampler));
    for (int64_t k = 0; k < 4; ++k) {
      SPLICE_ASSIGN_OR_RETURN(
          Value * at, b.op(OpId::add_Scalar, {Arg{first}, Arg{static_cast<double>(k - 1)}}));
      SPLICE_ASSIGN_OR_RETURN(at, sampler.pad(at, axis));
      SPLICE_ASSIGN_OR_RETURN(taps[axis][k], sampler.coord(at, axis));
    }
  }
  std::array<Value*, 4> rows{};
  for (size_t j = 0; j < 4; ++j) {
    std::array<Value*, 4> row{};
    for (size_t i = 0; i < 4; ++i) {
      SPLICE_ASSIGN_OR_RETURN(row[i], sampler.tap(taps[0][i], taps[1][j], nullptr));
    }
    SPLICE_ASSIGN_OR_RETURN(rows[j], cubic_sum(b, row, weights[0]));
  }
  return cubic_sum(b, rows, weights[1]);
}

Result<bool> grid_sample(Rewriter& rw, Node* node) {
  Value* input = tensor_arg(*node, "input");
  Value* grid = tensor_arg(*node, "grid");
  if (input == nullptr || grid == nullptr || node->outputs().empty()) return false;
  const ir::TensorType& in = input->type();
  const ir::TensorType& g = grid->type();
  if (in.rank() != 4 || g.rank() != 4) return false;  // the shape rule refused it already
  const std::array<std::optional<int64_t>, 6> known = {static_size(in, 0), static_size(in, 1),
                                                       static_size(in, 2), static_size(in, 3),
                                                       static_size(g, 1),  static_size(g, 2)};
  for (const auto& k : known)
    if (!k) return unsupported(*node, "over symbolic sizes");
  const Sizes sizes{*known[0], *known[1], *known[2], *known[3], *known[4], *known[5]};
  const int64_t mode = node->arg("interpolation_mode").as<int64_t>();
  const auto padding = static_cast<Padding>(node->arg("padding_mode").as<int64_t>());
  const bool align_corners = node->arg("align_corners").as<bool>();
  Builder b{rw, node};
  GridSampler sampler(b, sizes, padding, align_corners);
  SPLICE_TRY(sampler.set_input(input));
  std::array<Value*, 2> pos{};  // x, y in pixels
  for (int axis = 0; axis < 2; ++axis) {
    SPLICE_ASSIGN_OR_RETURN(
        Value * coord, b.op(OpId::select_int, {Arg{grid}, Arg{int64_t{3}}, Arg{int64_t{axis}}}));
    SPLICE_ASSIGN_OR_RETURN(pos[axis], sampler.unnormalize(coord, axis));
    if (mode != 2) {  // bicubic pads each tap instead
      SPLICE_ASSIGN_OR_RETURN(pos[axis], sampler.pad(pos[axis], axis));
    }
  }
  Value* out = nullptr;
  if (mode == 0) {
    SPLICE_ASSIGN_OR_RETURN(out, bilinear(b, sampler, pos));
  } else if (mode == 1) {  // nearest: rounded half to even
    std::array<GridSampler::Coord, 2> at{};
    for (int axis = 0; axis < 2; ++axis) {
      SPLICE_ASSIGN_OR_RETURN(Value * rounded, b.op(OpId::round, {Arg{pos[axis]}}));
      SPLICE_ASSIGN_OR_RETURN(at[axis], sampler.coord(rounded, axis));
    }
    SPLICE_ASSIGN_OR_RETURN(out, sampler.tap(at[0], at[1], nullptr));
  } else {
    SPLICE_ASSIGN_OR_RETURN(out, bicubic(b, sampler, pos));
  }
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::grid_sampler, grid_sample},
    {OpId::grid_sampler_2d, grid_sample},
};

}  // namespace

std::span<const Entry> grid_sample_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
