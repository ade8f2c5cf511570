#pragma once
// PointwiseProgram: a backend-neutral description of elementwise work over one iteration space
// (the output shape), from which backends make kernels (the CUDA backend generates CUDA C++ and
// compiles it with NVRTC; the CPU backend may interpret it). A single pointwise op is a program
// of one node; a fusion planner may group a chain of pointwise ops, with several outputs (the
// two halves of a rotary embedding), into one program.
//
// Semantics (eager PyTorch, bitwise where PyTorch is):
// - An input is a strided view with a dtype, broadcast to the iteration space by zero strides.
// - A node applies one PointwiseFn to its operands (inputs, earlier nodes, constants or the
//   element's linear index). Each operand is converted to the node's compute dtype with c10's
//   conversion rules (float→int truncates, float→uint8 goes through int64, →bool is != 0,
//   16-bit floats go through float); the function computes in the compute dtype (float for
//   float16/bfloat16 results, as PyTorch's opmath); the result is converted to the node's
//   result dtype. A later node sees that rounded value, exactly as eager PyTorch sees the
//   tensor an op returned.
// - A constant is a Python number (bool, int or float) materialised in a dtype, as a 0-d tensor
//   of that dtype would hold it, and then converted like any operand. Constant values are data,
//   not structure: backends pass them at launch, so programs that differ only in constant
//   values share one compiled kernel.
// - An output stores one node's result (of the output's dtype) into a strided view, which may
//   be a slice of a larger buffer.
// Type promotion is not the program's business: whoever builds it (the op lowering) decides
// every dtype and inserts kCopy nodes where PyTorch converts operands to a common dtype.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/dtype.h"
#include "support/error.h"
#include "tensor/scalar.h"

namespace splice::ir {

// Elementwise scalar functions with PyTorch's semantics. x, y, z are the operands in order
// (after conversion to the compute dtype); "int" means the integer compute dtypes, which wrap
// around on overflow; "float" means float32 and float64. A function is defined only for the
// compute classes listed (validate() checks).
enum class PointwiseFn : uint8_t {
  // x converted to the result dtype (copy, cast, fill from a constant). bool, int, float.
  kCopy,
  // Arithmetic. add: x + y (bool: x || y); add_scaled: x + z * y (add/sub with alpha; bool:
  // x || (z && y)); sub: x - y; mul: x * y (bool: x && y). bool, int, float (sub: int, float).
  kAdd,
  kAddScaled,
  kSub,
  kMul,
  // x / y. float.
  kDiv,
  // trunc(x / y); int: C division, y == 0 records a ZeroDivisionError, x / -1 wraps. int, float.
  kDivTrunc,
  // floor(x / y) (PyTorch's div_floor: for floats computed from fmod so that x == div*y + mod);
  // int: y == 0 records a ZeroDivisionError. int, float.
  kDivFloor,
  // Python's x % y (the sign of y); int: y == 0 records a ZeroDivisionError. int, float.
  kRemainder,
  // C's fmod (the sign of x); int: y == 0 records a ZeroDivisionError. int, float.
  kFmod,
  // x ** y; int: by squaring with wraparound, negative y gives 1 for x == 1, ±1 for x == -1
  // and 0 otherwise (PyTorch's powi). int, float.
  kPow,
  // atan2(x, y). float.
  kAtan2,
  // Bitwise and/or/xor/not; on bool the logical op. bool, int.
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kBitwiseNot,
  // Comparisons in the compute dtype; the result dtype is bool. bool, int, float.
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  // Logical ops; compute in bool (operands are != 0, NaN is true). bool.
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  kLogicalNot,
  // minimum/maximum with NaN propagation from either side (bool: and/or). bool, int, float.
  kMinimum,
  kMaximum,
  // clamp(x, lo=y, hi=z): NaN when either bound is NaN, else min(max(x, lo), hi) (hi wins when
  // lo > hi; a NaN x stays NaN). int, float.
  kClamp,
  // x < y ? y : x (a NaN bound leaves x). int, float.
  kClampMin,
  // y < x ? y : x. int, float.
  kClampMax,
  // hardtanh(x, lo=y, hi=z): clamp without the NaN-bound rule. int, float.
  kHardtanh,
  // where(cond=x, y, z): y where x is true, else z; x is converted to bool, y and z to the
  // compute dtype. bool, int, float.
  kWhere,
  // -x (int wraps: INT_MIN stays). int, float.
  kNeg,
  // |x| (int wraps, unsigned unchanged; bool unchanged). bool, int, float.
  kAbs,
  // (0 < x) - (x < 0): NaN and -0.0 give +0; bool unchanged. bool, int, float.
  kSign,
  // Float math, std:: semantics. float.
  kSqrt,
  kRsqrt,  // 1 / sqrt(x)
  kExp,
  kExp2,
  kExpm1,
  kLog,
  kLog2,
  kLog10,
  kLog1p,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kTanh,
  kAsinh,
  kAcosh,
  kAtanh,
  kErf,
  kErfc,
  kErfinv,
  kSigmoid,      // 1 / (1 + exp(-x))
  kLogit,        // log(x / (1 - x)) after clamping x to [y, 1 - y] when eps y >= 0. float.
  kSilu,         // x / (1 + exp(-x))
  kGelu,         // x * 0.5 * (1 + erf(x * M_SQRT1_2))
  kGeluTanh,     // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
  kMish,         // x * tanh(log1p(exp(x)))
  kReciprocal,   // 1 / x
  kHardsigmoid,  // min(max(x + 3, 0), 6) / 6
  kHardswish,    // x * min(max(x + 3, 0), 6) / 6
  // relu: x > 0 ? x : 0 (NaN stays). int, float.
  kRelu,
  // x > 0 ? x : x * y (y: negative_slope). float.
  kLeakyRelu,
  // x <= 0 ? expm1(x * w) * (y * z) : x * z (y: alpha, z: scale, w: input_scale). float.
  kElu,
  // x * y > z ? x : log1p(exp(x * y)) / y (y: beta, z: threshold). float.
  kSoftplus,
  // x * x (int wraps). int, float.
  kSquare,
  // Rounding: floor, ceil, round half to even (nearbyint), trunc, frac = x - trunc(x). float.
  kFloor,
  kCeil,
  kRound,
  kTrunc,
  kFrac,
  // round.decimals with y = 10^decimals: nearbyint(x * y) / y; _negative: decimals < 0 with
  // y = 10^-decimals: nearbyint(x / y) * y. float.
  kRoundScaled,
  kRoundScaledNegative,
  // Classification; the result dtype is bool (integers: false, false, true). bool, int, float.
  kIsNan,
  kIsInf,
  kIsFinite,
  // nan_to_num(x, nan=y, posinf=z, neginf=w). float.
  kNanToNum,
  // lerp(start=x, end=y, weight=z): |z| < 0.5 ? x + z * (y - x) : y - (y - x) * (1 - z). float.
  kLerp,
  // addcmul(self=x, t1=y, t2=z, value=w): x + w * y * z (bool, int, float);
  // addcdiv: x + w * y / z (float).
  kAddcmul,
  kAddcdiv,
};

// Which compute dtypes a function accepts.
enum PointwiseComputeClass : uint8_t {
  kComputeBool = 1,
  kComputeInt = 2,
  kComputeFloat = 4,
};

struct PointwiseFnInfo {
  std::string_view name;  // "add", "div_trunc", ...
  int arity;              // operands, parameters included
  uint8_t classes;        // PointwiseComputeClass bits
  bool bool_result;       // the result dtype is always bool (comparisons, isnan, logical ops)
};

const PointwiseFnInfo& pointwise_fn_info(PointwiseFn fn);
// Every function, for coverage tests.
const std::vector<PointwiseFn>& all_pointwise_fns();

struct PointwiseRef {
  enum class Kind : uint8_t {
    kInput,        // program input `index`
    kNode,         // the result of node `index` (an earlier node)
    kConstant,     // constant `index`
    kLinearIndex,  // the element's row-major index in the iteration space, as int64 (arange)
  };
  Kind kind = Kind::kInput;
  int32_t index = 0;

