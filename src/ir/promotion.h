#pragma once
// PyTorch's type promotion (c10::promoteTypes and at::native::result_type): categories
// bool < integral < floating; within the highest category present, dimensioned tensors beat
// 0-d tensors, which beat Python scalars, and the winning group's dtypes are promoted
// together. A lower-priority operand of a higher category still lifts the result to its
// category (int tensor + float scalar → the default float32; f16 tensor + float scalar → f16).
// It lives in the IR because it needs dtypes only: the CPU kernels and the pointwise lowering
// (which plans before any data exists) share it.

#include <span>

#include "support/dtype.h"
#include "tensor/scalar.h"

namespace splice::ir {

struct PromotionOperand {
  enum class Priority { kScalar, kZeroDim, kDimensioned };
  DType dtype;
  Priority priority;
};

PromotionOperand promotion_operand(const Scalar& s);

// c10::promoteTypes for two dtypes (symmetric; f16 with bf16 → f32; u8 with i8 → i16).
DType promote_types(DType a, DType b);
DType result_type(std::span<const PromotionOperand> operands);

}  // namespace splice::ir
