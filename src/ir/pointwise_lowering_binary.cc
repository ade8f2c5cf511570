// Lowering of the binary and ternary pointwise ops, mirroring the CPU kernels
// (cpu/pointwise_binary.cc, compare.cc, pointwise_minmax.cc, pointwise_more.cc's atan2):
// add/sub/rsub with alpha, mul, div (true, trunc, floor), remainder, fmod, pow, floor_divide,
// where, logical and bitwise ops, masked_fill, comparisons, minimum/maximum, clamp and
// clamp_min/clamp_max in both overloads.
#include <cmath>

#include "ir/pointwise_lowering_util.h"

namespace splice::ir::lowering {

namespace {

enum class BinOp { kAdd, kMul, kDiv, kDivTrunc, kDivFloor, kRem, kFmod, kPow };

bool is_one(const Scalar& s) { return s.is_double() ? s.to_double() == 1.0 : s.to_int() == 1; }

// cpu::arith: result_type, the checks, then one node.
Result<LoweredPointwise> arith(std::string_view op, BinOp kind, const Operand& a, const Operand& b,
                               const Scalar& alpha) {
  const PromotionOperand ops[] = {a.promotion(), b.promotion()};
  const DType common = result_type(ops);
  DType compute = common;
  if (kind == BinOp::kDiv && !is_floating(common)) compute = DType::kFloat32;
  if (kind == BinOp::kAdd) {
    LCHECK(!(is_integral(common) || common == DType::kBool) || !alpha.is_double(),
           ErrorKind::kBadInput,
           "for integral input tensors, argument alpha must not be a floating point number");
    LCHECK(common != DType::kBool || alpha.is_bool(), ErrorKind::kBadInput,
           "boolean alpha only supported for boolean results");
  }
  LCHECK(
      common != DType::kBool || kind == BinOp::kAdd || kind == BinOp::kMul || kind == BinOp::kDiv,
      ErrorKind::kBadInput, "not implemented for bool tensors");
  const bool half = compute == DType::kFloat16 || compute == DType::kBFloat16;
  const bool keep_b = (kind == BinOp::kMul || kind == BinOp::kDiv) && b.is_zero_dim() && half;
  Builder build;
  const PointwiseRef x = build.operand(a, compute);
  const PointwiseRef y = build.operand(b, compute, keep_b);
  PointwiseRef out;
  switch (kind) {
    case BinOp::kAdd:
      if (is_one(alpha)) {
        out = build.node(PointwiseFn::kAdd, {x, y}, compute);
      } else if (compute != DType::kBool && alpha.is_int() && alpha.to_int() == -1) {
        out = build.node(PointwiseFn::kSub, {x, y}, compute);
      } else {
        // alpha in the dtype (integers, bool) or in the opmath type (floats), as cpu::arith.
        const DType alpha_dtype = is_floating(compute) ? opmath_dtype(compute) : compute;
        const Scalar al = is_floating(compute) ? Scalar(alpha.to_double()) : alpha;
        out = build.node(PointwiseFn::kAddScaled, {x, y, build.constant(al, alpha_dtype)}, compute);
      }
      break;
    case BinOp::kMul:
      out = build.node(PointwiseFn::kMul, {x, y}, compute);
      break;
    case BinOp::kDiv:
      out = build.node(PointwiseFn::kDiv, {x, y}, compute);
      break;
    case BinOp::kDivTrunc:
      out = build.node(PointwiseFn::kDivTrunc, {x, y}, compute);
      break;
    case BinOp::kDivFloor:
      out = build.node(PointwiseFn::kDivFloor, {x, y}, compute);
      break;
    case BinOp::kRem:
      out = build.node(PointwiseFn::kRemainder, {x, y}, compute);
      break;
    case BinOp::kFmod:
      out = build.node(PointwiseFn::kFmod, {x, y}, compute);
      break;
    case BinOp::kPow:
      out = build.node(PointwiseFn::kPow, {x, y}, compute);
      break;
  }
  return std::move(build).finish(out);
}

// add/sub/rsub .Tensor(self, other, *, alpha=1) and .Scalar(self, other, alpha=1).
template <bool kNegate, bool kScalarOther, bool kReverse = false>
Result<LoweredPointwise> add_like(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand self, read_operand(a, 0));
  Operand other;
  if constexpr (kScalarOther) {
    SPLICE_ASSIGN_OR_RETURN(other.scalar, a.scalar(1));
  } else {
    SPLICE_ASSIGN_OR_RETURN(other, read_operand(a, 1));
  }
  LCHECK(self.is_tensor || other.is_tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(2, Scalar(int64_t{1})));
  if constexpr (kNegate) {
    const PromotionOperand ops[] = {self.promotion(), other.promotion()};
    LCHECK(result_type(ops) != DType::kBool, ErrorKind::kBadInput,
           "subtraction with two bool tensors is not supported; use logical_xor");
    if (alpha.is_double())
      alpha = Scalar(-alpha.to_double());
    else
      alpha = Scalar(static_cast<int64_t>(0 - static_cast<uint64_t>(alpha.to_int())));
  }
  if constexpr (kReverse) std::swap(self, other);
  return arith(op, BinOp::kAdd, self, other, alpha);
}

template <BinOp kKind, bool kScalarOther>
Result<LoweredPointwise> binary(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand self, read_operand(a, 0));
  Operand other;
  if constexpr (kScalarOther) {
    SPLICE_ASSIGN_OR_RETURN(other.scalar, a.scalar(1));
  } else {
    SPLICE_ASSIGN_OR_RETURN(other, read_operand(a, 1));
  }
  BinOp kind = kKind;
  if (kKind == BinOp::kDivTrunc) {  // the *_mode overloads: rounding_mode picks the op
    SPLICE_ASSIGN_OR_RETURN(auto mode, a.opt_string(2));
    if (!mode)
      kind = BinOp::kDiv;
    else if (*mode == "floor")
      kind = BinOp::kDivFloor;
    else
      LCHECK(*mode == "trunc", ErrorKind::kBadInput,
             "rounding_mode must be None, 'trunc' or 'floor', got '{}'", *mode);
  }
  if (kKind == BinOp::kPow && kScalarOther) {
    LCHECK(!(self.is_tensor && is_integral(self.dtype) && other.scalar.is_int() &&
             other.scalar.to_int() < 0),
           ErrorKind::kBadInput, "integers to negative integer powers are not allowed");
  }
  LCHECK(self.is_tensor || other.is_tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  return arith(op, kind, self, other, Scalar(int64_t{1}));
}

// pow.Scalar(Scalar self, Tensor exponent).
Result<LoweredPointwise> pow_scalar(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  Operand self;
  SPLICE_ASSIGN_OR_RETURN(self.scalar, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(Operand exponent, read_operand(a, 1));
  LCHECK(exponent.is_tensor, ErrorKind::kBadInput, "argument 1 should be Tensor");
  return arith(op, BinOp::kPow, self, exponent, Scalar(int64_t{1}));
}

// where(condition, self, other): self/other tensors or numbers, promoted together.
Result<LoweredPointwise> where(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg cond, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, 1));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, 2));
  LCHECK(cond.dtype == DType::kBool || cond.dtype == DType::kUInt8, ErrorKind::kBadInput,
         "condition must be a bool tensor, got {}", dtype_name(cond.dtype));
  const PromotionOperand ops[] = {x.promotion(), y.promotion()};
  const DType dtype = result_type(ops);
  Builder build;
  const PointwiseRef c = build.input(0, cond.dtype);
  const PointwiseRef vx = build.operand(x, dtype);
  const PointwiseRef vy = build.operand(y, dtype);
  return std::move(build).finish(build.node(PointwiseFn::kWhere, {c, vx, vy}, dtype));
}

