// Pointwise ops, copies, casts and factories on the CUDA backend: each op is lowered to an
// ir::PointwiseProgram with the CPU backend's semantics (ir/pointwise_lowering.h), compiled once
// through NVRTC (cached per program structure) and launched over the output, which may be a
// strided view of planned memory (kStoresIntoDestination): this is how a producer writes
// straight into a slice on the GPU. The empty_* factories only allocate.
#include <algorithm>
#include <variant>

#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/pointwise_launch.h"
#include "ir/pointwise_lowering.h"

namespace splice::cuda::glue {

namespace {

using backend::kStoresIntoDestination;
using ir::arange_length;
using ir::lower_pointwise_op;
using ir::LoweredPointwise;
using ir::OpArg;

OpArg op_arg(const KernelArg& a) {
  if (const auto* t = std::get_if<Tensor>(&a)) return OpArg::tensor(t->dtype(), t->dim());
  if (const auto* b = std::get_if<bool>(&a)) return OpArg::number(Scalar(*b));
  if (const auto* i = std::get_if<int64_t>(&a)) return OpArg::number(Scalar(*i));
  if (const auto* d = std::get_if<double>(&a)) return OpArg::number(Scalar(*d));
  if (const auto* s = std::get_if<std::string>(&a)) return OpArg::string(*s);
  if (const auto* d = std::get_if<DType>(&a)) return OpArg::scalar_type(*d);
  return OpArg::none();  // None, and int lists (sizes matter to the output, not the program)
}

// numpy broadcasting of two shapes (the lowering accepted the operands; a mismatch is an
// argument error named after the op).
Result<Shape> broadcast(std::string_view op, const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    SPLICE_CHECK_OR_RETURN(x == y || x == 1 || y == 1, ErrorKind::kShapeMismatch,
                           "{}: shapes {} and {} do not broadcast", op, shape_string(a),
                           shape_string(b));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// The output's shape, as the CPU kernels give it.
Result<Shape> output_shape(Ctx& ctx, std::span<const KernelArg> args,
                           const LoweredPointwise& lowered) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  const ir::OpId id = ir::find_op(op)->id;
  switch (id) {
    case OpId::zeros:
    case OpId::ones:
    case OpId::full: {
      SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, a.int_list(0));
      return Shape(sizes);
    }
    case OpId::new_zeros:
    case OpId::new_ones:
    case OpId::new_full: {
      SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, a.int_list(1));
      return Shape(sizes);
    }
    case OpId::zeros_like:
    case OpId::ones_like:
    case OpId::full_like:
    case OpId::copy:
    case OpId::fill_Scalar:
    case OpId::fill_Tensor: {
      SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
      return self.sizes();
    }
    case OpId::scalar_tensor:
      return Shape{};
    case OpId::arange:
    case OpId::arange_start:
    case OpId::arange_start_step: {
      Scalar start(int64_t{0}), end, step(int64_t{1});
      if (id == OpId::arange) {
        SPLICE_ASSIGN_OR_RETURN(end, a.scalar(0));
      } else {
        SPLICE_ASSIGN_OR_RETURN(start, a.scalar(0));
        SPLICE_ASSIGN_OR_RETURN(end, a.scalar(1));
        if (id == OpId::arange_start_step) {
          SPLICE_ASSIGN_OR_RETURN(step, a.scalar_or(2, Scalar(int64_t{1})));
        }
      }
      SPLICE_ASSIGN_OR_RETURN(int64_t n, arange_length(op, start, end, step));
      return Shape{n};
    }
    default:
      break;
  }
  Shape shape;
  for (int i : lowered.inputs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(static_cast<size_t>(i)));
    SPLICE_ASSIGN_OR_RETURN(shape, broadcast(op, shape, t.sizes()));
  }
  return shape;
}

