#pragma once
// The backend interface: everything the plan, the runtime and the tools know of a backend.
// A backend is a name, a device, a kernel table (op id → KernelEntry with its capability
// flags), memory on its device with copies to and from the host, and two execution contexts:
// one per loaded model (shared by its sessions: the CPU's thread pool, a GPU's uploaded
// weights) and one per session (a GPU stream, library handles, captured graphs).
//
// Backends register themselves when their library is linked (register_backend from a static
// initializer in the backend's own folder), so nothing above this interface names one. Kernels
// are resolved once per node at load (kernel()), never per call. Planning never calls a
// backend: it reads the Target, the backend's capabilities as plain data, so a plan can be made
// (and an engine compiled) for a backend this machine cannot run.
//
// Backend is the core every backend implements; an optional part of a backend is an optional
// object it hands out (recorder(): CUDA graphs and positions read on the device), not methods
// every backend must answer with "I cannot".

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/call_recorder.h"
#include "backends/kernel_abi.h"
#include "backends/target.h"
#include "ir/pointwise.h"
#include "ir/sym.h"
#include "splice/device.h"
#include "support/host_memory.h"

namespace splice::backend {

struct ModelOptions {
  int threads = 1;  // host threads kernels may use (>= 1)
  // The programs of the plan's pointwise groups (owned by the model, alive as long as it): a
  // backend that compiles kernels for them may compile them all now, side by side, instead of
  // one by one at each group's first launch.
  std::vector<const ir::PointwiseProgram*> pointwise_groups;
};

// Per loaded model, shared read-only by its sessions (which may run in parallel).
class ModelContext {
 public:
  virtual ~ModelContext() = default;
  // Host threads this model's kernels run on (its own pool's size).
  virtual int threads() const { return 1; }
  // The most threads that worked on one kernel at once so far (for tests of thread use).
  virtual int threads_used() const { return 1; }
};

// Per session: one thread uses it at a time.
class SessionContext {
 public:
  virtual ~SessionContext() = default;
};

// What a CallProbe counted over the calls it measured: the device's kernels, memory copies
// (host<->device and device<->device) and memsets, summed.
struct LaunchCounts {
  bool counted = false;  // false: nothing was counted, and `note` says why
  int64_t kernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  std::string note;
};

// A kernel the device ran during a profiled call (CallProbe::kernel_times): its name, grid,
// GPU time and the plan step whose work launched it (-1: none, e.g. the input copies).
struct KernelTime {
  int64_t step = -1;
  std::string kernel;
  int64_t grid[3] = {0, 0, 0};
  double ms = 0;
};

// Measures one session's calls, one at a time: begin() just before a call, end() just after
// it, nothing of the session's between the two but the call. Used by Session::measure; a probe
// lives for one measurement and is destroyed before its session.
class CallProbe {
 public:
  virtual ~CallProbe() = default;
  // How end() measures: "host" (the host's steady clock) or "cuda_events".
  virtual std::string_view clock() const = 0;
  // Starts timing a call. With `count`, the device work queued between this begin() and its
  // end() is counted too (counts()). Counting can slow the launches it sees (CUPTI's activity
  // records cost the host time on every launch), so Session::measure times calls uncounted and
  // counts on calls of their own.
  virtual Result<void> begin(bool count) = 0;
  // Whether begin(true) counts anything: false on a backend without device work, or when the
  // counting library is missing (counts() then says why).
  virtual bool counts_work() const { return false; }
  // The call's latency in milliseconds; waits until the device has finished the call.
  virtual Result<double> end() = 0;
  // What ran between every begin() and its end() so far.
  virtual Result<LaunchCounts> counts() = 0;

