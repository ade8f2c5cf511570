// Shape rules of the pointwise ops: operands broadcast together (numbers take no part) and the
// result dtype follows torch._prims_common.elementwise_dtypes with each op's promotion kind as
// torch/_refs declares it: DEFAULT for add/sub/mul/remainder/fmod/floor_divide/min/max/bitwise
// and div with a rounding mode, INT_TO_FLOAT for true division, atan2 and the transcendental
// unary ops, BOOL_TO_LONG for pow, ALWAYS_BOOL for comparisons, logical ops, isnan/isinf.
// Ops that keep self's dtype (masked_fill, fill, the activations with Scalar parameters,
// rounding, abs/sign/neg) say so. Dtype errors PyTorch raises (bool subtraction or negation,
// float bitwise ops, a non-bool mask) are errors here too.
#include "ir/shape_rules_util.h"

namespace splice::ir::rules {

namespace {

// An elementwise op over the named operands (tensors or numbers) with promotion `kind`.
Result<Outputs> elementwise(RuleArgs& a, std::initializer_list<std::string_view> names,
                            Promotion kind) {
  std::vector<Operand> ops;
  for (std::string_view n : names) {
    if (a.is_none(n)) continue;  // clamp's absent bounds
    SPLICE_ASSIGN_OR_RETURN(Operand o, a.operand(n));
    ops.push_back(o);
  }
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, broadcast_operands(a, ops));
  return one(result_dtype(ops, kind), std::move(sizes));
}

bool any_bool(const std::vector<Operand>& ops) {
  for (const Operand& o : ops) {
    if (o.tensor ? o.tensor->dtype == DType::kBool : o.number == NumberKind::kBool) return true;
  }
  return false;
}

Result<std::vector<Operand>> operands(RuleArgs& a, std::initializer_list<std::string_view> names) {
  std::vector<Operand> ops;
  for (std::string_view n : names) {
    SPLICE_ASSIGN_OR_RETURN(Operand o, a.operand(n));
    ops.push_back(o);
  }
  return ops;
}

template <Promotion kKind>
Result<Outputs> binary(RuleArgs& a) {
  return elementwise(a, {"self", "other"}, kKind);
}

Result<Outputs> sub(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(auto ops, operands(a, {"self", "other"}));
  // ATen's sub_check: a bool operand (a wrapped Python bool too) cannot be subtracted.
  if (any_bool(ops))
    return a.error(
        "subtraction, the `-` operator, with a bool tensor is not supported; use `^` or "
        "logical_xor() instead");
  return elementwise(a, {"self", "other"}, Promotion::kDefault);
}

Result<Outputs> div_mode(RuleArgs& a) {
  // rounding_mode None is true division; "trunc" and "floor" keep the promoted dtype.
  const bool true_division = a.is_none("rounding_mode");
  return elementwise(a, {"self", "other"},
                     true_division ? Promotion::kIntToFloat : Promotion::kDefault);
}

Result<Outputs> floor_divide(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(auto ops, operands(a, {"self", "other"}));
  if (result_dtype(ops, Promotion::kDefault) == DType::kBool)
    return a.error("bool is not supported for floor_divide");
  return elementwise(a, {"self", "other"}, Promotion::kDefault);
}

Result<Outputs> pow_rule(RuleArgs& a) {
  return elementwise(a, {"self", "exponent"}, Promotion::kBoolToLong);
}

Result<Outputs> bitwise(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(auto ops, operands(a, {"self", "other"}));
  const DType d = result_dtype(ops, Promotion::kDefault);
  if (is_floating(d))
    return a.error("bitwise ops need integer or bool operands, got {}", dtype_name(d));
  return elementwise(a, {"self", "other"}, Promotion::kDefault);
}

Result<Outputs> masked_fill(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* mask, a.tensor("mask"));
  if (mask->dtype != DType::kBool)
    return a.error("masked_fill expects a bool mask, got {}", dtype_name(mask->dtype));
  if (a.node().target() == "aten.masked_fill.Tensor") {
    SPLICE_ASSIGN_OR_RETURN(Operand value, a.operand("value"));
    if (value.tensor && value.tensor->rank() != 0)
      return a.error("masked_fill only supports a 0-dimensional value tensor, got {} dims",
                     value.tensor->rank());
  }
  // The out-of-place form broadcasts self and mask; the result keeps self's dtype.
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, broadcast(a, {&self->sizes, &mask->sizes}));
  return one(self->dtype, std::move(sizes));
}

