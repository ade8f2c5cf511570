// The table of pointwise functions (name, arity, compute classes), PointwiseProgram's builders,
// its validation and its text form.
#include "ir/pointwise.h"

#include <fmt/format.h>

#include <array>

namespace splice::ir {

namespace {

constexpr uint8_t B = kComputeBool, I = kComputeInt, F = kComputeFloat;

struct Row {
  PointwiseFn fn;
  PointwiseFnInfo info;
};

// One row per function, in enum order (checked at first use).
constexpr Row kRows[] = {
    {PointwiseFn::kCopy, {"copy", 1, B | I | F, false}},
    {PointwiseFn::kAdd, {"add", 2, B | I | F, false}},
    {PointwiseFn::kAddScaled, {"add_scaled", 3, B | I | F, false}},
    {PointwiseFn::kSub, {"sub", 2, I | F, false}},
    {PointwiseFn::kMul, {"mul", 2, B | I | F, false}},
    {PointwiseFn::kDiv, {"div", 2, F, false}},
    {PointwiseFn::kDivTrunc, {"div_trunc", 2, I | F, false}},
    {PointwiseFn::kDivFloor, {"div_floor", 2, I | F, false}},
    {PointwiseFn::kRemainder, {"remainder", 2, I | F, false}},
    {PointwiseFn::kFmod, {"fmod", 2, I | F, false}},
    {PointwiseFn::kPow, {"pow", 2, I | F, false}},
    {PointwiseFn::kAtan2, {"atan2", 2, F, false}},
    {PointwiseFn::kBitwiseAnd, {"bitwise_and", 2, B | I, false}},
    {PointwiseFn::kBitwiseOr, {"bitwise_or", 2, B | I, false}},
    {PointwiseFn::kBitwiseXor, {"bitwise_xor", 2, B | I, false}},
    {PointwiseFn::kBitwiseNot, {"bitwise_not", 1, B | I, false}},
    {PointwiseFn::kEq, {"eq", 2, B | I | F, true}},
    {PointwiseFn::kNe, {"ne", 2, B | I | F, true}},
    {PointwiseFn::kLt, {"lt", 2, B | I | F, true}},
    {PointwiseFn::kLe, {"le", 2, B | I | F, true}},
    {PointwiseFn::kGt, {"gt", 2, B | I | F, true}},
    {PointwiseFn::kGe, {"ge", 2, B | I | F, true}},
    {PointwiseFn::kLogicalAnd, {"logical_and", 2, B, true}},
    {PointwiseFn::kLogicalOr, {"logical_or", 2, B, true}},
    {PointwiseFn::kLogicalXor, {"logical_xor", 2, B, true}},
    {PointwiseFn::kLogicalNot, {"logical_not", 1, B, true}},
    {PointwiseFn::kMinimum, {"minimum", 2, B | I | F, false}},
    {PointwiseFn::kMaximum, {"maximum", 2, B | I | F, false}},
    {PointwiseFn::kClamp, {"clamp", 3, I | F, false}},
    {PointwiseFn::kClampMin, {"clamp_min", 2, I | F, false}},
    {PointwiseFn::kClampMax, {"clamp_max", 2, I | F, false}},
    {PointwiseFn::kHardtanh, {"hardtanh", 3, I | F, false}},
    {PointwiseFn::kWhere, {"where", 3, B | I | F, false}},
    {PointwiseFn::kNeg, {"neg", 1, I | F, false}},
    {PointwiseFn::kAbs, {"abs", 1, B | I | F, false}},
    {PointwiseFn::kSign, {"sign", 1, B | I | F, false}},
    {PointwiseFn::kSqrt, {"sqrt", 1, F, false}},
    {PointwiseFn::kRsqrt, {"rsqrt", 1, F, false}},
    {PointwiseFn::kExp, {"exp", 1, F, false}},
    {PointwiseFn::kExp2, {"exp2", 1, F, false}},
    {PointwiseFn::kExpm1, {"expm1", 1, F, false}},
    {PointwiseFn::kLog, {"log", 1, F, false}},
    {PointwiseFn::kLog2, {"log2", 1, F, false}},
    {PointwiseFn::kLog10, {"log10", 1, F, false}},
    {PointwiseFn::kLog1p, {"log1p", 1, F, false}},
    {PointwiseFn::kSin, {"sin", 1, F, false}},
    {PointwiseFn::kCos, {"cos", 1, F, false}},
    {PointwiseFn::kTan, {"tan", 1, F, false}},
    {PointwiseFn::kAsin, {"asin", 1, F, false}},
    {PointwiseFn::kAcos, {"acos", 1, F, false}},
    {PointwiseFn::kAtan, {"atan", 1, F, false}},
    {PointwiseFn::kSinh, {"sinh", 1, F, false}},
    {PointwiseFn::kCosh, {"cosh", 1, F, false}},
    {PointwiseFn::kTanh, {"tanh", 1, F, false}},
    {PointwiseFn::kAsinh, {"asinh", 1, F, false}},
    {PointwiseFn::kAcosh, {"acosh", 1, F, false}},
    {PointwiseFn::kAtanh, {"atanh", 1, F, false}},
    {PointwiseFn::kErf, {"erf", 1, F, false}},
    {PointwiseFn::kErfc, {"erfc", 1, F, false}},
    {PointwiseFn::kErfinv, {"erfinv", 1, F, false}},
    {PointwiseFn::kSigmoid, {"sigmoid", 1, F, false}},
    {PointwiseFn::kLogit, {"logit", 2, F, false}},
    {PointwiseFn::kSilu, {"silu", 1, F, false}},
    {PointwiseFn::kGelu, {"gelu", 1, F, false}},
    {PointwiseFn::kGeluTanh, {"gelu_tanh", 1, F, false}},
    {PointwiseFn::kMish, {"mish", 1, F, false}},
    {PointwiseFn::kReciprocal, {"reciprocal", 1, F, false}},
    {PointwiseFn::kHardsigmoid, {"hardsigmoid", 1, F, false}},
    {PointwiseFn::kHardswish, {"hardswish", 1, F, false}},
    {PointwiseFn::kRelu, {"relu", 1, I | F, false}},
    {PointwiseFn::kLeakyRelu, {"leaky_relu", 2, F, false}},
    {PointwiseFn::kElu, {"elu", 4, F, false}},
    {PointwiseFn::kSoftplus, {"softplus", 3, F, false}},
    {PointwiseFn::kSquare, {"square", 1, I | F, false}},
    {PointwiseFn::kFloor, {"floor", 1, F, false}},
    {PointwiseFn::kCeil, {"ceil", 1, F, false}},
    {PointwiseFn::kRound, {"round", 1, F, false}},
    {PointwiseFn::kTrunc, {"trunc", 1, F, false}},
    {PointwiseFn::kFrac, {"frac", 1, F, false}},
    {PointwiseFn::kRoundScaled, {"round_scaled", 2, F, false}},
    {PointwiseFn::kRoundScaledNegative, {"round_scaled_negative", 2, F, false}},
    {PointwiseFn::kIsNan, {"isnan", 1, B | I | F, true}},
    {PointwiseFn::kIsInf, {"isinf", 1, B | I | F, true}},
    {PointwiseFn::kIsFinite, {"isfinite", 1, B | I | F, true}},
    {PointwiseFn::kNanToNum, {"nan_to_num", 4, F, false}},
    {PointwiseFn::kLerp, {"lerp", 3, F, false}},
    {PointwiseFn::kAddcmul, {"addcmul", 4, I | F, false}},
    {PointwiseFn::kAddcdiv, {"addcdiv", 4, F, false}},
};

constexpr size_t kFnCount = sizeof(kRows) / sizeof(kRows[0]);
static_assert(static_cast<size_t>(PointwiseFn::kAddcdiv) + 1 == kFnCount,
              "every PointwiseFn needs a row in kRows");

constexpr bool rows_in_order() {
  for (size_t i = 0; i < kFnCount; ++i)
    if (static_cast<size_t>(kRows[i].fn) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kRows must list the functions in enum order");

uint8_t compute_class(DType d) {
  if (d == DType::kBool) return kComputeBool;
  if (is_integral(d)) return kComputeInt;
  return kComputeFloat;
}

std::string ref_string(const PointwiseRef& r) {
  switch (r.kind) {
    case PointwiseRef::Kind::kInput:
      return fmt::format("in{}", r.index);
    case PointwiseRef::Kind::kNode:
      return fmt::format("n{}", r.index);
    case PointwiseRef::Kind::kConstant:
      return fmt::format("c{}", r.index);
    case PointwiseRef::Kind::kLinearIndex:
      return "linear_index";
  }
  return "?";
}

}  // namespace

const PointwiseFnInfo& pointwise_fn_info(PointwiseFn fn) {
  return kRows[static_cast<size_t>(fn)].info;
}

const std::vector<PointwiseFn>& all_pointwise_fns() {
  static const std::vector<PointwiseFn> fns = [] {
    std::vector<PointwiseFn> v;
    for (const Row& r : kRows) v.push_back(r.fn);
    return v;
  }();
  return fns;
}

PointwiseRef PointwiseProgram::add_input(DType dtype) {
  inputs.push_back({dtype});
  return PointwiseRef::input(static_cast<int32_t>(inputs.size() - 1));
}

PointwiseRef PointwiseProgram::add_constant(Scalar value, DType dtype) {
  constants.push_back({value, dtype});
  return PointwiseRef::constant(static_cast<int32_t>(constants.size() - 1));
}

PointwiseRef PointwiseProgram::add_node(PointwiseFn fn, std::vector<PointwiseRef> operands,
                                        DType result, DType compute) {
  nodes.push_back({fn, std::move(operands), result, compute});
  return PointwiseRef::node(static_cast<int32_t>(nodes.size() - 1));
}

int32_t PointwiseProgram::add_output(PointwiseRef node) {
  outputs.push_back({node.index, nodes[node.index].result});
  return static_cast<int32_t>(outputs.size() - 1);
}

DType operand_dtype(const PointwiseProgram& p, const PointwiseRef& ref) {
  switch (ref.kind) {
    case PointwiseRef::Kind::kInput:
      return p.inputs[ref.index].dtype;
    case PointwiseRef::Kind::kNode:
      return p.nodes[ref.index].result;
    case PointwiseRef::Kind::kConstant:
      return p.constants[ref.index].dtype;
    case PointwiseRef::Kind::kLinearIndex:
      return DType::kInt64;
  }
  return DType::kInt64;
}

DType opmath_dtype(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? DType::kFloat32 : dtype;
}

Result<void> validate(const PointwiseProgram& p) {
  auto bad = [](size_t node, std::string what) {
    return make_error(ErrorKind::kInternal, "pointwise program node n{}: {}", node, what);
  };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const PointwiseNode& n = p.nodes[i];
    if (static_cast<size_t>(n.fn) >= kFnCount) return bad(i, "unknown function");
    const PointwiseFnInfo& info = pointwise_fn_info(n.fn);
    if (static_cast<int>(n.operands.size()) != info.arity) {
      return bad(
          i, fmt::format("{} takes {} operands, got {}", info.name, info.arity, n.operands.size()));
    }
    for (const PointwiseRef& r : n.operands) {
      const size_t limit = r.kind == PointwiseRef::Kind::kInput      ? p.inputs.size()
                           : r.kind == PointwiseRef::Kind::kNode     ? i
                           : r.kind == PointwiseRef::Kind::kConstant ? p.constants.size()
                                                                     : 1;
      if (r.index < 0 || static_cast<size_t>(r.index) >= limit) {
        return bad(i, fmt::format("operand {} does not name an earlier node, an input or a "
                                  "constant",
                                  ref_string(r)));
      }
    }
    if (n.compute == DType::kFloat16 || n.compute == DType::kBFloat16) {
      return bad(i, fmt::format("{} computes in {}; 16-bit floats compute in float32", info.name,
                                dtype_name(n.compute)));
    }
    if ((info.classes & compute_class(n.compute)) == 0) {
      return bad(i,
                 fmt::format("{} is not defined for {} compute", info.name, dtype_name(n.compute)));
    }
    if (info.bool_result && n.result != DType::kBool) {
      return bad(i, fmt::format("{} gives bool, not {}", info.name, dtype_name(n.result)));
    }
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const PointwiseOutput& o = p.outputs[k];
    if (o.node < 0 || static_cast<size_t>(o.node) >= p.nodes.size()) {
      return make_error(ErrorKind::kInternal, "pointwise program output {} names node n{} of {}", k,
                        o.node, p.nodes.size());
    }
    if (p.nodes[o.node].result != o.dtype) {
      return make_error(ErrorKind::kInternal,
                        "pointwise program output {} is {} but node n{} gives {}", k,
                        dtype_name(o.dtype), o.node, dtype_name(p.nodes[o.node].result));
    }
  }
  if (p.outputs.empty()) {
    return make_error(ErrorKind::kInternal, "pointwise program has no output");
  }
  return ok_result();
}

std::string to_string(const PointwiseProgram& p) {
  std::string s;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    s += fmt::format("in{} : {}\n", i, dtype_name(p.inputs[i].dtype));
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Scalar& v = p.constants[i].value;
    const std::string value = v.is_double() ? fmt::format("{}", v.to_double())
                              : v.is_bool() ? (v.to_bool() ? "True" : "False")
                                            : fmt::format("{}", v.to_int());
    s += fmt::format("c{} = {} : {}\n", i, value, dtype_name(p.constants[i].dtype));
  }
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const PointwiseNode& n = p.nodes[i];
    std::string args;
    for (const PointwiseRef& r : n.operands) args += (args.empty() ? "" : ", ") + ref_string(r);
    s += fmt::format("n{} = {}({}) : {} via {}\n", i, pointwise_fn_info(n.fn).name, args,
                     dtype_name(n.result), dtype_name(n.compute));
  }
  for (size_t k = 0; k < p.outputs.size(); ++k)
    s += fmt::format("out{} = n{} : {}\n", k, p.outputs[k].node, dtype_name(p.outputs[k].dtype));
  return s;
}

}  // namespace splice::ir