  // Profiling (Session::profile). enable_profile() before begin(): true when the probe keeps
  // the device's kernel records of the next call; false for a backend without device records
  // (the CPU), whose steps the runtime times on the host instead; an Error when the device has
  // records but they cannot be read (no libcupti). The profiled call runs step by step with
  // mark_step(s) before plan step s queues its work and mark_step(-1) after it; after end(),
  // kernel_times() returns every kernel the device ran between begin() and end(), each with
  // the step that launched it.
  virtual Result<bool> enable_profile() { return false; }
  virtual Result<void> mark_step(int64_t /*step*/) { return ok_result(); }
  virtual Result<std::vector<KernelTime>> kernel_times() {
    return make_error(ErrorKind::kUnsupportedOp, "this backend records no kernels");
  }
};

// One RMSNorm group's call (plan/norm_fusion.h): over the last dim of every tensor (H
// elements, the same sizes for x, residual, sum and out; weight is [H]),
//   a = residual ? round(x + residual) : x        (in x's dtype; stored into sum when given)
//   r = rsqrt(sum_j a_j^2 / H + eps)              (each step rounded to stat, as the chain's
//   y = round_to(cast, a * r)                      values are; cast: the dtype of y's cast)
//   out = weight ? round(float(y) * float(weight)) : y   (in out's dtype)
// x, residual and out are float16, bfloat16 or float32; cast and weight's dtype the same set.
struct RmsNormCall {
  Tensor x;
  std::optional<Tensor> residual;
  std::optional<Tensor> weight;
  std::optional<Tensor> sum;  // the residual sum, when something else reads it
  Tensor out;
  DType stat = DType::kFloat32;
  DType cast = DType::kFloat32;
  double eps = 0;
};

// One GEMV-epilogue group's call (plan/gemv_epilogue.h): the product P = op(a, b, c) of
// `product_op` (linear: a · bᵀ + c; mm: a · b; addmm: c + a · b), P rounded to its dtype,
// then the epilogue program over `sizes` (P's sizes with the last dim the epilogue's width):
// program input i reads P's columns [columns[i], columns[i] + width) when columns[i] >= 0,
// else inputs[i] (broadcast to `sizes` like run_pointwise's); outputs as run_pointwise's.
// With `norm`, `a` is the input of an RMSNorm (RmsNormCall without a residual, its output of
// a's dtype) whose output is the product's left operand: the norm is never stored.
struct GemvEpilogueCall {
  ir::OpId product_op = ir::OpId::linear;
  Tensor a, b;
  std::optional<Tensor> c;
  struct Norm {
    std::optional<Tensor> weight;
    DType stat = DType::kFloat32;
    DType cast = DType::kFloat32;
    double eps = 0;
  };
  std::optional<Norm> norm;
  Shape product_sizes;  // P's sizes
  DType product_dtype = DType::kFloat32;
  const ir::PointwiseProgram* program = nullptr;
  std::vector<int64_t> columns;  // per program input
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  Shape sizes;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  virtual Device device() const = 0;

  // The kernel for an op, or nullptr when the backend has none.
  const KernelEntry* kernel(ir::OpId op) const {
    const size_t i = static_cast<size_t>(op);
    return i < by_op_.size() && by_op_[i].fn != nullptr ? &by_op_[i] : nullptr;
  }
  const Target& target() const { return target_; }
  // What else than the Target decides this backend's engines on this machine, for the engine
  // cache's key (plan/cache.h): a GPU's name, multiprocessor count, compute capability, driver
  // and library versions. Empty for the CPU; the device is not touched when it is not there.
  virtual std::string identity() const { return {}; }

  // Memory on the backend's device (zero-filled on the host), or kBackend "out of memory".
  virtual Result<std::shared_ptr<Storage>> allocate(size_t nbytes) const = 0;
  // dst = src, element by element through both views' strides (sizes and dtypes equal); each
  // tensor is in host memory or in this backend's memory, so this is also how values cross
  // between the host and the device. Runs on `session`'s queue when it has one: a copy to the
  // host is complete when synchronize(session) returns.
  virtual Result<void> copy(const Tensor& dst, const Tensor& src,
                            SessionContext* session) const = 0;

  virtual Result<std::shared_ptr<ModelContext>> open_model(const ModelOptions& options) const = 0;
  virtual Result<std::unique_ptr<SessionContext>> open_session(ModelContext& model) const = 0;
  // Runs a PointwiseProgram (a planned group of pointwise ops, or one op) over the iteration
  // space `sizes`: inputs[i] is program input i (rank sizes.size(), size 1 where it
  // broadcasts), outputs[k] the strided view program output k is stored into, on this
  // backend's device. Only for functions Target::pointwise_classes lists; a backend that
  // lists none is never asked.
  virtual Result<void> run_pointwise(SessionContext* session, const ir::PointwiseProgram& program,
                                     std::span<const Tensor> inputs,
                                     std::span<const Tensor> outputs, const Shape& sizes) const {
    return make_error(ErrorKind::kUnsupportedOp, "the {} backend runs no pointwise groups", name());
  }
  // Runs an RMSNorm group as one kernel; only asked when Target::fused_rms_norm is set.
  virtual Result<void> run_rms_norm(SessionContext* session, const RmsNormCall& call) const {
    return make_error(ErrorKind::kUnsupportedOp, "the {} backend runs no RMSNorm groups", name());
  }
  // Runs a GEMV product with its epilogue group; only asked when Target::gemv_epilogue is set.
  virtual Result<void> run_gemv_epilogue(SessionContext* session,
                                         const GemvEpilogueCall& call) const {
    return make_error(ErrorKind::kUnsupportedOp, "the {} backend runs no GEMV epilogues", name());
  }
  // run_pointwise is core, not an optional object: pointwise ops are every backend's ALU (the
  // CPU interprets the program, CUDA generates a kernel), and whether a backend runs a
  // function is already data the planner reads (Target::pointwise_classes), so no caller ever
  // asks a backend that runs none; a capability object would only repeat that table.

