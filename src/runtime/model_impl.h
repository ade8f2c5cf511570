#pragma once
// The runtime's view of a loaded program: the Program plus what was resolved once at load
// (a kernel per node, the user inputs in signature order), shared read-only by sessions.

#include <map>
#include <string>
#include <vector>

#include "backends/cpu/registry.h"
#include "ir/program.h"

namespace splice::detail {

struct ModelImpl {
  ir::Program program;
  // kernels[i] runs program.graph.nodes()[i]; nullptr for nodes the runtime evaluates itself
  // (symbolic scalars, asserts).
  std::vector<cpu::KernelFn> kernels;
  // Indices into the signature's inputs of the user inputs, in order.
  std::vector<size_t> user_inputs;
  int threads = 0;
};

// The mutable state of one session: buffer values by FQN.
struct SessionState {
  std::map<std::string, Tensor, std::less<>> buffers;
};

}  // namespace splice::detail
