// Comparisons eq/ne/lt/le/gt/ge (.Tensor and .Scalar): both operands are converted to their
// result_type (so an int tensor compared with 2.5 compares in float32) and the result is bool.
// Either operand of a .Tensor overload may be a wrapped Python number.
#include "backends/common/promotion.h"
#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

using backend::promotion_operand;
using backend::PromotionOperand;
using backend::result_type;

namespace {

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

template <typename M>
bool compare(Cmp c, M x, M y) {
  switch (c) {
    case Cmp::kEq:
      return x == y;
    case Cmp::kNe:
      return x != y;
    case Cmp::kLt:
      return x < y;
    case Cmp::kLe:
      return x <= y;
    case Cmp::kGt:
      return x > y;
    case Cmp::kGe:
      return x >= y;
  }
  return false;
}

// One side of a comparison: a tensor, or a Python number (the .Scalar overloads' other, or a
// wrapped number in either position of a .Tensor overload: `x == 2`, `2 < x`).
struct Side {
  std::optional<Tensor> tensor;
  Scalar scalar;

  PromotionOperand promotion() const {
    return tensor ? promotion_operand(*tensor) : promotion_operand(scalar);
  }
  Tensor as(DType d) const { return tensor ? to_dtype(*tensor, d) : scalar_to_tensor(scalar, d); }
};

Result<Side> read_side(const Args& a, size_t i, bool scalar_only) {
  // A tensor argument is taken as one without trying it as a number first (which would format
  // an error message on every call).
  if (scalar_only || (!a.is_tensor(i) && a.scalar(i).ok())) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, a.scalar(i));
    return Side{std::nullopt, s};
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(i));
  return Side{t, Scalar()};
}

// out = x <kCmp> y, both operands already in their common dtype. Its own template, apart from
// the .Tensor/.Scalar reading below: the loops are instantiated once per comparison and dtype,
// not twice (the loops are most of this file's compile time).
template <Cmp kCmp>
void compare_into(const Tensor& out, const Tensor& x, const Tensor& y) {
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_loop<bool, T, T>(out, x, y,
                            [](T p, T q) { return compare(kCmp, to_opmath(p), to_opmath(q)); });
  });
}

template <Cmp kCmp, bool kScalarOther>
Result<Outputs> compare_op(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Side lhs, read_side(a, 0, false));
  SPLICE_ASSIGN_OR_RETURN(Side rhs, read_side(a, 1, kScalarOther));
  KCHECK(lhs.tensor || rhs.tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  const PromotionOperand ops[] = {lhs.promotion(), rhs.promotion()};
  const DType common = result_type(ops);
  const Tensor x = lhs.as(common), y = rhs.as(common);
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, x.sizes(), y.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kBool, shape));
  compare_into<kCmp>(out, x, y);
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> compare_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::eq_Tensor, compare_op<Cmp::kEq, false>>(),
      entry<OpId::eq_Scalar, compare_op<Cmp::kEq, true>>(),
      entry<OpId::ne_Tensor, compare_op<Cmp::kNe, false>>(),
      entry<OpId::ne_Scalar, compare_op<Cmp::kNe, true>>(),
      entry<OpId::lt_Tensor, compare_op<Cmp::kLt, false>>(),
      entry<OpId::lt_Scalar, compare_op<Cmp::kLt, true>>(),
      entry<OpId::le_Tensor, compare_op<Cmp::kLe, false>>(),
      entry<OpId::le_Scalar, compare_op<Cmp::kLe, true>>(),
      entry<OpId::gt_Tensor, compare_op<Cmp::kGt, false>>(),
      entry<OpId::gt_Scalar, compare_op<Cmp::kGt, true>>(),
      entry<OpId::ge_Tensor, compare_op<Cmp::kGe, false>>(),
      entry<OpId::ge_Scalar, compare_op<Cmp::kGe, true>>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