  // What a call may still allocate on the backend's device, and which limit that is, or
  // nullopt when it cannot be known. The runtime refuses a call whose planned memory is more,
  // before allocating any (runtime/memory_check.h). The default is the host's
  // (support/host_memory.h): a host backend's memory is the process's. Core, not optional: the
  // default is the right answer for every host backend.
  virtual std::optional<MemoryLimit> available_memory() const { return host_memory_limit(); }

  // Waits until the session's queued work is done and reports a failure it recorded.
  virtual Result<void> synchronize(SessionContext& session) const { return ok_result(); }
  // Makes the session's later work wait for what the caller queued so far on `queue` (a CUDA
  // stream), without blocking the host: the caller's device inputs are ready there.
  // Core too: the default (return at once) is the right answer, not a refusal, for every
  // backend whose work is done when it is queued (the CPU's), so callers never branch on it.
  virtual Result<void> wait_for(SessionContext& session, void* queue) const { return ok_result(); }

  // The backend's call recorder (call_recorder.h: CUDA graphs and the positions they read on
  // the device), or nullptr when it records no calls: the runtime then runs every call step by
  // step. An optional part is an optional object, so the core above stays what every backend
  // implements.
  virtual const CallRecorder* recorder() const { return nullptr; }

  // A probe that times `session`'s calls (and counts what its device runs, where the backend
  // can). The default times with the host's clock and counts nothing: a host backend's call is
  // all host time, and it launches no device work to count.
  virtual Result<std::unique_ptr<CallProbe>> probe(SessionContext& session) const;

 protected:
  // Builds the lookup table and the Target from the backend's kernels (one per op).
  void set_kernels(std::string name, std::span<const KernelEntry> kernels);
  // Declares the functions run_pointwise runs (Target::pointwise_classes), after set_kernels.
  void set_pointwise_classes(std::vector<uint8_t> classes) {
    target_.pointwise_classes = std::move(classes);
  }
  // Declares that run_rms_norm runs RMSNorm groups (Target::fused_rms_norm), after set_kernels.
  void set_fused_rms_norm() { target_.fused_rms_norm = true; }
  // Declares that run_gemv_epilogue runs GEMV-epilogue groups (Target::gemv_epilogue) of at
  // most `max_operands` operands (0: any number).
  void set_gemv_epilogue(int max_operands) {
    target_.gemv_epilogue = true;
    target_.gemv_epilogue_max_operands = max_operands;
  }
  // Declares the limits of one pointwise group's kernel (Target::pointwise_max_operands,
  // pointwise_max_constants).
  void set_pointwise_limits(int max_operands, int max_constants) {
    target_.pointwise_max_operands = max_operands;
    target_.pointwise_max_constants = max_constants;
  }
  // Declares the matrix products' two kernels (Target::gemv_max_rows, gemm_library).
  void set_matmul_kernels(int64_t gemv_max_rows, std::string gemm_library) {
    target_.gemv_max_rows = gemv_max_rows;
    target_.gemm_library = std::move(gemm_library);
  }

 private:
  std::vector<KernelEntry> by_op_;  // indexed by OpId
  Target target_;
};

// Adds a backend to the process's registry; returns true so a static initializer can call it.
// A second backend of the same name is a splice bug (aborts).
bool register_backend(std::unique_ptr<Backend> backend);
// The backend of that name ("cpu", "cuda"), or nullptr when this build has none.
const Backend* find_backend(std::string_view name);
// Names of the registered backends, sorted.
std::vector<std::string> backend_names();
// The backend of `name`, or kBadUsage naming the ones this build has.
Result<const Backend*> require_backend(std::string_view name);

}  // namespace splice::backend
