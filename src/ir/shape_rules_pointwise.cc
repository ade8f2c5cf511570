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
  // The Tensor overloads, in place (masked_fill_, whose node has the in-place op's id) or not.
  const Arg& value = a.arg("value");
  const Value* v = value.is<Value*>() ? value.as<Value*>() : nullptr;
  if (v != nullptr && v->is_tensor() && v->type().rank() != 0)
    return a.error(
        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
        "dimension(s).",
        v->type().rank());
  // The out-of-place form broadcasts self and mask; the result keeps self's dtype.
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, broadcast(a, {&self->sizes, &mask->sizes}));
  return one(self->dtype, std::move(sizes));
}

// masked_scatter(self, mask, source): self and mask broadcast (in place, mask to self), self's
// dtype; a bool mask and a source of self's dtype, as ATen checks. That source has as many
// elements as the mask has ones only a run can tell (the index of the decomposition checks it).
Result<Outputs> masked_scatter(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* mask, a.tensor("mask"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* source, a.tensor("source"));
  if (mask->dtype != DType::kBool)
    return a.error("masked_scatter_ only supports boolean masks, but got mask with dtype {}",
                   dtype_name(mask->dtype));
  if (source->dtype != self->dtype)
    return a.error("masked_scatter: expected self and source to have same dtypes but got {} and {}",
                   dtype_name(self->dtype), dtype_name(source->dtype));
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

// The rule of each PointwiseOpRule (ir/ops/pointwise/functions.h).
constexpr RuleFn rule_of(PointwiseOpRule rule) {
  switch (rule) {
    case PointwiseOpRule::kFloatUnary:
      return unary<Promotion::kIntToFloat>;
    case PointwiseOpRule::kFloatBinary:
      return binary<Promotion::kIntToFloat>;
  }
  return nullptr;
}

constexpr RuleEntry kEntries[] = {
#define SPLICE_PW_RULE_ENTRY(id, target, schema, inplace_target, inplace_schema, rule, ...) \
  {OpId::id, rule_of(PointwiseOpRule::rule)},
    SPLICE_POINTWISE_OPS(SPLICE_PW_RULE_ENTRY)
#undef SPLICE_PW_RULE_ENTRY
        {OpId::add_Tensor, binary<Promotion::kDefault>},
    {OpId::add_Scalar, binary<Promotion::kDefault>},
    {OpId::sub_Tensor, sub},
    {OpId::sub_Scalar, sub},
    {OpId::rsub_Tensor, sub},
    {OpId::rsub_Scalar, sub},
    {OpId::mul_Tensor, binary<Promotion::kDefault>},
    {OpId::mul_Scalar, binary<Promotion::kDefault>},
    {OpId::div_Tensor, binary<Promotion::kIntToFloat>},
    {OpId::div_Scalar, binary<Promotion::kIntToFloat>},
    {OpId::div_Tensor_mode, div_mode},
    {OpId::div_Scalar_mode, div_mode},
    {OpId::remainder_Tensor, binary<Promotion::kDefault>},
    {OpId::remainder_Scalar, binary<Promotion::kDefault>},
    {OpId::pow_Tensor_Scalar, pow_rule},
    {OpId::pow_Tensor_Tensor, pow_rule},
    {OpId::pow_Scalar, pow_rule},
    {OpId::square, unary<Promotion::kBoolToLong>},  // pow(self, 2)
    {OpId::fmod_Tensor, binary<Promotion::kDefault>},
    {OpId::fmod_Scalar, binary<Promotion::kDefault>},
    {OpId::floor_divide, floor_divide},
    {OpId::atan2, binary<Promotion::kIntToFloat>},
    {OpId::bitwise_and_Tensor, bitwise},
    {OpId::bitwise_and_Scalar, bitwise},
    {OpId::bitwise_or_Tensor, bitwise},
    {OpId::bitwise_or_Scalar, bitwise},
    {OpId::bitwise_xor_Tensor, bitwise},
    {OpId::bitwise_xor_Scalar, bitwise},
    {OpId::dunder_and_Tensor, bitwise},
    {OpId::dunder_and_Scalar, bitwise},
    {OpId::dunder_or_Tensor, bitwise},
    {OpId::dunder_or_Scalar, bitwise},
    {OpId::dunder_xor_Tensor, bitwise},
    {OpId::dunder_xor_Scalar, bitwise},
    {OpId::masked_fill_Scalar, masked_fill},
    {OpId::masked_fill_Tensor, masked_fill},
    {OpId::masked_scatter, masked_scatter},
    {OpId::minimum, binary<Promotion::kDefault>},
    {OpId::min_other, binary<Promotion::kDefault>},
    {OpId::max_other, binary<Promotion::kDefault>},
    {OpId::maximum, binary<Promotion::kDefault>},
    {OpId::clamp, clamp},
    {OpId::clamp_Tensor, clamp},
    {OpId::clamp_min, clamp_min},
    {OpId::clamp_max, clamp_max},
    {OpId::clamp_min_Tensor, clamp_min},
    {OpId::clamp_max_Tensor, clamp_max},
    {OpId::where_self, where},
    {OpId::where_ScalarSelf, where},
    {OpId::where_ScalarOther, where},
    {OpId::where_Scalar, where},
    {OpId::fill_Scalar, keep_dtype},
    {OpId::fill_Tensor, fill_tensor},
    // Unary: self's dtype.
    {OpId::neg, neg},
    {OpId::abs, keep_dtype},
    {OpId::sign, keep_dtype},
    {OpId::relu, keep_dtype},
    {OpId::gelu, keep_dtype},
    {OpId::silu, keep_dtype},
    {OpId::hardtanh, keep_dtype},
    {OpId::hardswish, keep_dtype},
    {OpId::hardsigmoid, keep_dtype},
    {OpId::leaky_relu, keep_dtype},
    {OpId::softplus, keep_dtype},
    {OpId::elu, keep_dtype},
    {OpId::floor, keep_dtype},
    {OpId::ceil, keep_dtype},
    {OpId::round, keep_dtype},
    {OpId::round_decimals, keep_dtype},
    {OpId::bitwise_not, bitwise_not},
    // Unary: integers and bools compute in the default float dtype.
    {OpId::sqrt, unary<Promotion::kIntToFloat>},
    {OpId::rsqrt, unary<Promotion::kIntToFloat>},
    {OpId::exp, unary<Promotion::kIntToFloat>},
    {OpId::log, unary<Promotion::kIntToFloat>},
    {OpId::sin, unary<Promotion::kIntToFloat>},
    {OpId::cos, unary<Promotion::kIntToFloat>},
    {OpId::tanh, unary<Promotion::kIntToFloat>},
    {OpId::sigmoid, unary<Promotion::kIntToFloat>},
    {OpId::erf, unary<Promotion::kIntToFloat>},
    {OpId::reciprocal, unary<Promotion::kIntToFloat>},
    {OpId::log1p, unary<Promotion::kIntToFloat>},
    {OpId::expm1, unary<Promotion::kIntToFloat>},
    {OpId::log2, unary<Promotion::kIntToFloat>},
    {OpId::sinh, unary<Promotion::kIntToFloat>},
    {OpId::cosh, unary<Promotion::kIntToFloat>},
    {OpId::asin, unary<Promotion::kIntToFloat>},
    {OpId::acos, unary<Promotion::kIntToFloat>},
    {OpId::atan, unary<Promotion::kIntToFloat>},
    // Bool results.
    {OpId::isnan, unary<Promotion::kAlwaysBool>},
    {OpId::isinf, unary<Promotion::kAlwaysBool>},
    {OpId::logical_not, unary<Promotion::kAlwaysBool>},
    {OpId::logical_and, binary<Promotion::kAlwaysBool>},
    {OpId::logical_or, binary<Promotion::kAlwaysBool>},
    {OpId::logical_xor, binary<Promotion::kAlwaysBool>},
    {OpId::eq_Tensor, binary<Promotion::kAlwaysBool>},
    {OpId::eq_Scalar, binary<Promotion::kAlwaysBool>},
    {OpId::ne_Tensor, binary<Promotion::kAlwaysBool>},
    {OpId::ne_Scalar, binary<Promotion::kAlwaysBool>},
    {OpId::lt_Tensor, binary<Promotion::kAlwaysBool>},
    {OpId::lt_Scalar, binary<Promotion::kAlwaysBool>},
    {OpId::le_Tensor, binary<Promotion::kAlwaysBool>},
    {OpId::le_Scalar, binary<Promotion::kAlwaysBool>},
    {OpId::gt_Tensor, binary<Promotion::kAlwaysBool>},
    {OpId::gt_Scalar, binary<Promotion::kAlwaysBool>},
    {OpId::ge_Tensor, binary<Promotion::kAlwaysBool>},
    {OpId::ge_Scalar, binary<Promotion::kAlwaysBool>},
};

}  // namespace

std::span<const RuleEntry> pointwise_rules() { return kEntries; }

}  // namespace splice::ir::rules
