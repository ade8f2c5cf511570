// Comparisons eq/ne/lt/le/gt/ge (.Tensor and .Scalar): both operands are converted to their
// result_type (so an int tensor compared with 2.5 compares in float32) and the result is bool.
#include "backends/cpu/args.h"
#include "backends/cpu/cast.h"
#include "backends/cpu/dispatch.h"
#include "backends/cpu/iter.h"
#include "backends/cpu/promotion.h"

namespace splice::cpu {

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

template <Cmp kCmp, bool kScalarOther>
Result<Outputs> compare_op(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  Tensor other;
  DType common;
  // The .Tensor overloads may also get a wrapped Python number (`x == 2`).
  if (auto number = a.scalar(1); kScalarOther || number.ok()) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, a.scalar(1));
    common = result_type(self, s);
    other = scalar_to_tensor(s, common);
  } else {
    SPLICE_ASSIGN_OR_RETURN(other, a.tensor(1));
    common = result_type(self, other);
  }
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, self.sizes(), other.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kBool, shape));
  const Tensor x = to_dtype(self, common), y = to_dtype(other, common);
  dispatch_dtype(common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_loop<bool, T, T>(out, x, y,
                            [](T p, T q) { return compare(kCmp, to_opmath(p), to_opmath(q)); });
  });
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> compare_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<"aten.eq.Tensor", compare_op<Cmp::kEq, false>>(),
      entry<"aten.eq.Scalar", compare_op<Cmp::kEq, true>>(),
      entry<"aten.ne.Tensor", compare_op<Cmp::kNe, false>>(),
      entry<"aten.ne.Scalar", compare_op<Cmp::kNe, true>>(),
      entry<"aten.lt.Tensor", compare_op<Cmp::kLt, false>>(),
      entry<"aten.lt.Scalar", compare_op<Cmp::kLt, true>>(),
      entry<"aten.le.Tensor", compare_op<Cmp::kLe, false>>(),
      entry<"aten.le.Scalar", compare_op<Cmp::kLe, true>>(),
      entry<"aten.gt.Tensor", compare_op<Cmp::kGt, false>>(),
      entry<"aten.gt.Scalar", compare_op<Cmp::kGt, true>>(),
      entry<"aten.ge.Tensor", compare_op<Cmp::kGe, false>>(),
      entry<"aten.ge.Scalar", compare_op<Cmp::kGe, true>>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