  static PointwiseRef input(int32_t i) { return {Kind::kInput, i}; }
  static PointwiseRef node(int32_t i) { return {Kind::kNode, i}; }
  static PointwiseRef constant(int32_t i) { return {Kind::kConstant, i}; }
  static PointwiseRef linear_index() { return {Kind::kLinearIndex, 0}; }
  bool operator==(const PointwiseRef&) const = default;
};

struct PointwiseInput {
  DType dtype = DType::kFloat32;
};

struct PointwiseConstant {
  Scalar value;                   // the Python number
  DType dtype = DType::kFloat32;  // what it is materialised in before conversion to compute
};

struct PointwiseNode {
  PointwiseFn fn = PointwiseFn::kCopy;
  std::vector<PointwiseRef> operands;
  DType result = DType::kFloat32;
  DType compute = DType::kFloat32;  // never float16/bfloat16: those compute in float32
};

struct PointwiseOutput {
  int32_t node = 0;
  DType dtype = DType::kFloat32;  // equals the node's result dtype
};

struct PointwiseProgram {
  std::vector<PointwiseInput> inputs;
  std::vector<PointwiseConstant> constants;
  std::vector<PointwiseNode> nodes;
  std::vector<PointwiseOutput> outputs;

  // Builders: each returns the new entry's ref (or output index).
  PointwiseRef add_input(DType dtype);
  PointwiseRef add_constant(Scalar value, DType dtype);
  PointwiseRef add_node(PointwiseFn fn, std::vector<PointwiseRef> operands, DType result,
                        DType compute);
  int32_t add_output(PointwiseRef node);
};

// The dtype an operand has before conversion (input/constant dtype, node result, int64 for
// the linear index).
DType operand_dtype(const PointwiseProgram& p, const PointwiseRef& ref);

// PyTorch's opmath dtype: float32 for float16/bfloat16, the dtype itself otherwise.
DType opmath_dtype(DType dtype);

// Checks every reference, arity, compute class and dtype rule; errors (kInternal: a program is
// splice's own construction) name the node and what is wrong.
Result<void> validate(const PointwiseProgram& p);

// A readable one-line-per-node form ("n0 = add(in0, c0) : f16 via f32"), for tests and dumps.
std::string to_string(const PointwiseProgram& p);

}  // namespace splice::ir