template <PointwiseFn kFn>
Result<LoweredPointwise> logical(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg x, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(OpArg y, a.tensor(1));
  Builder build;
  const PointwiseRef px = build.input(0, x.dtype);
  const PointwiseRef py = build.input(1, y.dtype);
  return std::move(build).finish(build.node(kFn, {px, py}, DType::kBool, DType::kBool));
}

// bitwise_and/or/xor and the __and__/__or__/__xor__ operators, every overload.
template <PointwiseFn kFn>
Result<LoweredPointwise> bitwise(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, 0));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, 1));
  LCHECK(x.is_tensor || y.is_tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  const PromotionOperand ops[] = {x.promotion(), y.promotion()};
  const DType dtype = result_type(ops);
  LCHECK(!is_floating(dtype), ErrorKind::kBadInput,
         "only supported for integer and bool tensors, got {}", dtype_name(dtype));
  Builder build;
  const PointwiseRef px = build.operand(x, dtype);
  const PointwiseRef py = build.operand(y, dtype);
  return std::move(build).finish(build.node(kFn, {px, py}, dtype));
}

// masked_fill.Scalar / .Tensor(self, mask, value): where(mask, value, self) in self's dtype.
Result<LoweredPointwise> masked_fill(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(OpArg mask, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Operand value, read_operand(a, 2));
  LCHECK(mask.dtype == DType::kBool, ErrorKind::kBadInput,
         "only supports boolean masks, but got mask with dtype {}", dtype_name(mask.dtype));
  LCHECK(!value.is_tensor || value.rank == 0, ErrorKind::kBadInput,
         "only supports a 0-dimensional value tensor, but got tensor with {} dimension(s)",
         value.is_tensor ? value.rank : 0);
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  const PointwiseRef m = build.input(1, mask.dtype);
  const PointwiseRef v = build.operand(value, self.dtype);
  return std::move(build).finish(build.node(PointwiseFn::kWhere, {m, v, x}, self.dtype));
}

