// aten.diagonal, registered with the composite table although it is no composite: a view of a
// tensor's diagonal, a primitive (core ATen) op. The CompositeImplicit ops this file used to
// run by calling other kernels (the `to` overloads, pad, narrow, chunk, flatten, movedim, ...)
// are decomposed into primitive ops by passes/decompose_composites before any backend sees
// them.
#include "backends/cpu/args.h"

namespace splice::cpu {

namespace {

// The diagonal of dims dim1/dim2 (wrapped here) shifted by offset, as a view whose last dim is
// the diagonal.
Result<Tensor> diagonal_view(std::string_view op, const Tensor& self, int64_t offset, int64_t dim1,
                             int64_t dim2) {
  SPLICE_ASSIGN_OR_RETURN(dim1, wrap_dim(op, dim1, self.dim()));
  SPLICE_ASSIGN_OR_RETURN(dim2, wrap_dim(op, dim2, self.dim()));
  KCHECK(self.dim() >= 2, ErrorKind::kShapeMismatch,
         "diagonal needs a tensor of at least 2 dims, got {}", self.dim());
  KCHECK(dim1 != dim2, ErrorKind::kBadInput, "diagonal dimensions cannot be identical {}, {}", dim1,
         dim2);
  const int64_t s1 = self.size(dim1), s2 = self.size(dim2);
  int64_t len = 0, start = self.offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(s1, s2 - std::min(offset, s2)), 0);
    if (len > 0) start += offset * self.stride(dim2);
  } else {
    len = std::max<int64_t>(std::min(s1 - std::min(-offset, s1), s2), 0);
    if (len > 0) start -= offset * self.stride(dim1);
  }
  const int64_t diag_stride = self.stride(dim1) + self.stride(dim2);
  Shape sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim1 || d == dim2) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  sizes.push_back(len);
  strides.push_back(diag_stride);
  return self.view_as(sizes, strides, start);
}

// diagonal(self, int offset=0, int dim1=0, int dim2=1): a view; the diagonal is the last dim.
Result<Outputs> diagonal(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t offset, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim1, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim2, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, diagonal_view(op, self, offset, dim1, dim2));
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> composite_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::diagonal, diagonal>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
