// Lowering of the unary pointwise ops, mirroring the CPU kernels (cpu/pointwise_unary.cc,
// pointwise_more.cc): float math (integers and bool lift to float32, except silu/gelu which
// reject them), neg/abs/relu in the input's dtype, sign, isnan/isinf, rounding (integers come
// back unchanged), round.decimals, bitwise_not, logical_not, hardtanh and the parameterised
// activations (their parameters in the opmath type).
#include <cmath>

#include "ir/pointwise_lowering_util.h"

namespace splice::ir::lowering {

namespace {

Result<OpArg> self_tensor(const LArgs& a) { return a.tensor(0); }

// self as the program's input, converted to dtype (float math on integers).
PointwiseRef self_as(Builder& build, const OpArg& self, DType dtype) {
  Operand x;
  x.is_tensor = true;
  x.arg = 0;
  x.dtype = self.dtype;
  x.rank = self.rank;
  return build.operand(x, dtype);
}

template <PointwiseFn kFn>
Result<LoweredPointwise> float_unary(std::string_view op, std::span<const OpArg> args) {
  return lower_float_unary(kFn, op, args);
}

// neg/abs/relu in self's dtype; bool only for abs.
template <PointwiseFn kFn>
Result<LoweredPointwise> same_dtype_unary(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  LCHECK(self.dtype != DType::kBool || kFn == PointwiseFn::kAbs, ErrorKind::kBadInput,
         "not supported for bool tensors");
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(build.node(kFn, {x}, self.dtype));
}

Result<LoweredPointwise> gelu(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  SPLICE_ASSIGN_OR_RETURN(auto approximate, a.opt_string(1));
  const std::string mode = approximate.value_or("none");
  LCHECK(mode == "none" || mode == "tanh", ErrorKind::kBadInput,
         "approximate must be 'none' or 'tanh', got '{}'", mode);
  LCHECK(is_floating(self.dtype), ErrorKind::kBadInput, "not implemented for {} tensors",
         dtype_name(self.dtype));
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(
      build.node(mode == "tanh" ? PointwiseFn::kGeluTanh : PointwiseFn::kGelu, {x}, self.dtype));
}

// floor/ceil/round: integers come back unchanged; bool is rejected.
template <PointwiseFn kFn>
Result<LoweredPointwise> rounding(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  LCHECK(self.dtype != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  const PointwiseFn fn = is_floating(self.dtype) ? kFn : PointwiseFn::kCopy;
  return std::move(build).finish(build.node(fn, {x}, self.dtype));
}

// round.decimals(self, *, decimals): floats only; the power of ten in the opmath type.
Result<LoweredPointwise> round_decimals(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  SPLICE_ASSIGN_OR_RETURN(int64_t decimals, a.integer(1));
  LCHECK(is_floating(self.dtype), ErrorKind::kBadInput, "not implemented for {} tensors",
         dtype_name(self.dtype));
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  if (decimals == 0)
    return std::move(build).finish(build.node(PointwiseFn::kRound, {x}, self.dtype));
  const bool negative = decimals < 0;
  const double exponent = negative ? -static_cast<double>(decimals) : static_cast<double>(decimals);
  const PointwiseRef ten_pow =
      build.constant(Scalar(std::pow(10.0, exponent)), opmath_dtype(self.dtype));
  return std::move(build).finish(
      build.node(negative ? PointwiseFn::kRoundScaledNegative : PointwiseFn::kRoundScaled,
                 {x, ten_pow}, self.dtype));
}

Result<LoweredPointwise> bitwise_not(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  LCHECK(!is_floating(self.dtype), ErrorKind::kBadInput,
         "bitwise_not is only supported for integer and bool tensors, got {}",
         dtype_name(self.dtype));
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(build.node(PointwiseFn::kBitwiseNot, {x}, self.dtype));
}

Result<LoweredPointwise> logical_not(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(
      build.node(PointwiseFn::kLogicalNot, {x}, DType::kBool, DType::kBool));
}

Result<LoweredPointwise> sign(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(build.node(PointwiseFn::kSign, {x}, self.dtype));
}

// isnan/isinf: bool, false for integers (and bool).
template <PointwiseFn kFn>
Result<LoweredPointwise> classify(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(build.node(kFn, {x}, DType::kBool, opmath_dtype(self.dtype)));
}

// hardtanh(self, min_val=-1, max_val=1): clamp in self's dtype, bounds converted to it.
Result<LoweredPointwise> hardtanh(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  SPLICE_ASSIGN_OR_RETURN(Scalar lo, a.scalar_or(1, Scalar(int64_t{-1})));
  SPLICE_ASSIGN_OR_RETURN(Scalar hi, a.scalar_or(2, Scalar(int64_t{1})));
  LCHECK(self.dtype != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  return std::move(build).finish(
      build.node(PointwiseFn::kHardtanh,
                 {x, build.constant(lo, self.dtype), build.constant(hi, self.dtype)}, self.dtype));
}

// leaky_relu(self, negative_slope=0.01), softplus(self, beta=1, threshold=20),
// elu(self, alpha=1, scale=1, input_scale=1): floats only; parameters read as doubles and
// rounded to the opmath type.
template <PointwiseFn kFn>
Result<LoweredPointwise> activation(std::string_view op, std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  const double d0 = kFn == PointwiseFn::kLeakyRelu ? 0.01 : 1.0;
  const double d1 = kFn == PointwiseFn::kSoftplus ? 20.0 : 1.0;
  SPLICE_ASSIGN_OR_RETURN(Scalar p0, a.scalar_or(1, Scalar(d0)));
  SPLICE_ASSIGN_OR_RETURN(Scalar p1, a.scalar_or(2, Scalar(d1)));
  SPLICE_ASSIGN_OR_RETURN(Scalar p2, a.scalar_or(3, Scalar(1.0)));
  LCHECK(is_floating(self.dtype), ErrorKind::kBadInput, "not implemented for {} tensors",
         dtype_name(self.dtype));
  const DType m = opmath_dtype(self.dtype);
  Builder build;
  const PointwiseRef x = build.input(0, self.dtype);
  auto param = [&](const Scalar& s) { return build.constant(Scalar(s.to_double()), m); };
  std::vector<PointwiseRef> ops = {x, param(p0)};
  if (kFn == PointwiseFn::kSoftplus) ops.push_back(param(p1));
  if (kFn == PointwiseFn::kElu) {
    // elu(x, alpha, scale, input_scale) → the node's (x, y=alpha, z=scale, w=input_scale).
    ops.push_back(param(p1));
    ops.push_back(param(p2));
  }
  return std::move(build).finish(build.node(kFn, std::move(ops), self.dtype));
}

}  // namespace

Result<LoweredPointwise> lower_float_unary(PointwiseFn fn, std::string_view op,
                                           std::span<const OpArg> args) {
  LArgs a(op, args);
  SPLICE_ASSIGN_OR_RETURN(OpArg self, self_tensor(a));
  LCHECK(fn != PointwiseFn::kSilu || is_floating(self.dtype), ErrorKind::kBadInput,
         "not implemented for {} tensors", dtype_name(self.dtype));
  const DType dtype = is_floating(self.dtype) ? self.dtype : DType::kFloat32;
  Builder build;
  const PointwiseRef x = self_as(build, self, dtype);
  return std::move(build).finish(build.node(fn, {x}, dtype));
}

std::span<const LoweringEntry> unary_lowerings() {
  static const LoweringEntry kEntries[] = {
      {"aten.neg.default", same_dtype_unary<PointwiseFn::kNeg>},
      {"aten.abs.default", same_dtype_unary<PointwiseFn::kAbs>},
      {"aten.relu.default", same_dtype_unary<PointwiseFn::kRelu>},
      {"aten.sqrt.default", float_unary<PointwiseFn::kSqrt>},
      {"aten.rsqrt.default", float_unary<PointwiseFn::kRsqrt>},
      {"aten.exp.default", float_unary<PointwiseFn::kExp>},
      {"aten.log.default", float_unary<PointwiseFn::kLog>},
      {"aten.sin.default", float_unary<PointwiseFn::kSin>},
      {"aten.cos.default", float_unary<PointwiseFn::kCos>},
      {"aten.tanh.default", float_unary<PointwiseFn::kTanh>},
      {"aten.sigmoid.default", float_unary<PointwiseFn::kSigmoid>},
      {"aten.reciprocal.default", float_unary<PointwiseFn::kReciprocal>},
      {"aten.erf.default", float_unary<PointwiseFn::kErf>},
      {"aten.silu.default", float_unary<PointwiseFn::kSilu>},
      {"aten.log1p.default", float_unary<PointwiseFn::kLog1p>},
      {"aten.expm1.default", float_unary<PointwiseFn::kExpm1>},
      {"aten.log2.default", float_unary<PointwiseFn::kLog2>},
      {"aten.sinh.default", float_unary<PointwiseFn::kSinh>},
      {"aten.cosh.default", float_unary<PointwiseFn::kCosh>},
      {"aten.asin.default", float_unary<PointwiseFn::kAsin>},
      {"aten.acos.default", float_unary<PointwiseFn::kAcos>},
      {"aten.atan.default", float_unary<PointwiseFn::kAtan>},
      {"aten.gelu.default", gelu},
      {"aten.floor.default", rounding<PointwiseFn::kFloor>},
      {"aten.ceil.default", rounding<PointwiseFn::kCeil>},
      {"aten.round.default", rounding<PointwiseFn::kRound>},
      {"aten.round.decimals", round_decimals},
      {"aten.bitwise_not.default", bitwise_not},
      {"aten.logical_not.default", logical_not},
      {"aten.sign.default", sign},
      {"aten.isnan.default", classify<PointwiseFn::kIsNan>},
      {"aten.isinf.default", classify<PointwiseFn::kIsInf>},
      {"aten.hardtanh.default", hardtanh},
      {"aten.leaky_relu.default", activation<PointwiseFn::kLeakyRelu>},
      {"aten.softplus.default", activation<PointwiseFn::kSoftplus>},
      {"aten.elu.default", activation<PointwiseFn::kElu>},
  };
  return kEntries;
}

}  // namespace splice::ir::lowering
