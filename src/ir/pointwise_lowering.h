#pragma once
// From an ATen pointwise op to a PointwiseProgram of one node (plus the conversions PyTorch
// makes first), with exactly the CPU backend's semantics: the same result_type, the same
// conversions of each operand into the common dtype (a float32 operand of a float16 op is
// rounded to float16 first, except the 0-d second operand of mul/div, which PyTorch keeps in
// float), the same parameter roundings and the same argument checks with the same messages
// ("aten.silu.default: not implemented for i64 tensors"). The lowering sees only dtypes, ranks
// and Python numbers, so a planner can lower (and fuse) before any data exists.
//
// Covered: the op table's pointwise arithmetic, comparisons, logical and bitwise ops, min/max/
// clamp, where/masked_fill, unary math and activations, rounding (pointwise_lowering_*.cc), and
// the copies, casts and fills (clone, _to_copy, copy, to.*, type_as, contiguous, dropout in
// eval mode, fill, full, zeros, ones, *_like, new_*, scalar_tensor, arange).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/pointwise.h"
#include "support/error.h"
#include "tensor/scalar.h"

namespace splice::ir {

// One argument of the op call, in schema order (defaulted arguments filled): a tensor (its
// dtype and rank), a Python number (Scalar, also for int/bool/float arguments), a string, a
// dtype (ScalarType), or None.
struct OpArg {
  enum class Kind { kNone, kTensor, kScalar, kString, kDType };
  Kind kind = Kind::kNone;
  DType dtype = DType::kFloat32;  // kTensor, kDType
  int64_t rank = 0;               // kTensor
  Scalar scalar;                  // kScalar
  std::string text;               // kString

  static OpArg none() { return {}; }
  static OpArg tensor(DType dtype, int64_t rank) { return {Kind::kTensor, dtype, rank, {}, {}}; }
  static OpArg number(Scalar s) { return {Kind::kScalar, DType::kFloat32, 0, s, {}}; }
  static OpArg string(std::string s) {
    return {Kind::kString, DType::kFloat32, 0, {}, std::move(s)};
  }
  static OpArg scalar_type(DType d) { return {Kind::kDType, d, 0, {}, {}}; }
};

struct LoweredPointwise {
  PointwiseProgram program;
  // For each program input in order, the index of the op argument (a tensor) it reads. The
  // output's shape is the broadcast of those tensors' shapes (for copy.default: self's shape;
  // for factories: the size argument; for *_like: that tensor's shape).
  std::vector<int> inputs;
};

Result<LoweredPointwise> lower_pointwise_op(std::string_view target, std::span<const OpArg> args);

// Whether lower_pointwise_op handles `target` (an export target such as "aten.add.Tensor").
bool has_pointwise_lowering(std::string_view target);
// Every target lower_pointwise_op handles, sorted.
std::vector<std::string_view> pointwise_lowering_targets();

// arange's element count for (start, end, step) as PyTorch computes it, with the CPU kernel's
// checks and messages (step 0, infinite bounds, sign mismatch, too large).
Result<int64_t> arange_length(std::string_view op, const Scalar& start, const Scalar& end,
                              const Scalar& step);

}  // namespace splice::ir