// eq/ne/lt/le/gt/ge: both sides converted to their result_type, compared in its opmath type.
template <PointwiseFn kFn, bool kScalarOther>
Result<LoweredPointwise> compare(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand lhs, read_operand(a, 0));
  Operand rhs;
  if constexpr (kScalarOther) {
    SPLICE_ASSIGN_OR_RETURN(rhs.scalar, a.scalar(1));
  } else {
    SPLICE_ASSIGN_OR_RETURN(rhs, read_operand(a, 1));
  }
  LCHECK(lhs.is_tensor || rhs.is_tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  const PromotionOperand ops[] = {lhs.promotion(), rhs.promotion()};
  const DType common = result_type(ops);
  Builder build;
  const PointwiseRef x = build.operand(lhs, common);
  const PointwiseRef y = build.operand(rhs, common);
  return std::move(build).finish(build.node(kFn, {x, y}, DType::kBool, opmath_dtype(common)));
}

// minimum/maximum(self, other) and the single-tensor-bound clamps: promoted, NaN-propagating.
Result<LoweredPointwise> extremum(std::string_view op, bool max, const Operand& x,
                                  const Operand& y) {
  const PromotionOperand ops[] = {x.promotion(), y.promotion()};
  const DType dtype = result_type(ops);
  Builder build;
  const PointwiseRef px = build.operand(x, dtype);
  const PointwiseRef py = build.operand(y, dtype);
  return std::move(build).finish(
      build.node(max ? PointwiseFn::kMaximum : PointwiseFn::kMinimum, {px, py}, dtype));
}

template <bool kMax>
Result<LoweredPointwise> minimum_maximum(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_TRY(a.tensor(0));
  SPLICE_TRY(a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, 0));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, 1));
  return extremum(op, kMax, x, y);
}

// clamp.default / clamp_min.default / clamp_max.default with Python-number bounds: a floating
// self keeps its dtype, otherwise self and the bounds are promoted; the bounds are converted to
// that dtype. Both bounds: NaN when either is NaN; a single bound of clamp leaves x for a NaN
// bound, while clamp_min/clamp_max fill with NaN (maximum/minimum).
Result<LoweredPointwise> clamp_scalars(std::string_view op, const OpArg& self,
                                       const std::optional<Scalar>& lo,
                                       const std::optional<Scalar>& hi, bool single_nan_fills) {
  LCHECK(lo || hi, ErrorKind::kBadInput, "at least one of 'min' or 'max' must not be None");
  DType dtype = self.dtype;
  if (!is_floating(dtype)) {
    std::vector<PromotionOperand> ops = {
        {self.dtype, self.rank == 0 ? PromotionOperand::Priority::kZeroDim
                                    : PromotionOperand::Priority::kDimensioned}};
    if (lo) ops.push_back(promotion_operand(*lo));
    if (hi) ops.push_back(promotion_operand(*hi));
    dtype = result_type(ops);
  }
  LCHECK(dtype != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  Builder build;
  Operand x;
  x.is_tensor = true;
  x.arg = 0;
  x.dtype = self.dtype;
  x.rank = self.rank;
  const PointwiseRef px = build.operand(x, dtype);
  PointwiseRef out;
  if (lo && hi) {
    out = build.node(PointwiseFn::kClamp,
                     {px, build.constant(*lo, dtype), build.constant(*hi, dtype)}, dtype);
  } else if (lo) {
    out = build.node(single_nan_fills ? PointwiseFn::kMaximum : PointwiseFn::kClampMin,
                     {px, build.constant(*lo, dtype)}, dtype);
  } else {
    out = build.node(single_nan_fills ? PointwiseFn::kMinimum : PointwiseFn::kClampMax,
                     {px, build.constant(*hi, dtype)}, dtype);
  }
  return std::move(build).finish(out);
}

Result<LoweredPointwise> clamp_scalar(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  std::optional<Scalar> lo, hi;
  if (!a.is_none(1)) {
    SPLICE_ASSIGN_OR_RETURN(lo, a.scalar(1));
  }
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(hi, a.scalar(2));
  }
  return clamp_scalars(op, self, lo, hi, false);
}

