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

#include "ir/ops/pointwise/functions.h"
#include "support/dtype.h"
#include "support/error.h"
#include "tensor/scalar.h"

namespace splice::ir {

// The elementwise functions (PointwiseFn, kName for each struct Name) with PyTorch's semantics
// are defined, each once, by their formulas in ir/ops/pointwise/ (functions.h lists the
// families and says how a function is written); their compute classes (PointwiseComputeClass)
// are the classes a formula is written for.

struct PointwiseFnInfo {
  std::string_view name;  // "add", "div_trunc", ...
  int arity;              // operands, parameters included
  uint8_t classes;        // PointwiseComputeClass bits
  bool bool_result;       // the result dtype is always bool (comparisons, isnan, logical ops)
  bool bool_condition;    // operand 0 is converted to bool, not the compute dtype (where)
  uint8_t kernel_only;    // classes only a single-op kernel computes (never a group)
  uint8_t device_only;    // classes the host (the CPU interpreter) cannot compute
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
