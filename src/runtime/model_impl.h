#pragma once
// The runtime's view of a loaded program: the Program, its Plan, the backend it runs on, and
// what was resolved once at load (a kernel per node, lookups into the plan, when each value
// dies, the weights on the backend's device), shared read-only by sessions. SessionState is
// what one session owns: buffer state, the planned buffers it reuses from call to call, and
// its execution context on the backend.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "ir/program.h"
#include "plan/plan.h"

namespace splice::detail {

struct ModelImpl {
  ir::Program program;
  plan::Plan plan;
  const backend::Backend* backend = nullptr;
  // The model's context on the backend (the CPU's thread pool), shared by its sessions.
  std::shared_ptr<backend::ModelContext> backend_model;
  // kernels[i] runs program.graph.nodes()[i]; nullptr for nodes the runtime evaluates itself
  // (symbolic scalars, asserts).
  std::vector<const backend::KernelEntry*> kernels;
  // Parameters, constants and the initial buffer values on the backend's device (for the CPU,
  // the archive's own read-only views), by FQN; uploaded once and shared by every session.
  std::map<std::string, Tensor, std::less<>> weights;
  // Indices into the signature's inputs of the user inputs, in order.
  std::vector<size_t> user_inputs;

  // Resolved from the plan by prepare().
  std::vector<int> decision_at;  // by node position: index into plan.writes, or -1
  std::unordered_map<const ir::Value*, const plan::Placement*> placement;
  std::vector<const ir::Value*> dest_value;  // by write: its producer's destination value
  // Values to drop after the node at each position (their last reader), so kernel-allocated
  // intermediates die as the plan's lifetimes say.
  std::vector<std::vector<const ir::Value*>> release_after;
  // Buffers (by FQN) that writes update in place: a session keeps writable copies of them.
  std::set<std::string, std::less<>> state_written_in_place;
  // User inputs (by name) that writes update in place: the caller's memory is written.
  std::set<std::string, std::less<>> inputs_written_in_place;
};

// The mutable state of one session.
struct SessionState {
  std::map<std::string, Tensor, std::less<>> buffers;  // buffer values by FQN (on the device)
  // Planned buffers kept between calls (by Plan::buffers index; per-call ones stay empty).
  std::vector<std::shared_ptr<Storage>> workspace;
  // The session's execution context on the model's backend.
  std::unique_ptr<backend::SessionContext> backend_session;
};

}  // namespace splice::detail