Result<Outputs> pointwise(Ctx& ctx, std::span<const KernelArg> args) {
  std::vector<OpArg> op_args;
  op_args.reserve(args.size());
  for (const KernelArg& a : args) op_args.push_back(op_arg(a));
  SPLICE_ASSIGN_OR_RETURN(LoweredPointwise lowered, lower_pointwise_op(ctx.op(), op_args));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, output_shape(ctx, args, lowered));
  SPLICE_CHECK_OR_RETURN(lowered.program.outputs.size() == 1, ErrorKind::kInternal,
                         "{}: lowered to {} outputs", ctx.op(), lowered.program.outputs.size());
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(lowered.program.outputs[0].dtype, shape));
  if (out.numel() == 0) return Outputs{out};
  std::vector<DeviceTensor> inputs;
  Args a(ctx.op(), args);
  for (int i : lowered.inputs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(static_cast<size_t>(i)));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(ctx.op(), t));
    inputs.push_back(d);
  }
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(ctx.op(), out));
  SPLICE_ASSIGN_OR_RETURN(auto prepared, PreparedPointwise::prepare(lowered.program, {}));
  std::vector<PointwiseOperand> in_ops, out_ops{PointwiseOperand{o, nullptr}};
  for (const DeviceTensor& d : inputs) in_ops.push_back({d, nullptr});
  const LaunchContext launch = ctx.launch(prepared->checks());
  SPLICE_TRY(prepared->launch(in_ops, out_ops, launch, &lowered.program.constants));
  return Outputs{out};
}

// empty.memory_format(size, *, dtype=None, ...), empty_permuted(size, physical_layout, *,
// dtype=None, ...), empty_strided(size, stride, *, dtype=None, ...): uninitialised memory
// (results are contiguous, as the CPU kernels make them).
template <size_t kDTypeAt>
Result<Outputs> empty_sized(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(Shape size, a.int_list(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(kDTypeAt));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(dtype.value_or(DType::kFloat32), size));
  return Outputs{out};
}

// empty_like(self, *, dtype=None, ...) and new_empty(self, size, *, dtype=None, ...).
template <bool kNew>
Result<Outputs> empty_from(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  Shape size = self.sizes();
  if constexpr (kNew) {
    SPLICE_ASSIGN_OR_RETURN(size, a.int_list(1));
  }
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(kNew ? 2 : 1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(dtype.value_or(self.dtype()), size));
  return Outputs{out};
}

template <OpId kOp>
constexpr KernelEntry pw() {
  return entry<kOp, pointwise>(kStoresIntoDestination);
}

}  // namespace

