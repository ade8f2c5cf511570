#pragma once
// The runtime's view of a loaded program: the Program, its Plan, the backend it runs on, and
// what was resolved once at load (a kernel per node, lookups into the plan, when each value
// dies, the weights on the backend's device), shared read-only by sessions. SessionState is
// what one session owns: buffer state, the planned buffers it reuses from call to call, and
// its execution context on the backend.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "ir/program.h"
#include "plan/plan.h"
#include "runtime/bound_shapes.h"
#include "runtime/device_positions.h"

namespace splice::runtime {
struct CallRecordings;  // runtime/recorded_calls.h
struct StepHooks;       // runtime/executor.h
}  // namespace splice::runtime

namespace splice::detail {

// Where one kernel argument (or one element of a list argument) comes from at run time: a
// value's slot. Resolved at load, so a call patches the argument in place without looking
// anything up by name or hashing.
struct ArgRef {
  enum class Kind : uint8_t {
    kTensor,         // args[arg] is the slot's tensor
    kScalar,         // args[arg] is the slot's scalar (bool, int or float)
    kIntElem,        // args[arg] is an int[]; element `elem` is the slot's int
    kTensorElem,     // args[arg] is a Tensor[]; element `elem` is the slot's tensor
    kOptTensorElem,  // args[arg] is a Tensor?[]; element `elem` is the slot's tensor
  };
  Kind kind = Kind::kTensor;
  uint32_t arg = 0;
  uint32_t elem = 0;
  int32_t slot = -1;
};

// What running one node needs, resolved at load (runtime/executor.cc, prepare).
struct NodeExec {
  // The node's kernel arguments in schema order, constants filled; the entries `refs` name
  // hold placeholders of the right kind that each call overwrites.
  std::vector<backend::KernelArg> args;
  std::vector<ArgRef> refs;
  std::vector<int32_t> outputs;  // slot per output; -1 where the output is unused (None)
  const plan::Placement* placement = nullptr;  // of output 0, when planned
  // A view whose result's geometry follows from its one tensor argument's alone (every other
  // argument a constant, one output, no placement): a session reuses the view it made on an
  // earlier call instead of running the kernel (ViewMemo).
  bool memoised_view = false;
};

// The view a memoised-view node (NodeExec::memoised_view) made on a session's last call that
// ran its kernel: the input's geometry and the output's. An input of equal dtype, sizes,
// strides and offset gets the same output geometry over its own storage, without the kernel's
// argument checks and stride arithmetic (a few hundred nanoseconds a node on small programs).
struct ViewMemo {
  bool valid = false;
  DType dtype = DType::kFloat32;  // of input and output alike
  Shape in_sizes, in_strides;
  int64_t in_offset = 0;
  Shape out_sizes, out_strides;
  int64_t out_offset = 0;

  bool matches(const Tensor& in) const {
    return valid && in.dtype() == dtype && in.offset() == in_offset && in.sizes() == in_sizes &&
           in.strides() == in_strides;
  }
};

// A pointwise group's step, resolved at load: its program (plan/fusion.h, group_program) and
// where its tensors live.
struct GroupExec {
  ir::PointwiseProgram program;
  std::vector<int32_t> inputs;                     // slot per program input
  std::vector<int32_t> outputs;                    // slot per program output
  std::vector<const ir::Value*> output_values;     // per program output
  std::vector<int> output_nodes;                   // per program output: its member's position
  std::vector<const plan::Placement*> placements;  // per program output, nullptr if none
  std::vector<SymExpr> sizes;                      // the iteration space
  std::optional<Shape> static_sizes;               // when every size is a constant
  std::string label;                               // "group 0 (mul .. add)", for errors
  // An RMSNorm group (plan::GroupKind::kRmsNorm): inputs are x, then the residual and the
  // weight when it has them; outputs[out] is the norm, outputs[sum] the residual sum (-1: not
  // stored). program is empty.
  struct Norm {
    bool residual = false;
    bool weight = false;
    int out = 0;
    int sum = -1;
    DType stat = DType::kFloat32;
    DType cast = DType::kFloat32;
    double eps = 0;
  };
  std::optional<Norm> norm;
  // A GEMV-epilogue group (plan::GroupKind::kGemvEpilogue): the product's operands as slots
  // (c: -1 without one), and per program input the product column it reads (-1: the input's
  // slot in `inputs`; a product column's slot there is -1).
  struct Gemv {
    ir::OpId op = ir::OpId::linear;  // linear, mm or addmm
    int32_t a = -1, b = -1, c = -1;
    DType dtype = DType::kFloat32;
    std::vector<int64_t> columns;
    // An RMSNorm prologue (a is then the norm's input): its weight's slot (-1: none).
    struct Norm {
      int32_t weight = -1;
      DType stat = DType::kFloat32;
      DType cast = DType::kFloat32;
      double eps = 0;
    };
    std::optional<Norm> norm;
  };
  std::optional<Gemv> gemv;
};

// A tensor its kernel allocates during a call (runtime/memory_check.h): the value's slot, the
// plan step that makes it and the last step it is alive in (the last step when it leaves the
// call).
struct AllocatedValue {
  int32_t slot = -1;
  int32_t first_step = 0;
  int32_t last_step = 0;
};

struct ModelImpl {
  ir::Program program;
  plan::Plan plan;
  const backend::Backend* backend = nullptr;
  // Whether sessions record their calls and replay them (CUDA graphs; runtime/recorded_calls.h)
  // when the backend can.
  bool record_calls = false;
  // The model's context on the backend (the CPU's thread pool), shared by its sessions.
  std::shared_ptr<backend::ModelContext> backend_model;
  // kernels[i] runs program.graph.nodes()[i]; nullptr for nodes the runtime evaluates itself
  // (symbolic scalars, asserts).
  std::vector<const backend::KernelEntry*> kernels;
  // Parameters, constants and the initial buffer values on the backend's device (for the CPU,
  // the archive's own read-only views), by FQN; uploaded once and shared by every session.
  std::map<std::string, Tensor, std::less<>> weights;
  // Per signature input: the parameter or constant whose dtype and constant sizes were checked
  // against the program when the model was prepared, bound each call without checks (an empty
  // tensor for every other input, and for a weight a call must check: one of symbolic sizes, or
  // one that does not match, whose error the call reports).
  std::vector<Tensor> load_checked_weights;
  // Indices into the signature's inputs of the user inputs, in order.
  std::vector<size_t> user_inputs;

