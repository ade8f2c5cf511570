#pragma once
// Shape and dtype rules: for every op of the op table, what its outputs are given its
// arguments' types, over symbolic sizes, following PyTorch's own meta functions and reference
// decompositions (torch/_meta_registrations.py, torch/_refs, torch/_prims_common): broadcasting,
// type promotion (elementwise_dtypes with its promotion kinds), reductions with dim/keepdim,
// views, the matmul family, attention, indexing, factories. Sizes only a run can tell (a
// bool-mask index, repeat_interleave without output_size, .item()) are fresh unbacked symbols
// from the ShapeEnv. The checks PyTorch makes on sizes (broadcastable dims, a write's src fitting
// its slice) are ShapeEnv requirements: decided from the ranges, or kept for the runtime.
//
// Uses: the load-time type check compares every recorded output with its rule (type_check.h);
// passes type the nodes they create with infer_outputs (passes/pass_util.h). The rules live in
// shape_rules_<family>.cc, merged into one table keyed by OpId (shape_rules.cc).

#include <optional>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_env.h"

namespace splice::ir {

// What a rule says about one output of a node (a Tensor[] return counts one per element).
struct OutputType {
  ValueKind kind = ValueKind::kTensor;
  TensorType tensor;            // kTensor
  std::optional<SymExpr> expr;  // SymInt/SymBool: the value, when the op determines it
  // The same output on another device may have this dtype instead (native_layer_norm's mean
  // and rstd are the input's dtype on CPU, float32 for half inputs on CUDA); the archive does
  // not say where the program will run, so either is accepted.
  std::optional<DType> other_device_dtype;
  // False for an output whose type splice cannot represent (CUDA flash attention's uint64
  // seeds) or that PyTorch returns as None; nothing is checked for it.
  bool known = true;

  static OutputType of(TensorType type);
  static OutputType scalar(ValueKind kind, std::optional<SymExpr> expr = std::nullopt);
  static OutputType unknown();
};

// The outputs of `node` in its op's return order, one per entry of node.outputs(). Errors
// (kBadArchive) are the op's own checks failing provably, naming the node and the numbers.
// The node's arguments must fit its schema (the verifier's structural checks).
Result<std::vector<OutputType>> infer_outputs(const Node& node, ShapeEnv& env);

// The tensor types of the node's outputs (the brief form; a non-tensor output is an error).
Result<std::vector<TensorType>> infer_types(const Node& node, ShapeEnv& env);

// Whether `op` has a rule (every op of the op table must; a test says so).
bool has_shape_rule(OpId op);

}  // namespace splice::ir