std::span<const KernelEntry> pointwise_kernels() {
  static constexpr KernelEntry kEntries[] = {
  // Copies and casts.
  // The ops defined whole in ir/ops/pointwise/ (functions.h).
#define SPLICE_PW_KERNEL(id, ...) pw<OpId::id>(),
      SPLICE_POINTWISE_OPS(SPLICE_PW_KERNEL)
#undef SPLICE_PW_KERNEL
          pw<OpId::clone>(),
      pw<OpId::lift_fresh_copy>(),
      pw<OpId::_to_copy>(),
      pw<OpId::copy>(),
      // Factories and fills.
      pw<OpId::zeros>(),
      pw<OpId::ones>(),
      pw<OpId::full>(),
      pw<OpId::zeros_like>(),
      pw<OpId::ones_like>(),
      pw<OpId::full_like>(),
      pw<OpId::new_zeros>(),
      pw<OpId::new_ones>(),
      pw<OpId::new_full>(),
      pw<OpId::scalar_tensor>(),
      pw<OpId::fill_Scalar>(),
      pw<OpId::fill_Tensor>(),
      pw<OpId::arange>(),
      pw<OpId::arange_start>(),
      pw<OpId::arange_start_step>(),
      entry<OpId::empty_memory_format, empty_sized<1>>(),
      entry<OpId::empty_permuted, empty_sized<2>>(),
      entry<OpId::empty_strided, empty_sized<2>>(),
      entry<OpId::empty_like, empty_from<false>>(),
      entry<OpId::new_empty, empty_from<true>>(),
      // Arithmetic.
      pw<OpId::add_Tensor>(),
      pw<OpId::add_Scalar>(),
      pw<OpId::sub_Tensor>(),
      pw<OpId::sub_Scalar>(),
      pw<OpId::rsub_Tensor>(),
      pw<OpId::rsub_Scalar>(),
      pw<OpId::mul_Tensor>(),
      pw<OpId::mul_Scalar>(),
      pw<OpId::div_Tensor>(),
      pw<OpId::div_Scalar>(),
      pw<OpId::div_Tensor_mode>(),
      pw<OpId::div_Scalar_mode>(),
      pw<OpId::floor_divide>(),
      pw<OpId::remainder_Tensor>(),
      pw<OpId::remainder_Scalar>(),
      pw<OpId::fmod_Tensor>(),
      pw<OpId::fmod_Scalar>(),
      pw<OpId::pow_Tensor_Tensor>(),
      pw<OpId::pow_Tensor_Scalar>(),
      pw<OpId::pow_Scalar>(),
      pw<OpId::atan2>(),
      // Selection.
      pw<OpId::where_self>(),
      pw<OpId::where_ScalarSelf>(),
      pw<OpId::where_ScalarOther>(),
      pw<OpId::where_Scalar>(),
      pw<OpId::masked_fill_Scalar>(),
      pw<OpId::masked_fill_Tensor>(),
      pw<OpId::minimum>(),
      pw<OpId::maximum>(),
      pw<OpId::clamp>(),
      pw<OpId::clamp_Tensor>(),
      pw<OpId::clamp_min>(),
      pw<OpId::clamp_max>(),
      pw<OpId::clamp_min_Tensor>(),
      pw<OpId::clamp_max_Tensor>(),
      // Logical and bitwise.
      pw<OpId::logical_and>(),
      pw<OpId::logical_or>(),
      pw<OpId::logical_xor>(),
      pw<OpId::logical_not>(),
      pw<OpId::bitwise_not>(),
      pw<OpId::bitwise_and_Tensor>(),
      pw<OpId::bitwise_and_Scalar>(),
      pw<OpId::bitwise_or_Tensor>(),
      pw<OpId::bitwise_or_Scalar>(),
      pw<OpId::bitwise_xor_Tensor>(),
      pw<OpId::bitwise_xor_Scalar>(),
      pw<OpId::dunder_and_Tensor>(),
      pw<OpId::dunder_and_Scalar>(),
      pw<OpId::dunder_or_Tensor>(),
      pw<OpId::dunder_or_Scalar>(),
      pw<OpId::dunder_xor_Tensor>(),
      pw<OpId::dunder_xor_Scalar>(),
      // Comparisons.
      pw<OpId::eq_Tensor>(),
      pw<OpId::eq_Scalar>(),
      pw<OpId::ne_Tensor>(),
      pw<OpId::ne_Scalar>(),
      pw<OpId::lt_Tensor>(),
      pw<OpId::lt_Scalar>(),
      pw<OpId::le_Tensor>(),
      pw<OpId::le_Scalar>(),
      pw<OpId::gt_Tensor>(),
      pw<OpId::gt_Scalar>(),
      pw<OpId::ge_Tensor>(),
      pw<OpId::ge_Scalar>(),
      pw<OpId::isnan>(),
      pw<OpId::isinf>(),
      // Unary math and activations.
      pw<OpId::neg>(),
      pw<OpId::abs>(),
      pw<OpId::sign>(),
      pw<OpId::relu>(),
      pw<OpId::sqrt>(),
      pw<OpId::rsqrt>(),
      pw<OpId::exp>(),
      pw<OpId::expm1>(),
      pw<OpId::log>(),
      pw<OpId::log1p>(),
      pw<OpId::log2>(),
      pw<OpId::sin>(),
      pw<OpId::cos>(),
      pw<OpId::tanh>(),
      pw<OpId::sinh>(),
      pw<OpId::cosh>(),
      pw<OpId::asin>(),
      pw<OpId::acos>(),
      pw<OpId::atan>(),
      pw<OpId::sigmoid>(),
      pw<OpId::silu>(),
      pw<OpId::gelu>(),
      pw<OpId::erf>(),
      pw<OpId::reciprocal>(),
      pw<OpId::hardtanh>(),
      pw<OpId::leaky_relu>(),
      pw<OpId::softplus>(),
      pw<OpId::elu>(),
      pw<OpId::floor>(),
      pw<OpId::ceil>(),
      pw<OpId::round>(),
      pw<OpId::round_decimals>(),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
