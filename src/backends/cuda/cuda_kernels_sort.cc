// The sort family on the CUDA backend (sort.h): sort, sort.stable and topk, arguments read and
// checked as the CPU kernels (backends/cpu/sort.cc) read them, outputs from the planned
// destination or new device memory, the keys and CUB's storage in the session's scratch.
#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/sort.h"
#include "tensor/indexing.h"

namespace splice::cuda::glue {

namespace {

// Sorts self along dim into values and indices (self's shape with k at dim): the first k of
// each sorted lane.
Result<Outputs> run_sort(Ctx& ctx, const Tensor& self, int64_t dim, bool descending, int64_t k) {
  const std::string_view op = ctx.op();
  Shape shape = self.sizes();
  if (!shape.empty()) shape[dim] = k;
  SPLICE_ASSIGN_OR_RETURN(Tensor values, ctx.output(self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(Tensor indices, ctx.fresh(DType::kInt64, shape));
  const int64_t length = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t lanes = length == 0 ? 0 : self.numel() / length;
  SPLICE_ASSIGN_OR_RETURN(size_t bytes, sort_scratch_bytes(self.dtype(), lanes, length));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(bytes));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, values));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, indices));
  SPLICE_TRY(sort_lanes(s, dim, descending, k, v, i, scratch, ctx.stream()));
  return Outputs{values, indices};
}

// sort(self, int dim=-1, bool descending=False) and
// sort.stable(self, *, bool? stable, int dim=-1, bool descending=False): both stable.
template <bool kStableOverload>
Result<Outputs> sort_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  constexpr size_t kDimArg = kStableOverload ? 2 : 1;
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dim_arg, a.opt_integer(kDimArg));
  SPLICE_ASSIGN_OR_RETURN(bool descending, a.boolean_or(kDimArg + 1, false));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim,
                          wrap_dim(op, dim_arg.value_or(-1), std::max<int64_t>(self.dim(), 1)));
  return run_sort(ctx, self, dim, descending, self.dim() == 0 ? 1 : self.size(dim));
}

// topk(self, SymInt k, int dim=-1, bool largest=True, bool sorted=True): the first k of a
// stable sort (largest first when largest), so sorted=False is sorted too.
Result<Outputs> topk_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t k, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dim_arg, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(bool largest, a.boolean_or(3, true));
  SPLICE_CHECK_OR_RETURN(self.dtype() != DType::kBool, ErrorKind::kBadInput,
                         "{}: topk does not support bool dtypes on CPU", op);
  SPLICE_ASSIGN_OR_RETURN(int64_t dim,
                          wrap_dim(op, dim_arg.value_or(-1), std::max<int64_t>(self.dim(), 1)));
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  SPLICE_CHECK_OR_RETURN(k >= 0 && k <= n, ErrorKind::kOutOfRange,
                         "{}: selected index k out of range (k = {}, {} elements along dim {})", op,
                         k, n, dim);
  // A 0-d tensor is one element: eager returns it (and index 0) even for k = 0.
  if (self.dim() == 0) return run_sort(ctx, self, dim, largest, 1);
  return run_sort(ctx, self, dim, largest, k);
}

}  // namespace

std::span<const KernelEntry> sort_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::sort, sort_kernel<false>>(),
      entry<OpId::sort_stable, sort_kernel<true>>(),
      entry<OpId::topk, topk_kernel>(),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
