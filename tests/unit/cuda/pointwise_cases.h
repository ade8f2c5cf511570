#pragma once
// The pointwise op cases the CUDA tests run: every pointwise, copy, cast and fill target that
// lower_pointwise_op covers, with tensor, number, string and dtype arguments. Tensor shapes use
// placeholders (-1 = N, -2 = M) that each test instantiates (small for the no-GPU lowering
// checks; empty, single, odd, > 2^16 elements and > 65535 rows on the GPU). A case runs for
// every dtype; the CPU kernel decides whether a dtype is legal, and the CUDA lowering must agree
// (same error message, or same result dtype and values).

#include <optional>
#include <string>
#include <vector>

#include "ir/ops/pointwise/functions.h"
#include "support/dtype.h"
#include "tensor/scalar.h"

namespace splice::cuda::testing {

// What random values a tensor argument holds.
enum class Values {
  kAny,      // floats in [-4, 4] (with some exact integers and halves), ints in [-9, 9]
  kNonZero,  // as kAny without zeros (integer divisors)
  kSmall,    // ints in [0, 3], floats in [-2, 2] (pow exponents)
  kUnit,     // floats in (-1, 1) (asin, acos)
};

struct ArgSpec {
  enum class Kind { kTensor, kNumber, kString, kNone, kDType, kIntList };
  Kind kind = Kind::kNone;
  std::vector<int64_t> shape;  // kTensor / kIntList; -1 = N, -2 = M
  std::optional<DType> dtype;  // kTensor / kDType: nullopt = the case's dtype
  Scalar number;
  std::string text;
  Values values = Values::kAny;
};

inline ArgSpec T(std::vector<int64_t> shape, Values v = Values::kAny) {
  return {ArgSpec::Kind::kTensor, std::move(shape), std::nullopt, {}, {}, v};
}
inline ArgSpec Tof(DType d, std::vector<int64_t> shape, Values v = Values::kAny) {
  return {ArgSpec::Kind::kTensor, std::move(shape), d, {}, {}, v};
}
inline ArgSpec num(double v) { return {ArgSpec::Kind::kNumber, {}, std::nullopt, Scalar(v), {}}; }
inline ArgSpec inum(int64_t v) { return {ArgSpec::Kind::kNumber, {}, std::nullopt, Scalar(v), {}}; }
inline ArgSpec bnum(bool v) { return {ArgSpec::Kind::kNumber, {}, std::nullopt, Scalar(v), {}}; }
inline ArgSpec str(std::string s) {
  return {ArgSpec::Kind::kString, {}, std::nullopt, {}, std::move(s)};
}
inline ArgSpec none() { return {}; }
inline ArgSpec dt() { return {ArgSpec::Kind::kDType, {}, std::nullopt, {}, {}}; }
inline ArgSpec dt(DType d) { return {ArgSpec::Kind::kDType, {}, d, {}, {}}; }
inline ArgSpec ints(std::vector<int64_t> v) {
  return {ArgSpec::Kind::kIntList, std::move(v), std::nullopt, {}, {}};
}

struct PointwiseCase {
  std::string target;
  std::vector<ArgSpec> args;
  // Whether GPU results must equal the CPU's bit for bit (arithmetic, comparisons, copies,
  // rounding); otherwise floats compare within the math functions' ulp tolerance.
  bool exact = true;
};

inline std::vector<PointwiseCase> pointwise_cases() {
  const Values nz = Values::kNonZero;
  std::vector<PointwiseCase> c = {
      // add / sub / rsub with alpha, wrapped numbers and mixed dtypes.
      {"aten.add.Tensor", {T({-1, -2}), T({-2}), inum(1)}},
      {"aten.add.Tensor", {T({-1, -2}), T({-1, -2}), inum(3)}},
      {"aten.add.Tensor", {T({-1, -2}), T({-1, 1}), num(0.5)}},
      {"aten.add.Tensor", {T({-1, -2}), Tof(DType::kFloat32, {-2}), inum(1)}},
      {"aten.add.Tensor", {T({-1, -2}), Tof(DType::kFloat32, {}), inum(1)}},
      {"aten.add.Tensor", {T({-1, -2}), num(2.5), inum(1)}},
      {"aten.add.Tensor", {Tof(DType::kBool, {-1, -2}), T({-2}), bnum(true)}},
      {"aten.add.Scalar", {T({-1, -2}), inum(3), inum(2)}},
      {"aten.add.Scalar", {T({-1, -2}), num(-1.25), inum(1)}},
      {"aten.sub.Tensor", {T({-1, -2}), T({-1, -2}), inum(1)}},
      {"aten.sub.Tensor", {T({-1, -2}), T({-2}), inum(-2)}},
      {"aten.sub.Tensor", {T({-1, -2}), Tof(DType::kInt64, {}), inum(1)}},
      {"aten.sub.Scalar", {T({-1, -2}), num(1.5), inum(1)}},
      {"aten.rsub.Tensor", {T({-1, -2}), T({-2}), inum(1)}},
      {"aten.rsub.Scalar", {T({-1, -2}), inum(2), inum(1)}},
      // mul / div in every mode; the 0-d second operand of a 16-bit mul keeps its value.
      {"aten.mul.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.mul.Tensor", {T({-1, -2}), Tof(DType::kFloat32, {})}},
      {"aten.mul.Tensor", {T({-1, -2}), Tof(DType::kFloat64, {-1, -2})}},
      {"aten.mul.Tensor", {T({-1, -2}), num(0.1)}},
      {"aten.mul.Scalar", {T({-1, -2}), inum(-3)}},
      {"aten.mul.Scalar", {T({-1, -2}), num(0.3)}},
      {"aten.div.Tensor", {T({-1, -2}), T({-2}, nz)}},
      {"aten.div.Tensor", {T({-1, -2}), Tof(DType::kFloat32, {})}},
      {"aten.div.Scalar", {T({-1, -2}), inum(3)}},
      {"aten.div.Scalar", {T({-1, -2}), num(-0.7)}},
      {"aten.div.Tensor_mode", {T({-1, -2}), T({-1, -2}, nz), str("trunc")}},
      {"aten.div.Tensor_mode", {T({-1, -2}), T({-2}, nz), str("floor")}},
      {"aten.div.Tensor_mode", {T({-1, -2}), T({-2}, nz), none()}},
      {"aten.div.Tensor_mode", {T({-1, -2}), T({-2}, nz), str("round")}},
      {"aten.div.Scalar_mode", {T({-1, -2}), num(-2.5), str("floor")}},
      {"aten.div.Scalar_mode", {T({-1, -2}), inum(4), str("trunc")}},
      {"aten.floor_divide.default", {T({-1, -2}), T({-1, -2}, nz)}},
      {"aten.remainder.Tensor", {T({-1, -2}), T({-2}, nz)}},
      {"aten.remainder.Scalar", {T({-1, -2}), inum(-3)}},
      {"aten.remainder.Scalar", {T({-1, -2}), num(1.5)}},
      {"aten.fmod.Tensor", {T({-1, -2}), T({-1, -2}, nz)}},
      {"aten.fmod.Scalar", {T({-1, -2}), num(2.5)}},
      {"aten.fmod.Scalar", {T({-1, -2}), inum(4)}},
      // pow: float pow is a math function (not correctly rounded on the GPU).
      {"aten.pow.Tensor_Tensor", {T({-1, -2}, Values::kSmall), T({-2}, Values::kSmall)}, false},
      {"aten.pow.Tensor_Scalar", {T({-1, -2}), inum(2)}, false},
      {"aten.pow.Tensor_Scalar", {T({-1, -2}), inum(3)}, false},
      {"aten.pow.Tensor_Scalar", {T({-1, -2}), num(0.5)}, false},
      {"aten.pow.Tensor_Scalar", {T({-1, -2}), inum(-1)}, false},
      {"aten.pow.Scalar", {num(2.0), T({-1, -2}, Values::kSmall)}, false},
      {"aten.atan2.default", {T({-1, -2}), T({-2})}, false},
      // Bitwise and logical.
      {"aten.bitwise_and.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.bitwise_and.Scalar", {T({-1, -2}), inum(6)}},
      {"aten.bitwise_or.Tensor", {T({-1, -2}), T({-1, -2})}},
      {"aten.bitwise_or.Scalar", {T({-1, -2}), inum(-7)}},
      {"aten.bitwise_xor.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.bitwise_xor.Scalar", {T({-1, -2}), bnum(true)}},
      {"aten.__and__.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.__and__.Scalar", {T({-1, -2}), inum(3)}},
      {"aten.__or__.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.__or__.Scalar", {T({-1, -2}), inum(8)}},
      {"aten.__xor__.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.__xor__.Scalar", {T({-1, -2}), inum(5)}},
      {"aten.logical_and.default", {T({-1, -2}), T({-2})}},
      {"aten.logical_or.default", {T({-1, -2}), Tof(DType::kFloat32, {-2})}},
      {"aten.logical_xor.default", {T({-1, -2}), T({-1, -2})}},
      {"aten.logical_not.default", {T({-1, -2})}},
      {"aten.bitwise_not.default", {T({-1, -2})}},
      // where / masked_fill.
      {"aten.where.self", {Tof(DType::kBool, {-1, -2}), T({-1, -2}), T({-2})}},
      {"aten.where.self", {Tof(DType::kBool, {-2}), T({-1, -2}), Tof(DType::kFloat32, {})}},
      {"aten.where.self", {Tof(DType::kUInt8, {-1, 1}), T({-1, -2}), T({-1, -2})}},
      {"aten.where.ScalarSelf", {Tof(DType::kBool, {-1, -2}), num(2.5), T({-1, -2})}},
      {"aten.where.ScalarOther", {Tof(DType::kBool, {-1, -2}), T({-2}), inum(-1)}},
      {"aten.where.Scalar", {Tof(DType::kBool, {-1, -2}), inum(1), num(0.5)}},
      {"aten.masked_fill.Scalar", {T({-1, -2}), Tof(DType::kBool, {-2}), num(1.5)}},
      {"aten.masked_fill.Scalar", {T({-1, -2}), Tof(DType::kBool, {-1, -2}), inum(300)}},
      {"aten.masked_fill.Tensor",
       {T({-1, -2}), Tof(DType::kBool, {-1, 1}), Tof(DType::kFloat64, {})}},
      {"aten.masked_fill.Scalar", {T({-1, -2}), Tof(DType::kInt8, {-2}), num(1.5)}},
      // Comparisons.
      {"aten.eq.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.eq.Scalar", {T({-1, -2}), inum(1)}},
      {"aten.ne.Tensor", {T({-1, -2}), T({-1, -2})}},
      {"aten.ne.Scalar", {T({-1, -2}), num(0.5)}},
      {"aten.lt.Tensor", {T({-1, -2}), Tof(DType::kFloat16, {-2})}},
      {"aten.lt.Scalar", {T({-1, -2}), num(2.5)}},
      {"aten.le.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.le.Scalar", {T({-1, -2}), inum(0)}},
      {"aten.gt.Tensor", {T({-1, -2}), T({-1, -2})}},
      {"aten.gt.Scalar", {T({-1, -2}), num(-1.5)}},
      {"aten.ge.Tensor", {T({-1, -2}), Tof(DType::kInt32, {})}},
      {"aten.ge.Scalar", {T({-1, -2}), bnum(true)}},
      // min / max / clamp.
      {"aten.minimum.default", {T({-1, -2}), T({-2})}},
      {"aten.maximum.default", {T({-1, -2}), Tof(DType::kFloat32, {-2})}},
      {"aten.clamp.default", {T({-1, -2}), inum(-1), inum(2)}},
      {"aten.clamp.default", {T({-1, -2}), none(), num(0.5)}},
      {"aten.clamp.default", {T({-1, -2}), num(-0.5), none()}},
      {"aten.clamp.default", {T({-1, -2}), num(2.0), num(-1.0)}},
      {"aten.clamp.Tensor", {T({-1, -2}), T({-2}), T({-1, 1})}},
      {"aten.clamp.Tensor", {T({-1, -2}), T({-2}), none()}},
      {"aten.clamp.Tensor", {T({-1, -2}), none(), Tof(DType::kFloat32, {})}},
      {"aten.clamp_min.default", {T({-1, -2}), inum(0)}},
      {"aten.clamp_max.default", {T({-1, -2}), num(1.5)}},
      {"aten.clamp_min.Tensor", {T({-1, -2}), T({-2})}},
      {"aten.clamp_max.Tensor", {T({-1, -2}), T({-1, -2})}},
      {"aten.hardtanh.default", {T({-1, -2}), num(-0.5), inum(2)}},
      // Unary.
      {"aten.neg.default", {T({-1, -2})}},
      {"aten.abs.default", {T({-1, -2})}},
      {"aten.relu.default", {T({-1, -2})}},
      {"aten.sign.default", {T({-1, -2})}},
      {"aten.isnan.default", {T({-1, -2})}},
      {"aten.isinf.default", {T({-1, -2})}},
      {"aten.floor.default", {T({-1, -2})}},
      {"aten.ceil.default", {T({-1, -2})}},
      {"aten.round.default", {T({-1, -2})}},
      {"aten.round.decimals", {T({-1, -2}), inum(2)}},
      {"aten.round.decimals", {T({-1, -2}), inum(-1)}},
      {"aten.round.decimals", {T({-1, -2}), inum(0)}},
      {"aten.sqrt.default", {T({-1, -2})}},
      {"aten.reciprocal.default", {T({-1, -2})}},
      {"aten.rsqrt.default", {T({-1, -2})}},
      {"aten.exp.default", {T({-1, -2})}, false},
      {"aten.log.default", {T({-1, -2})}, false},
      {"aten.sin.default", {T({-1, -2})}, false},
      {"aten.cos.default", {T({-1, -2})}, false},
      {"aten.tanh.default", {T({-1, -2})}, false},
      {"aten.sigmoid.default", {T({-1, -2})}, false},
      {"aten.silu.default", {T({-1, -2})}, false},
      {"aten.gelu.default", {T({-1, -2}), str("none")}, false},
      {"aten.gelu.default", {T({-1, -2}), str("tanh")}, false},
      {"aten.gelu.default", {T({-1, -2}), str("fast")}, false},
      {"aten.erf.default", {T({-1, -2})}, false},
      {"aten.log1p.default", {T({-1, -2})}, false},
      {"aten.expm1.default", {T({-1, -2})}, false},
      {"aten.log2.default", {T({-1, -2})}, false},
      {"aten.sinh.default", {T({-1, -2})}, false},
      {"aten.cosh.default", {T({-1, -2})}, false},
      {"aten.asin.default", {T({-1, -2}, Values::kUnit)}, false},
      {"aten.acos.default", {T({-1, -2}, Values::kUnit)}, false},
      {"aten.atan.default", {T({-1, -2})}, false},
      {"aten.leaky_relu.default", {T({-1, -2}), num(0.2)}},
      {"aten.softplus.default", {T({-1, -2}), inum(2), num(1.0)}, false},
      {"aten.elu.default", {T({-1, -2}), num(1.5), num(0.5), inum(2)}, false},
      // Copies, casts and fills.
      {"aten.clone.default", {T({-1, -2}), none()}},
      {"aten.lift_fresh_copy.default", {T({-1, -2})}},
      {"aten.contiguous.default", {T({-1, -2}), none()}},
      {"aten.copy.default", {T({-1, -2}), Tof(DType::kFloat32, {-2}), bnum(false)}},
      {"aten.copy.default", {T({-1, -2}), Tof(DType::kInt16, {-1, -2}), bnum(false)}},
      {"aten.type_as.default", {T({-1, -2}), Tof(DType::kFloat16, {1})}},
      {"aten.to.other", {T({-1, -2}), Tof(DType::kInt8, {1}), bnum(false), bnum(true), none()}},
      {"aten.dropout.default", {T({-1, -2}), num(0.5), bnum(false)}},
      {"aten.dropout.default", {T({-1, -2}), num(0.5), bnum(true)}},
      {"aten.fill.Scalar", {T({-1, -2}), num(2.5)}},
      {"aten.fill.Scalar", {T({-1, -2}), inum(300)}},
      {"aten.fill.Scalar", {T({-1, -2}), bnum(true)}},
      {"aten.fill.Tensor", {T({-1, -2}), Tof(DType::kFloat64, {})}},
      {"aten.zeros.default", {ints({-1, -2}), dt(), none(), none(), none()}},
      {"aten.ones.default", {ints({-1, -2}), dt(), none(), none(), none()}},
      {"aten.full.default", {ints({-1, -2}), num(-2.75), dt(), none(), none(), none()}},
      {"aten.full.default", {ints({-1, -2}), inum(7), none(), none(), none(), none()}},
      {"aten.zeros_like.default", {T({-1, -2}), none(), none(), none(), none(), none()}},
      {"aten.ones_like.default",
       {T({-1, -2}), dt(DType::kFloat16), none(), none(), none(), none()}},
      {"aten.full_like.default", {T({-1, -2}), inum(-3), none(), none(), none(), none(), none()}},
      {"aten.new_zeros.default", {T({-1}), ints({-1, -2}), none(), none(), none(), none()}},
      {"aten.new_ones.default", {T({-1}), ints({-2}), dt(DType::kInt8), none(), none(), none()}},
      {"aten.new_full.default",
       {T({-1}), ints({-1, -2}), num(1.5), none(), none(), none(), none()}},
      {"aten.scalar_tensor.default", {num(2.5), dt(), none(), none(), none()}},
      {"aten.arange.default", {inum(10), dt(), none(), none(), none()}},
      {"aten.arange.start", {num(-1.5), inum(7), dt(), none(), none(), none()}},
      {"aten.arange.start_step", {inum(-3), inum(20), inum(4), dt(), none(), none(), none()}},
      {"aten.arange.start_step", {num(1.0), num(-2.0), num(-0.3), none(), none(), none(), none()}},
      {"aten.arange.start_step", {inum(5), inum(5), inum(1), none(), none(), none(), none()}},
  };
  // Casts between every pair of dtypes.
  for (DType to : kAllDTypes) {
    c.push_back({"aten._to_copy.default",
                 {T({-1, -2}), dt(to), none(), none(), none(), bnum(false), none()}});
    c.push_back({"aten.to.dtype", {T({-1, -2}), dt(to), bnum(false), bnum(false), none()}});
  }
  c.push_back({"aten.to.dtype_layout",
               {T({-1, -2}), none(), none(), none(), none(), bnum(false), bnum(true), none()}});
  c.push_back({"aten.to.device",
               {T({-1, -2}), str("cuda"), dt(DType::kBFloat16), bnum(false), bnum(false), none()}});
  // The ops defined whole in ir/ops/pointwise/: the arguments their rule takes (a broadcast
  // second operand for binaries), compared within the math functions' tolerance.
  using ir::PointwiseOpRule;
#define SPLICE_PW_CASE(id, target, schema, inplace_target, inplace_schema, rule, ...) \
  c.push_back({target,                                                                \
               PointwiseOpRule::rule == PointwiseOpRule::kFloatUnary                  \
                   ? std::vector<ArgSpec>{T({-1, -2})}                                \
                   : std::vector<ArgSpec>{T({-1, -2}), T({-2})},                      \
               false});
  SPLICE_POINTWISE_OPS(SPLICE_PW_CASE)
#undef SPLICE_PW_CASE
  return c;
}

}  // namespace splice::cuda::testing
