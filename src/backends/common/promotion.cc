// The promotion operand of a tensor (the rest of PyTorch's promotion is ir/promotion.cc).
#include "backends/common/promotion.h"

namespace splice::backend {

PromotionOperand promotion_operand(const Tensor& t) {
  return {t.dtype(), t.dim() == 0 ? PromotionOperand::Priority::kZeroDim
                                  : PromotionOperand::Priority::kDimensioned};
}

}  // namespace splice::backend
