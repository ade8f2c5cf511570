#pragma once
// Shared pieces of the pointwise lowerings (pointwise_lowering_*.cc): typed argument access
// with the CPU kernels' error messages, operands that are tensors or Python numbers, the
// conversion rule into a common dtype, and the table type each lowering file contributes.

#include <span>
#include <string_view>
#include <vector>

#include "ir/pointwise_lowering.h"
#include "ir/promotion.h"

// An Error of `kind` prefixed with the op (a local `op` must be in scope), as the CPU's KCHECK.
#define LCHECK(cond, kind, fmt_str, ...) \
  SPLICE_CHECK_OR_RETURN(cond, kind, "{}: " fmt_str, op __VA_OPT__(, ) __VA_ARGS__)

namespace splice::ir::lowering {

// Argument access; errors name the op and position as the CPU's Args does.
class LArgs {
 public:
  LArgs(std::string_view op, std::span<const OpArg> args) : op_(op), args_(args) {}
  bool is_none(size_t i) const { return i >= args_.size() || args_[i].kind == OpArg::Kind::kNone; }
  bool is_tensor(size_t i) const {
    return i < args_.size() && args_[i].kind == OpArg::Kind::kTensor;
  }
  Result<OpArg> tensor(size_t i) const;
  Result<Scalar> scalar(size_t i) const;
  Result<Scalar> scalar_or(size_t i, Scalar fallback) const;
  Result<int64_t> integer(size_t i) const;
  Result<bool> boolean_or(size_t i, bool fallback) const;
  Result<std::optional<std::string>> opt_string(size_t i) const;
  Result<std::optional<DType>> opt_dtype(size_t i) const;

 private:
  Error bad(size_t i, std::string_view expected) const;
  std::string_view op_;
  std::span<const OpArg> args_;
};

// A tensor argument or a Python number.
struct Operand {
  bool is_tensor = false;
  int arg = -1;  // the op argument (tensors)
  DType dtype = DType::kFloat32;
  int64_t rank = 0;
  Scalar scalar;

  PromotionOperand promotion() const;
  bool is_zero_dim() const { return !is_tensor || rank == 0; }
};

// Argument i as an Operand: a number (wrapped Python scalar) or a tensor.
Result<Operand> read_operand(const LArgs& a, size_t i);

// Builds one program, recording which op argument feeds each input.
class Builder {
 public:
  // The operand converted as PyTorch converts it into an op computing in `dtype`: a tensor
  // is read in its own dtype and, when `dtype` is a 16-bit float it differs from, rounded to
  // `dtype` first (a cast node); a number is materialised in `dtype`. `keep_original` is
  // PyTorch's exception for the 0-d second operand of mul/div in 16-bit floats: its value is
  // kept (through double) and converted straight to float.
  PointwiseRef operand(const Operand& o, DType dtype, bool keep_original = false);
  PointwiseRef input(int arg, DType dtype);
  PointwiseRef constant(Scalar value, DType dtype) {
    return lowered_.program.add_constant(value, dtype);
  }
  PointwiseRef node(PointwiseFn fn, std::vector<PointwiseRef> operands, DType result);
  PointwiseRef node(PointwiseFn fn, std::vector<PointwiseRef> operands, DType result,
                    DType compute) {
    return lowered_.program.add_node(fn, std::move(operands), result, compute);
  }
  LoweredPointwise finish(PointwiseRef out) &&;

 private:
  LoweredPointwise lowered_;
};

using LowerFn = Result<LoweredPointwise> (*)(std::string_view op, std::span<const OpArg> args);
struct LoweringEntry {
  std::string_view target;
  LowerFn fn;
};

// The lowerings of the rules of ir/ops/pointwise/functions.h (PointwiseOpRule): float math of
// one tensor (integers lift to float32; silu refuses them) and of two promoted tensors.
Result<LoweredPointwise> lower_float_unary(PointwiseFn fn, std::string_view op,
                                           std::span<const OpArg> args);
Result<LoweredPointwise> lower_float_binary(PointwiseFn fn, std::string_view op,
                                            std::span<const OpArg> args);

std::span<const LoweringEntry> binary_lowerings();
std::span<const LoweringEntry> unary_lowerings();
std::span<const LoweringEntry> copy_lowerings();

}  // namespace splice::ir::lowering
