#pragma once
// Executes a prepared program once: binds inputs and symbols, runs every node in program
// order on the CPU backend, and collects user outputs, mutated inputs and new buffer values.
// Kernels are functional (they never write their inputs), so no input, weight or buffer is
// modified by running; mutations come back as new values that the session stores.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model_impl.h"
#include "runtime/scalar_ops.h"

namespace splice::runtime {

using TensorMap = std::map<std::string, Tensor, std::less<>>;

struct CallOutputs {
  // One entry per user output; nullopt where the program returns None.
  std::vector<std::optional<Tensor>> user_outputs;
  TensorMap mutated_inputs;  // by user input name
  TensorMap new_buffers;     // by buffer FQN, for BUFFER_MUTATION outputs
};

// A 0-d tensor holding a Python scalar: int → int64, float → float64, bool → bool.
Tensor scalar_tensor(const Scalar& s);

// Resolves a kernel for every node; an error lists every op without one.
Result<detail::ModelImpl> prepare(ir::Program program, int threads);

// Runs one call. `user_inputs` by user input name, `buffers` by FQN (the session's state).
Result<CallOutputs> execute(const detail::ModelImpl& model, const TensorMap& user_inputs,
                            const TensorMap& buffers);

}  // namespace splice::runtime
