// The CPU kernel of every pointwise op defined whole in ir/ops/pointwise/ (functions.h,
// SPLICE_POINTWISE_OPS): the op is lowered to its one-node program (ir/pointwise_lowering.h,
// which carries its dtype rule and argument checks) and run by the program interpreter
// (pointwise_program.h) over the broadcast of its tensor arguments. So such an op needs no
// kernel of its own: its formula is the one the interpreter, fused groups and the CUDA
// generator compute.
#include <variant>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "backends/cpu/pointwise_program.h"
#include "ir/pointwise_lowering.h"

namespace splice::cpu {

namespace {

ir::OpArg op_arg(const KernelArg& a) {
  if (const auto* t = std::get_if<Tensor>(&a)) return ir::OpArg::tensor(t->dtype(), t->dim());
  if (const auto* b = std::get_if<bool>(&a)) return ir::OpArg::number(Scalar(*b));
  if (const auto* i = std::get_if<int64_t>(&a)) return ir::OpArg::number(Scalar(*i));
  if (const auto* d = std::get_if<double>(&a)) return ir::OpArg::number(Scalar(*d));
  if (const auto* s = std::get_if<std::string>(&a)) return ir::OpArg::string(*s);
  if (const auto* d = std::get_if<DType>(&a)) return ir::OpArg::scalar_type(*d);
  return ir::OpArg::none();
}

// t seen with `rank` dims: leading dims of size 1 (the interpreter broadcasts dims of size 1).
Tensor with_rank(const Tensor& t, size_t rank) {
  const size_t pad = rank - t.sizes().size();
  Shape sizes(pad, 1), strides(pad, 0);
  sizes.insert(sizes.end(), t.sizes().begin(), t.sizes().end());
  strides.insert(strides.end(), t.strides().begin(), t.strides().end());
  return t.view_as(std::move(sizes), std::move(strides), t.offset());
}

// Unused while no op is defined whole (an empty SPLICE_POINTWISE_OPS).
[[maybe_unused]] Result<Outputs> lowered(std::string_view op, std::span<const KernelArg> args) {
  std::vector<ir::OpArg> op_args;
  op_args.reserve(args.size());
  for (const KernelArg& a : args) op_args.push_back(op_arg(a));
  SPLICE_ASSIGN_OR_RETURN(ir::LoweredPointwise l, ir::lower_pointwise_op(op, op_args));
  Args a(op, args);
  std::vector<Tensor> inputs;
  Shape shape;
  for (int i : l.inputs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(static_cast<size_t>(i)));
    SPLICE_ASSIGN_OR_RETURN(shape, broadcast_shapes(op, shape, t.sizes()));
    inputs.push_back(std::move(t));
  }
  for (Tensor& t : inputs) t = with_rank(t, shape.size());
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, l.program.outputs[0].dtype, shape));
  const Tensor outputs[] = {out};
  SPLICE_TRY(run_pointwise_program(l.program, inputs, outputs, shape));
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> defined_pointwise_kernels() {
#define SPLICE_PW_KERNEL(id, ...) entry<OpId::id, lowered>(),
  static const std::vector<KernelEntry> kEntries = {SPLICE_POINTWISE_OPS(SPLICE_PW_KERNEL)};
#undef SPLICE_PW_KERNEL
  return kEntries;
}

}  // namespace splice::cpu