  // Resolved from the plan by prepare().
  std::vector<int> decision_at;  // by node position: index into plan.writes, or -1
  std::unordered_map<const ir::Value*, const plan::Placement*> placement;
  std::vector<const ir::Value*> dest_value;  // by write: its producer's destination value
  // Values to drop after each plan step (their last reader's), so kernel-allocated
  // intermediates die as the plan's lifetimes say.
  std::vector<std::vector<const ir::Value*>> release_after;
  // The same as slots, by plan step.
  std::vector<std::vector<int32_t>> step_release;
  // By plan group: what running it needs.
  std::vector<GroupExec> groups;
  // Buffers (by FQN) that writes update in place: a session keeps writable copies of them.
  std::set<std::string, std::less<>> state_written_in_place;
  // User inputs (by name) that writes update in place: the caller's memory is written.
  std::set<std::string, std::less<>> inputs_written_in_place;

  // The run-time slot of every value of the graph (Frame::slots), and per slot the value and
  // its static shape when every dim is constant (known at load).
  std::unordered_map<const ir::Value*, int> slot_of;
  std::vector<const ir::Value*> slot_value;
  std::vector<std::optional<StaticShape>> static_shape;
  // Per node position: what running it needs, and whether the runtime evaluates it itself
  // (OpSchema::runs_on_host, asked once here rather than at every step of every call).
  std::vector<NodeExec> exec;
  std::vector<char> host_node;
  // Per plan buffer: its byte count when constant.
  std::vector<std::optional<int64_t>> static_buffer_bytes;
  // The .item() symbols that only say where windows start, which recorded calls read on the
  // device (runtime/device_positions.h).
  runtime::DevicePositions positions;
  // The tensors kernels allocate, for the memory check before a call.
  std::vector<AllocatedValue> allocated_values;
};

// The mutable state of one session.
struct SessionState {
  std::map<std::string, Tensor, std::less<>> buffers;  // buffer values by FQN (on the device)
  // Planned buffers kept between calls (by Plan::buffers index; per-call ones stay empty).
  std::vector<std::shared_ptr<Storage>> workspace;
  // The session's execution context on the model's backend.
  std::unique_ptr<backend::SessionContext> backend_session;
  // Its recorded calls; declared after backend_session so they go first (a recording is
  // destroyed while its session's stream still exists).
  std::shared_ptr<runtime::CallRecordings> recordings;
  // Per node position: its kernel arguments, copied from NodeExec::args once and patched in
  // place by each call (tensor arguments reuse their shape vectors, so the steady state does not
  // allocate). Tensors in them are released at the end of every call: a session never holds
  // the caller's tensors between calls.
  std::vector<std::vector<backend::KernelArg>> args;
  // Per node position: the whole-buffer view of its planned output when that buffer is the
  // session's own (kept between calls), rebuilt only when the buffer's storage changes.
  std::vector<Tensor> destination;
  // Per node position: the view a memoised-view node made last (invalid for other nodes).
  std::vector<ViewMemo> views;
  // Sizes of dynamic-shape values and buffers under the symbols of the session's last call.
  BoundShapes shapes;
  // The symbols of the last call whose memory was checked (runtime/memory_check.h): a call
  // with the same binding is not checked again.
  std::optional<SymBindings> memory_checked;
  // Set by Session::profile for the one call it profiles: called around every plan step.
  runtime::StepHooks* step_hooks = nullptr;
};

}  // namespace splice::detail
