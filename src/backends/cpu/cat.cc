// cat.default(tensors, dim=0): the result dtype is the promotion of every input's dtype; all
// inputs must match except along dim. Legacy 1-D empty tensors (shape [0]) are skipped, as
// PyTorch still allows them next to tensors of any rank.
#include "backends/common/promotion.h"
#include "backends/cpu/args.h"
#include "support/checked_math.h"
#include "tensor/convert.h"

namespace splice::cpu {

using backend::PromotionOperand;
using backend::result_type;

namespace {

Result<Outputs> cat(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, a.tensor_list(0));
  SPLICE_ASSIGN_OR_RETURN(auto dim_opt, a.opt_integer(1));
  int64_t dim = dim_opt.value_or(0);
  KCHECK(!tensors.empty(), ErrorKind::kBadInput, "expected a non-empty list of tensors");
  std::vector<PromotionOperand> ops;
  for (const Tensor& t : tensors)
    ops.push_back({t.dtype(), PromotionOperand::Priority::kDimensioned});
  const DType dtype = result_type(ops);
  auto is_legacy_empty = [](const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; };
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    KCHECK(t.dim() > 0, ErrorKind::kShapeMismatch,
           "zero-dimensional tensors cannot be concatenated");
    if (!ref && !is_legacy_empty(t)) ref = &t;
  }
  if (!ref) {
    SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, {0}));
    return Outputs{out};
  }
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, ref->dim()));
  Shape shape = ref->sizes();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    KCHECK(t.dim() == ref->dim(), ErrorKind::kShapeMismatch,
           "tensor {} has rank {} but tensor 0 has rank {} (shapes {} and {})", i, t.dim(),
           ref->dim(), shape_string(t.sizes()), shape_string(ref->sizes()));
    for (int64_t d = 0; d < t.dim(); ++d) {
      KCHECK(d == dim || t.size(d) == shape[d], ErrorKind::kShapeMismatch,
             "sizes of tensors must match except in dim {}: tensor {} has shape {}, expected {} "
             "at dim {}",
             dim, i, shape_string(t.sizes()), shape[d], d);
    }
    auto sum = checked_add(total, t.size(dim));
    KCHECK(sum.has_value(), ErrorKind::kShapeMismatch, "concatenated size overflows");
    total = *sum;
  }
  shape[dim] = total;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, shape));
  int64_t pos = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t)) continue;
    Shape sizes = out.sizes();
    sizes[dim] = t.size(dim);
    const Tensor dst = out.view_as(sizes, out.strides(), pos * out.stride(dim));
    copy_cast_into(dst, t);
    pos += t.size(dim);
  }
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> cat_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::cat, cat>(kStoresIntoContiguousDestination),
  };
  return kEntries;
}

}  // namespace splice::cpu
