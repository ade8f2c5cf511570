// PyTorch's type promotion: c10::promoteTypes on the dtypes splice supports, and
// at::native::result_type's three-state algorithm (dimensioned tensors, 0-d tensors, wrapped
// Python numbers), combined by category as combine_categories does.
#include "ir/promotion.h"

#include <optional>

namespace splice::ir {

namespace {

int category(DType d) {
  if (d == DType::kBool) return 0;
  if (is_integral(d)) return 1;
  return 2;
}

// Rank within the integral lattice for signed types (u8 handled separately).
int signed_rank(DType d) {
  switch (d) {
    case DType::kInt8:
      return 0;
    case DType::kInt16:
      return 1;
    case DType::kInt32:
      return 2;
    default:
      return 3;  // kInt64
  }
}

int float_rank(DType d) {
  switch (d) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return 0;
    case DType::kFloat32:
      return 1;
    default:
      return 2;  // kFloat64
  }
}

// promote_types where either side may be "undefined" (nullopt).
std::optional<DType> promote_skip(std::optional<DType> a, std::optional<DType> b) {
  if (!a) return b;
  if (!b) return a;
  return promote_types(*a, *b);
}

// at::native's combine_categories(higher, lower).
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (higher && is_floating(*higher)) return higher;
  if ((higher && *higher == DType::kBool) || (lower && is_floating(*lower))) {
    return promote_skip(higher, lower);
  }
  if (higher) return higher;
  return lower;
}

}  // namespace

PromotionOperand promotion_operand(const Scalar& s) {
  return {s.wrapped_dtype(), PromotionOperand::Priority::kScalar};
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    const int ra = float_rank(a), rb = float_rank(b);
    if (ra == 0 && rb == 0) return DType::kFloat32;  // f16 with bf16
    return ra > rb ? a : b;
  }
  // Both integral and different.
  if (a == DType::kUInt8 || b == DType::kUInt8) {
    const DType other = a == DType::kUInt8 ? b : a;
    return other == DType::kInt8 ? DType::kInt16 : other;
  }
  return signed_rank(a) > signed_rank(b) ? a : b;
}

DType result_type(std::span<const PromotionOperand> operands) {
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const PromotionOperand& o : operands) {
    switch (o.priority) {
      case PromotionOperand::Priority::kDimensioned:
        dim_result = promote_skip(dim_result, o.dtype);
        break;
      case PromotionOperand::Priority::kZeroDim:
        zero_result = promote_skip(zero_result, o.dtype);
        break;
      case PromotionOperand::Priority::kScalar: {
        // A wrapped float takes the default dtype (float32).
        const DType d = is_floating(o.dtype) ? DType::kFloat32 : o.dtype;
        wrapped_result = promote_skip(wrapped_result, d);
        break;
      }
    }
  }
  auto r = combine_categories(dim_result, combine_categories(zero_result, wrapped_result));
  return r.value_or(DType::kFloat32);
}

}  // namespace splice::ir
