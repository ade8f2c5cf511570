#pragma once
// Executes a planned program once: binds inputs and symbols, runs the plan's steps in order on
// the CPU backend — kernels storing into planned buffers or straight into a write's
// destination, writes done in place or as a copy as the plan decided — and collects user
// outputs, mutated inputs and new buffer values. Nothing the program does not mutate is ever
// written: weights and non-mutated inputs are read-only views.

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

// What one call did, step by step: the proof that a plan moves the bytes it says.
struct StepRecord {
  std::string node;                  // the node (or, for a base copy, the write) it ran for
  std::string kind;                  // "kernel", "copy" (a copy the plan added) or "write"
  int64_t bytes = 0;                 // bytes it wrote
  const Storage* storage = nullptr;  // the storage it wrote into
};
struct CallStats {
  std::vector<StepRecord> steps;
  int64_t launches() const { return static_cast<int64_t>(steps.size()); }
  int64_t bytes_written() const;
  int64_t copy_bytes() const;  // bytes written by "copy" steps
  int64_t bytes_into(const Storage* storage) const;
};

// A 0-d tensor holding a Python scalar: int → int64, float → float64, bool → bool.
Tensor scalar_tensor(const Scalar& s);

// Resolves a kernel for every node (an error lists every op without one) and the plan's
// lookups. Without a plan, one is built in `mode`.
Result<detail::ModelImpl> prepare(ir::Program program, int threads,
                                  std::optional<plan::Plan> plan = std::nullopt,
                                  plan::PlanMode mode = plan::PlanMode::kPlanned);

// Runs one call. `user_inputs` by user input name (mutated ones may be written in place),
// `state` is the session's. `stats`, when given, receives a record of every step.
Result<CallOutputs> execute(const detail::ModelImpl& model, const TensorMap& user_inputs,
                            detail::SessionState& state, CallStats* stats = nullptr);

}  // namespace splice::runtime
