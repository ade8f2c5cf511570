#pragma once
// PyTorch's type promotion (c10::promoteTypes and at::native::result_type): categories
// bool < integral < floating; within the highest category present, dimensioned tensors beat
// 0-d tensors, which beat Python scalars, and the winning group's dtypes are promoted
// together. A lower-priority operand of a higher category still lifts the result to its
// category (int tensor + float scalar → the default float32; f16 tensor + float scalar → f16).

#include <span>

#include "support/dtype.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace splice::cpu {

struct PromotionOperand {
  enum class Priority { kScalar, kZeroDim, kDimensioned };
  DType dtype;
  Priority priority;
};

PromotionOperand promotion_operand(const Tensor& t);
PromotionOperand promotion_operand(const Scalar& s);

// c10::promoteTypes for two dtypes (symmetric; f16 with bf16 → f32; u8 with i8 → i16).
DType promote_types(DType a, DType b);
DType result_type(std::span<const PromotionOperand> operands);

template <typename A, typename B>
DType result_type(const A& a, const B& b) {
  const PromotionOperand ops[] = {promotion_operand(a), promotion_operand(b)};
  return result_type(ops);
}

}  // namespace splice::cpu
