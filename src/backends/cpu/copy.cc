// Copy ops: clone, lift_fresh_copy, _to_copy (dtype conversion) and the functional
// copy(self, src) = src broadcast to self's shape and cast to self's dtype. Results are new
// contiguous tensors.
#include <cstring>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"

namespace splice::cpu {

namespace {

// self converted to `dtype` in the kernel's output (the planned destination when there is one).
Tensor copy_to_output(const Tensor& self, DType dtype) {
  Tensor out = output_or_new(dtype, self.sizes());
  if (dtype == self.dtype() && self.is_contiguous() && out.is_contiguous()) {
    if (self.numel() > 0) std::memcpy(out.raw_data(), self.raw_data(), self.nbytes());
  } else {
    copy_cast_into(out, self);
  }
  return out;
}

Result<Outputs> clone(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  return Outputs{copy_to_output(self, self.dtype())};
}

Result<Outputs> to_copy(std::string_view op, std::span<const KernelArg> args) {
  // _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return Outputs{copy_to_output(self, dtype.value_or(self.dtype()))};
}

Result<Outputs> copy(std::string_view op, std::span<const KernelArg> args) {
  // copy(self, src, non_blocking=False)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Shape b, broadcast_shapes(op, self.sizes(), src.sizes()));
  KCHECK(b == self.sizes(), ErrorKind::kShapeMismatch,
         "src of shape {} does not broadcast to self's shape {}", shape_string(src.sizes()),
         shape_string(self.sizes()));
  Tensor out = output_or_new(self.dtype(), self.sizes());
  copy_cast_into(out, broadcast_to(src, self.sizes()));
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> copy_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::clone, clone>(kStoresIntoDestination),
      entry<OpId::lift_fresh_copy, clone>(kStoresIntoDestination),
      entry<OpId::_to_copy, to_copy>(kStoresIntoDestination),
      entry<OpId::copy, copy>(kStoresIntoDestination),
  };
  return kEntries;
}

}  // namespace splice::cpu