template <bool kMin>
Result<LoweredPointwise> clamp_one_scalar(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar bound, a.scalar(1));
  return clamp_scalars(op, self, kMin ? std::optional(bound) : std::nullopt,
                       kMin ? std::nullopt : std::optional(bound), true);
}

template <bool kMin>
Result<LoweredPointwise> clamp_one_tensor(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_TRY(a.tensor(0));
  SPLICE_TRY(a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, 0));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, 1));
  return extremum(op, kMin, x, y);
}

// clamp.Tensor(self, Tensor? min=None, Tensor? max=None).
Result<LoweredPointwise> clamp_tensor(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, 0));
  LCHECK(x.is_tensor, ErrorKind::kBadInput, "argument 0 should be Tensor");
  const bool has_lo = !a.is_none(1), has_hi = !a.is_none(2);
  LCHECK(has_lo || has_hi, ErrorKind::kBadInput, "at least one of 'min' or 'max' must not be None");
  if (!has_hi) {
    SPLICE_ASSIGN_OR_RETURN(Operand lo, read_operand(a, 1));
    return extremum(op, true, x, lo);
  }
  if (!has_lo) {
    SPLICE_ASSIGN_OR_RETURN(Operand hi, read_operand(a, 2));
    return extremum(op, false, x, hi);
  }
  SPLICE_ASSIGN_OR_RETURN(Operand lo, read_operand(a, 1));
  SPLICE_ASSIGN_OR_RETURN(Operand hi, read_operand(a, 2));
  const PromotionOperand ops[] = {x.promotion(), lo.promotion(), hi.promotion()};
  const DType dtype = result_type(ops);
  LCHECK(dtype != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  Builder build;
  const PointwiseRef px = build.operand(x, dtype);
  const PointwiseRef pl = build.operand(lo, dtype);
  const PointwiseRef ph = build.operand(hi, dtype);
  return std::move(build).finish(build.node(PointwiseFn::kClamp, {px, pl, ph}, dtype));
}

Result<LoweredPointwise> atan2(std::string_view op, std::span<const OpArg> args) {
  return lower_float_binary(PointwiseFn::kAtan2, op, args);
}

}  // namespace

// atan2(self, other) and the other float binaries: promoted; integers lift to float32.
Result<LoweredPointwise> lower_float_binary(PointwiseFn fn, std::string_view op,
                                            std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_TRY(a.tensor(0));
  SPLICE_TRY(a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, 0));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, 1));
  const PromotionOperand ops[] = {x.promotion(), y.promotion()};
  DType dtype = result_type(ops);
  if (!is_floating(dtype)) dtype = DType::kFloat32;
  Builder build;
  const PointwiseRef px = build.operand(x, dtype);
  const PointwiseRef py = build.operand(y, dtype);
  return std::move(build).finish(build.node(fn, {px, py}, dtype));
}

