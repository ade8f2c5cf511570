#pragma once
// Binding a call's tensors to the graph inputs: user inputs by name, parameters and constants
// from the model's weights (on its backend's device), buffers from the session state. Every symbol
// that a tensor dim defines is bound from the actual sizes and checked against its range; every
// other dim is checked against its (constant or symbolic) expected size.

#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/program.h"

namespace splice::runtime {

using TensorMap = std::map<std::string, Tensor, std::less<>>;

// The tensor for each graph input value. Errors (kBadInput / kOutOfRange) name the input,
// what the program expects and what was given. `load_checked` (per signature input, may be
// empty) holds the weights checked once at load (check_weights_at_load): those are bound as they
// are.
Result<std::vector<std::pair<const ir::Value*, Tensor>>> bind_inputs(
    const ir::Program& program, const TensorMap& user_inputs, const TensorMap& weights,
    const TensorMap& buffers, SymBindings& symbols, std::span<const Tensor> load_checked = {});

// Per signature input: the weight of a parameter or constant input whose dtype, rank and sizes
// (all constants) match the program, else an empty tensor (ModelImpl::load_checked_weights).
std::vector<Tensor> check_weights_at_load(const ir::Program& program, const TensorMap& weights);

// Evaluates every shape check of the program (Program::shape_checks) whose symbols are all
// bound and that `done` does not mark yet, marking it; a false one is a kBadArchive error with
// its message and the symbols' values. Called after binding the inputs and again after each
// step that may bind a data-dependent symbol, so no kernel runs on sizes a check refutes.
Result<void> run_shape_checks(const ir::Program& program, const SymBindings& symbols,
                              std::vector<char>& done);

// "f32[s0, 8] with s0 in [2, 64]": what an input must look like, for messages and inspect.
std::string describe_expected(const ir::Program& program, const ir::Value& value);

}  // namespace splice::runtime
