#pragma once
// PyTorch's type promotion over tensors, for every backend's kernels: ir/promotion.h's rules
// (the one promotion lattice splice has; the pointwise lowering plans with it before any data
// exists), plus the operand of a tensor (whose rank decides its priority) and result_type over
// tensors and numbers.

#include "ir/promotion.h"
#include "tensor/tensor.h"

namespace splice::backend {

using ir::promote_types;
using ir::promotion_operand;
using ir::PromotionOperand;
using ir::result_type;

PromotionOperand promotion_operand(const Tensor& t);

template <typename A, typename B>
DType result_type(const A& a, const B& b) {
  const PromotionOperand ops[] = {promotion_operand(a), promotion_operand(b)};
  return result_type(ops);
}

}  // namespace splice::backend
