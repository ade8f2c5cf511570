// Functional slice writes: slice_scatter and select_scatter. The result is a new copy of self
// whose slice holds src converted to self's dtype (c10 conversion rules: float→int truncates,
// −1.0 → uint8 255, anything→bool is != 0). Slice bounds follow Python slicing (None start = 0,
// None end = size, negatives add size, clamp into [0, size], end < start is empty); src must
// have exactly the slice's shape (no broadcasting), as eager PyTorch requires.
#include <algorithm>

#include "backends/cpu/args.h"
#include "tensor/convert.h"

namespace splice::cpu {

namespace {

// The view of `base` that the write covers, from the op's own arguments (tensor/indexing.h).
Result<Tensor> slice_destination(std::string_view op, const Args& a, const Tensor& base,
                                 const Tensor& src) {
  SPLICE_ASSIGN_OR_RETURN(auto dim, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto start, a.opt_integer(3));
  SPLICE_ASSIGN_OR_RETURN(auto end, a.opt_integer(4));
  SPLICE_ASSIGN_OR_RETURN(auto step, a.opt_integer(5));
  return slice_write_view(op, base, src.sizes(), dim, start, end, step);
}

Result<Tensor> select_destination(std::string_view op, const Args& a, const Tensor& base,
                                  const Tensor& src) {
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t index, a.integer(3));
  return select_write_view(op, base, src.sizes(), dim, index);
}

template <bool kSlice>
Result<Outputs> scatter_write(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  // Check the bounds and shapes before copying self, so a bad write costs nothing.
  SPLICE_TRY(kSlice ? slice_destination(op, a, self, src) : select_destination(op, a, self, src));
  Tensor out = write_base(self);
  SPLICE_ASSIGN_OR_RETURN(Tensor dest, kSlice ? slice_destination(op, a, out, src)
                                              : select_destination(op, a, out, src));
  if (dest.numel() > 0) copy_cast_into(dest, src);
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> scatter_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::slice_scatter, scatter_write<true>>(kWritesInPlace),
      entry<OpId::select_scatter, scatter_write<false>>(kWritesInPlace),
  };
  return kEntries;
}

}  // namespace splice::cpu