Result<Outputs> where(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* cond, a.tensor("condition"));
  SPLICE_ASSIGN_OR_RETURN(auto ops, operands(a, {"self", "other"}));
  std::vector<Operand> all = ops;
  all.push_back(Operand{cond, NumberKind::kBool});
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, broadcast_operands(a, all));
  return one(result_dtype(ops, Promotion::kDefault), std::move(sizes));
}

Result<Outputs> clamp(RuleArgs& a) {
  return elementwise(a, {"self", "min", "max"}, Promotion::kDefault);
}
Result<Outputs> clamp_min(RuleArgs& a) {
  return elementwise(a, {"self", "min"}, Promotion::kDefault);
}
Result<Outputs> clamp_max(RuleArgs& a) {
  return elementwise(a, {"self", "max"}, Promotion::kDefault);
}

// Unary ops.
template <Promotion kKind>
Result<Outputs> unary(RuleArgs& a) {
  return elementwise(a, {"self"}, kKind);
}

Result<Outputs> keep_dtype(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  return same_as(*self);
}

Result<Outputs> neg(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->dtype == DType::kBool)
    return a.error(
        "negation, the `-` operator, on a bool tensor is not supported; use `~` or "
        "logical_not() instead");
  return same_as(*self);
}

Result<Outputs> bitwise_not(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (is_floating(self->dtype))
    return a.error("bitwise_not needs an integer or bool tensor, got {}", dtype_name(self->dtype));
  return same_as(*self);
}

Result<Outputs> fill_tensor(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Operand value, a.operand("value"));
  if (value.tensor && value.tensor->rank() != 0)
    return a.error("fill only supports a 0-dimension value tensor, got {} dims",
                   value.tensor->rank());
  return same_as(*self);
}