std::span<const LoweringEntry> binary_lowerings() {
  static const LoweringEntry kEntries[] = {
      {"aten.add.Tensor", add_like<false, false>},
      {"aten.add.Scalar", add_like<false, true>},
      {"aten.sub.Tensor", add_like<true, false>},
      {"aten.sub.Scalar", add_like<true, true>},
      {"aten.rsub.Tensor", add_like<true, false, true>},
      {"aten.rsub.Scalar", add_like<true, true, true>},
      {"aten.mul.Tensor", binary<BinOp::kMul, false>},
      {"aten.mul.Scalar", binary<BinOp::kMul, true>},
      {"aten.div.Tensor", binary<BinOp::kDiv, false>},
      {"aten.div.Scalar", binary<BinOp::kDiv, true>},
      {"aten.div.Tensor_mode", binary<BinOp::kDivTrunc, false>},
      {"aten.div.Scalar_mode", binary<BinOp::kDivTrunc, true>},
      {"aten.floor_divide.default", binary<BinOp::kDivFloor, false>},
      {"aten.floor_divide.Scalar", binary<BinOp::kDivFloor, true>},
      {"aten.remainder.Tensor", binary<BinOp::kRem, false>},
      {"aten.remainder.Scalar", binary<BinOp::kRem, true>},
      {"aten.fmod.Tensor", binary<BinOp::kFmod, false>},
      {"aten.fmod.Scalar", binary<BinOp::kFmod, true>},
      {"aten.pow.Tensor_Tensor", binary<BinOp::kPow, false>},
      {"aten.pow.Tensor_Scalar", binary<BinOp::kPow, true>},
      {"aten.pow.Scalar", pow_scalar},
      {"aten.where.self", where},
      {"aten.where.ScalarSelf", where},
      {"aten.where.ScalarOther", where},
      {"aten.where.Scalar", where},
      {"aten.logical_and.default", logical<PointwiseFn::kLogicalAnd>},
      {"aten.logical_or.default", logical<PointwiseFn::kLogicalOr>},
      {"aten.logical_xor.default", logical<PointwiseFn::kLogicalXor>},
      {"aten.bitwise_and.Tensor", bitwise<PointwiseFn::kBitwiseAnd>},
      {"aten.bitwise_and.Scalar", bitwise<PointwiseFn::kBitwiseAnd>},
      {"aten.bitwise_and.Scalar_Tensor", bitwise<PointwiseFn::kBitwiseAnd>},
      {"aten.__and__.Tensor", bitwise<PointwiseFn::kBitwiseAnd>},
      {"aten.__and__.Scalar", bitwise<PointwiseFn::kBitwiseAnd>},
      {"aten.bitwise_or.Tensor", bitwise<PointwiseFn::kBitwiseOr>},
      {"aten.bitwise_or.Scalar", bitwise<PointwiseFn::kBitwiseOr>},
      {"aten.bitwise_or.Scalar_Tensor", bitwise<PointwiseFn::kBitwiseOr>},
      {"aten.__or__.Tensor", bitwise<PointwiseFn::kBitwiseOr>},
      {"aten.__or__.Scalar", bitwise<PointwiseFn::kBitwiseOr>},
      {"aten.bitwise_xor.Tensor", bitwise<PointwiseFn::kBitwiseXor>},
      {"aten.bitwise_xor.Scalar", bitwise<PointwiseFn::kBitwiseXor>},
      {"aten.bitwise_xor.Scalar_Tensor", bitwise<PointwiseFn::kBitwiseXor>},
      {"aten.__xor__.Tensor", bitwise<PointwiseFn::kBitwiseXor>},
      {"aten.__xor__.Scalar", bitwise<PointwiseFn::kBitwiseXor>},
      {"aten.masked_fill.Scalar", masked_fill},
      {"aten.masked_fill.Tensor", masked_fill},
      {"aten.eq.Tensor", compare<PointwiseFn::kEq, false>},
      {"aten.eq.Scalar", compare<PointwiseFn::kEq, true>},
      {"aten.ne.Tensor", compare<PointwiseFn::kNe, false>},
      {"aten.ne.Scalar", compare<PointwiseFn::kNe, true>},
      {"aten.lt.Tensor", compare<PointwiseFn::kLt, false>},
      {"aten.lt.Scalar", compare<PointwiseFn::kLt, true>},
      {"aten.le.Tensor", compare<PointwiseFn::kLe, false>},
      {"aten.le.Scalar", compare<PointwiseFn::kLe, true>},
      {"aten.gt.Tensor", compare<PointwiseFn::kGt, false>},
      {"aten.gt.Scalar", compare<PointwiseFn::kGt, true>},
      {"aten.ge.Tensor", compare<PointwiseFn::kGe, false>},
      {"aten.ge.Scalar", compare<PointwiseFn::kGe, true>},
      {"aten.minimum.default", minimum_maximum<false>},
      {"aten.maximum.default", minimum_maximum<true>},
      {"aten.clamp.default", clamp_scalar},
      {"aten.clamp.Tensor", clamp_tensor},
      {"aten.clamp_min.default", clamp_one_scalar<true>},
      {"aten.clamp_max.default", clamp_one_scalar<false>},
      {"aten.clamp_min.Tensor", clamp_one_tensor<true>},
      {"aten.clamp_max.Tensor", clamp_one_tensor<false>},
      {"aten.atan2.default", atan2},
  };
  return kEntries;
}

}  // namespace splice::ir::lowering
