#pragma once
// Program: what the frontend produces and every later stage consumes — the graph, its
// signature (what each graph input and output means), the ranges of its symbols and the
// weights (parameters, buffers and constants by fully qualified name).

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace splice::ir {

enum class InputKind {
  kUserInput,
  kParameter,
  kBuffer,
  kTensorConstant,
  kConstantInput,  // a non-tensor value fixed at export
  kCustomObj,
  kToken,
};

struct InputSpec {
  InputKind kind = InputKind::kUserInput;
  Value* value = nullptr;  // the graph input (null for a constant input)
  std::string target;      // FQN of the parameter/buffer/constant; name of a constant input
  bool persistent = true;  // buffers only
  Arg constant;            // kConstantInput only: its value
};

enum class OutputKind {
  kUserOutput,
  kBufferMutation,
  kUserInputMutation,
  kParameterMutation,
  kLossOutput,
  kToken,
};

struct OutputSpec {
  OutputKind kind = OutputKind::kUserOutput;
  std::string target;  // buffer FQN, mutated user input name or parameter FQN
};

// input_specs[i] describes graph.inputs()[i] (constant inputs have a null graph input);
// output_specs[i] describes graph.outputs()[i].
struct Signature {
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
};

const char* input_kind_name(InputKind kind);
const char* output_kind_name(OutputKind kind);

// A condition on symbols that the load-time type check could not decide from the ranges (a
// recorded size `s1` where the op gives 8, a broadcast of `s0` against `s1`): the runtime checks
// it as soon as its symbols are bound, before any kernel reads the values it is about, and
// reports `message` (naming the node, what was recorded and what the op gives) if it is false.
struct ShapeCheck {
  SymExpr condition;  // boolean
  std::string message;
  bool operator==(const ShapeCheck&) const = default;
};

// A computation the pass share_identical_computations found repeated: the node kept and the
// nodes it replaced (by name), for the plan report.
struct SharedComputation {
  std::string node;
  std::string target;  // "aten.linear.default"
  std::vector<std::string> duplicates;
  bool operator==(const SharedComputation&) const = default;
};

// A group of matrix products over one input that the pass concat_sibling_matmuls made one
// product over their weights concatenated (q/k/v, gate/up), for the plan report: the new node,
// the new weight's target, and each original product with the columns of the result it became.
struct ConcatenatedMatmul {
  struct Part {
    std::string node;    // the original product
    std::string target;  // its op, "aten.linear.default"
    int64_t start = 0;   // its columns [start, end) of the concatenated result
    int64_t end = 0;
    bool operator==(const Part&) const = default;
  };
  std::string node;
  std::string target;
  std::string weight;  // "concat(layers.0.q.weight,layers.0.k.weight,layers.0.v.weight)"
  std::vector<Part> parts;
  bool operator==(const ConcatenatedMatmul&) const = default;
};

struct Program {
  Graph graph;
  Signature signature;
  std::map<std::string, SymRange, std::less<>> ranges;  // by symbol name
  // Example values of symbols recorded at export (hints), used for reporting sizes.
  std::map<std::string, int64_t, std::less<>> hints;
  std::map<std::string, Tensor, std::less<>> weights;  // by FQN
  // Set by the loader (ir::check_types); printed in the text IR's `checks { ... }` block.
  std::vector<ShapeCheck> shape_checks;
  // Set by share_identical_computations; not part of the text IR (the plan carries it).
  std::vector<SharedComputation> shared;
  // Set by concat_sibling_matmuls; like `shared`, carried by the plan.
  std::vector<ConcatenatedMatmul> concatenated;
};

}  // namespace splice::ir