constexpr RuleEntry kEntries[] = {
    {"aten.add.Tensor", binary<Promotion::kDefault>},
    {"aten.add.Scalar", binary<Promotion::kDefault>},
    {"aten.sub.Tensor", sub},
    {"aten.sub.Scalar", sub},
    {"aten.rsub.Tensor", sub},
    {"aten.rsub.Scalar", sub},
    {"aten.mul.Tensor", binary<Promotion::kDefault>},
    {"aten.mul.Scalar", binary<Promotion::kDefault>},
    {"aten.div.Tensor", binary<Promotion::kIntToFloat>},
    {"aten.div.Scalar", binary<Promotion::kIntToFloat>},
    {"aten.div.Tensor_mode", div_mode},
    {"aten.div.Scalar_mode", div_mode},
    {"aten.remainder.Tensor", binary<Promotion::kDefault>},
    {"aten.remainder.Scalar", binary<Promotion::kDefault>},
    {"aten.pow.Tensor_Scalar", pow_rule},
    {"aten.pow.Tensor_Tensor", pow_rule},
    {"aten.pow.Scalar", pow_rule},
    {"aten.fmod.Tensor", binary<Promotion::kDefault>},
    {"aten.fmod.Scalar", binary<Promotion::kDefault>},
    {"aten.floor_divide.default", floor_divide},
    {"aten.atan2.default", binary<Promotion::kIntToFloat>},
    {"aten.bitwise_and.Tensor", bitwise},
    {"aten.bitwise_and.Scalar", bitwise},
    {"aten.bitwise_or.Tensor", bitwise},
    {"aten.bitwise_or.Scalar", bitwise},
    {"aten.bitwise_xor.Tensor", bitwise},
    {"aten.bitwise_xor.Scalar", bitwise},
    {"aten.__and__.Tensor", bitwise},
    {"aten.__and__.Scalar", bitwise},
    {"aten.__or__.Tensor", bitwise},
    {"aten.__or__.Scalar", bitwise},
    {"aten.__xor__.Tensor", bitwise},
    {"aten.__xor__.Scalar", bitwise},
    {"aten.masked_fill.Scalar", masked_fill},
    {"aten.masked_fill.Tensor", masked_fill},
    {"aten.minimum.default", binary<Promotion::kDefault>},
    {"aten.maximum.default", binary<Promotion::kDefault>},
    {"aten.clamp.default", clamp},
    {"aten.clamp.Tensor", clamp},
    {"aten.clamp_min.default", clamp_min},
    {"aten.clamp_max.default", clamp_max},
    {"aten.clamp_min.Tensor", clamp_min},
    {"aten.clamp_max.Tensor", clamp_max},
    {"aten.where.self", where},
    {"aten.where.ScalarSelf", where},
    {"aten.where.ScalarOther", where},
    {"aten.where.Scalar", where},
    {"aten.fill.Scalar", keep_dtype},
    {"aten.fill.Tensor", fill_tensor},
    // Unary: self's dtype.
    {"aten.neg.default", neg},
    {"aten.abs.default", keep_dtype},
    {"aten.sign.default", keep_dtype},
    {"aten.relu.default", keep_dtype},
    {"aten.gelu.default", keep_dtype},
    {"aten.silu.default", keep_dtype},
    {"aten.hardtanh.default", keep_dtype},
    {"aten.leaky_relu.default", keep_dtype},
    {"aten.softplus.default", keep_dtype},
    {"aten.elu.default", keep_dtype},
    {"aten.floor.default", keep_dtype},
    {"aten.ceil.default", keep_dtype},
    {"aten.round.default", keep_dtype},
    {"aten.round.decimals", keep_dtype},
    {"aten.bitwise_not.default", bitwise_not},
    // Unary: integers and bools compute in the default float dtype.
    {"aten.sqrt.default", unary<Promotion::kIntToFloat>},
    {"aten.rsqrt.default", unary<Promotion::kIntToFloat>},
    {"aten.exp.default", unary<Promotion::kIntToFloat>},
    {"aten.log.default", unary<Promotion::kIntToFloat>},
    {"aten.sin.default", unary<Promotion::kIntToFloat>},
    {"aten.cos.default", unary<Promotion::kIntToFloat>},
    {"aten.tanh.default", unary<Promotion::kIntToFloat>},
    {"aten.sigmoid.default", unary<Promotion::kIntToFloat>},
    {"aten.erf.default", unary<Promotion::kIntToFloat>},
    {"aten.reciprocal.default", unary<Promotion::kIntToFloat>},
    {"aten.log1p.default", unary<Promotion::kIntToFloat>},
    {"aten.expm1.default", unary<Promotion::kIntToFloat>},
    {"aten.log2.default", unary<Promotion::kIntToFloat>},
    {"aten.sinh.default", unary<Promotion::kIntToFloat>},
    {"aten.cosh.default", unary<Promotion::kIntToFloat>},
    {"aten.asin.default", unary<Promotion::kIntToFloat>},
    {"aten.acos.default", unary<Promotion::kIntToFloat>},
    {"aten.atan.default", unary<Promotion::kIntToFloat>},
    // Bool results.
    {"aten.isnan.default", unary<Promotion::kAlwaysBool>},
    {"aten.isinf.default", unary<Promotion::kAlwaysBool>},
    {"aten.logical_not.default", unary<Promotion::kAlwaysBool>},
    {"aten.logical_and.default", binary<Promotion::kAlwaysBool>},
    {"aten.logical_or.default", binary<Promotion::kAlwaysBool>},
    {"aten.logical_xor.default", binary<Promotion::kAlwaysBool>},
    {"aten.eq.Tensor", binary<Promotion::kAlwaysBool>},
    {"aten.eq.Scalar", binary<Promotion::kAlwaysBool>},
    {"aten.ne.Tensor", binary<Promotion::kAlwaysBool>},
    {"aten.ne.Scalar", binary<Promotion::kAlwaysBool>},
    {"aten.lt.Tensor", binary<Promotion::kAlwaysBool>},
    {"aten.lt.Scalar", binary<Promotion::kAlwaysBool>},
    {"aten.le.Tensor", binary<Promotion::kAlwaysBool>},
    {"aten.le.Scalar", binary<Promotion::kAlwaysBool>},
    {"aten.gt.Tensor", binary<Promotion::kAlwaysBool>},
    {"aten.gt.Scalar", binary<Promotion::kAlwaysBool>},
    {"aten.ge.Tensor", binary<Promotion::kAlwaysBool>},
    {"aten.ge.Scalar", binary<Promotion::kAlwaysBool>},
};

}  // namespace

std::span<const RuleEntry> pointwise_rules() { return kEntries; }

}  // namespace splice::ir::rules
