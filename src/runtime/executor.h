#pragma once
// Executes a planned program once: binds inputs and symbols, runs the plan's steps in order on
// the model's backend — kernels storing into planned buffers or straight into a write's
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
  int64_t copy_bytes() const;  // bytes written by "copy" steps
  int64_t bytes_into(const Storage* storage) const;
};

// Called around each plan step of a call (Session::profile): before(s) just before step s runs
// and after(s) just after it. A call with hooks runs step by step, never as a recorded replay.
struct StepHooks {
  virtual ~StepHooks() = default;
  virtual Result<void> before(size_t step) = 0;
  virtual Result<void> after(size_t step) = 0;
};

// A 0-d host tensor holding a Python scalar: int → int64, float → float64, bool → bool.
Result<Tensor> scalar_tensor(const Scalar& s);

struct PrepareOptions {
  std::string device = "cpu";                      // the backend to run on
  int threads = 1;                                 // host threads for its kernels (>= 1)
  plan::PlanMode mode = plan::PlanMode::kPlanned;  // when no plan is given
};

// Resolves a kernel of the backend for every node (an error lists every op without one), the
// plan's lookups, the model's context on the backend and its weights there. Without a plan,
// one is built for the backend in `options.mode`; a given plan must be for that backend.
Result<detail::ModelImpl> prepare(ir::Program program, const PrepareOptions& options,
                                  std::optional<plan::Plan> plan = std::nullopt);

// A session's state: its context on the model's backend and the archive's buffer values.
Result<detail::SessionState> open_session_state(const detail::ModelImpl& model);
// Restores every buffer of `state` to the archive's value (opening its backend context first
// if it has none).
Result<void> reset_session_state(const detail::ModelImpl& model, detail::SessionState& state);

// Runs one call. `user_inputs` by user input name (mutated ones may be written in place),
// `state` is the session's (from open_session_state). `stats`, when given, receives a record of
// every step; `hooks`, when given, are called around every step.
Result<CallOutputs> execute(const detail::ModelImpl& model, const TensorMap& user_inputs,
                            detail::SessionState& state, CallStats* stats = nullptr,
                            StepHooks* hooks = nullptr);

}  // namespace splice::runtime
