#pragma once
// splice's public C++ API: load a program saved with torch.export.save (.pt2) once, open
// sessions on it, and run them on host tensors.
//
//   auto model = splice::Model::load("model.pt2");          // Result<Model>
//   if (!model.ok()) { report(model.error()); }
//   auto session = model->open_session();                     // Result<Session>
//   float x[2 * 8] = {...};
//   auto out = session->run({{"x", splice::TensorArg{x, splice::DType::kFloat32, {2, 8}}}});
//   // out->outputs[0] is a HostTensor the caller owns.
//
// Threading: a Model is immutable once loaded and may be shared by any number of threads.
// A Session holds the program's mutable state (its buffers, e.g. a KV cache) and must be used
// by one thread at a time; different sessions of one model may run in parallel. Sessions of
// one model share its weights (they are never copied per session).
//
// Errors: nothing here throws; every call that can fail returns Result<T> or Result<void>,
// whose Error carries a category (exit_code() is 2 for bad input, 1 for internal errors) and a
// message naming what is wrong.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "splice/device.h"
#include "splice/dtype.h"
#include "splice/error.h"
#include "splice/plan_mode.h"

namespace splice {

namespace detail {
struct ModelImpl;
struct SessionState;
}  // namespace detail

// A caller's tensor: contiguous row-major memory of `dtype` with `shape`. splice reads it
// during run() and keeps no pointer to it afterwards. If the program mutates this input
// (a USER_INPUT_MUTATION), run() writes the new value into `data` (in place, as PyTorch
// does), which must then be writable memory; inputs the program does not mutate are never
// written.
struct TensorArg {
  void* data = nullptr;
  DType dtype = DType::kFloat32;  // a value outside DType's enumerators is a kBadUsage error
  std::vector<int64_t> shape;
  // Where `data` lives: host memory (the default), or the GPU of a model loaded with device
  // "cuda", where `data` is a device address that the call reads (and, for a mutated input,
  // writes) without copying it to the host. Such an input must be ready on RunOptions::stream.
  // (A state value for set_state is copied, from either.)
  Device device = kHostDevice;
};

// A tensor splice returns in device memory (RunOptions::outputs_on_device): contiguous, on
// `device`, complete when run() returns. `owner` keeps the memory; it is the caller's alone (a
// copy made for it: later calls never write it), and it goes back to splice's allocator when the
// last copy of `owner` is dropped, so finish the device work that reads it first.
struct DeviceTensor {
  Device device;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  void* data = nullptr;
  std::shared_ptr<const void> owner;

  int64_t numel() const;
};

// How one call takes its inputs and gives its outputs.
struct RunOptions {
  // The CUDA stream (a cudaStream_t) the caller's device inputs are ready on: the call's work
  // waits for what is queued on it so far (without blocking the host). nullptr: the inputs are
  // ready now (the caller synchronized).
  void* stream = nullptr;
  // Return the user outputs as device tensors (RunResult::device_outputs) instead of host
  // copies; on the CPU backend they are host memory (device kCPU).
  bool outputs_on_device = false;
};

// A tensor splice returns: contiguous, owned by the caller (a plain value; copying it copies
// the bytes).
struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;

  int64_t numel() const;
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
};

// What one call returns. `outputs[N]` is the program's N-th user output (an int, float or bool
// output as a 0-d int64/float64/bool tensor); `present[N]` is false where the program returns
// None there. `mutated_inputs` holds, by input name, each user input the program mutates.
// With RunOptions::outputs_on_device, `outputs` is empty and `device_outputs` holds them.
struct RunResult {
  std::vector<HostTensor> outputs;
  std::vector<bool> present;
  std::map<std::string, HostTensor> mutated_inputs;
  std::vector<DeviceTensor> device_outputs;
};

// How Session::measure runs its calls.
struct MeasureOptions {
  int warmup = 10;  // untimed calls first (>= 0): compiles, caches and clocks settle
  int iters = 100;  // timed calls (>= 1)
  // The buffer values (by name) every call starts from, restored untimed before each call, so
  // a program that mutates its state (a KV cache) measures the same call every time; empty:
  // the archive's initial values. A program without buffers restores nothing.
  std::map<std::string, TensorArg> start_state;
  // The caller's tensors already on the model's device: the inputs are copied there once,
  // untimed, and passed as device tensors, and the outputs stay there (outputs_on_device), so
  // the time is the call's own work, without the host<->device copies of host tensors. Only
  // for a device backend (the CPU has nothing to copy).
  bool device_io = false;
};

// What Session::measure found.
struct CallTimes {
  // Each timed call's latency in milliseconds, in call order, covering all run() does (inputs
  // copied in, the kernels, outputs copied out). `clock` says how: "cuda_events" (two CUDA
  // events recorded on the session's stream around the call; on a GPU) or "host" (the host's
  // steady clock; on the CPU).
  std::vector<double> ms;
  std::string clock;
  // What the device ran in all timed calls together (divide by ms.size() for one call): kernels
  // launched, memory copies (host<->device and device<->device) and memsets, on the session's
  // stream. On a GPU they are counted with CUPTI's activity API (libcupti, loaded at run time),
  // on as many calls again run after the timed ones from the same inputs and starting state:
  // CUPTI's records slow every launch they see, so they are off while calls are timed.
  // `counted` is false where nothing was counted (the CPU backend; no libcupti), and
  // `count_note` then says why.
  bool counted = false;
  int64_t kernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  std::string count_note;
};

// One row of a call's profile (Session::profile): on a GPU one per kernel the device ran,
// with its name, grid and GPU time, mapped to the plan step whose work launched it; on the
// CPU one per plan step, timed on the host (`kernel` and `grid` empty). `step` is the index
// into the plan's steps (`splice inspect --plan`; -1: work outside any step, such as the
// input copies) and `op` its op (the group's first op for a fused group, "copy" for a base
// copy, "" for step -1). `calls`: the kernels (GPU) or times (CPU) merged into the row: a
// GPU step that launches one kernel several times gives one row for it.
struct ProfileRow {
  int64_t step = -1;
  std::string op;
  std::optional<std::string> kernel;
  std::optional<std::array<int64_t, 3>> grid;
  int64_t calls = 1;
  double ms = 0;
};

// What Session::profile found: the rows sorted by `ms`, descending; the profiled call's own
// latency (`call_ms`, measured as Session::measure does, by `clock`); and how the rows were
// timed: "cupti" (device activity records) or "host" (the host's clock around each step).
struct CallProfile {
  std::vector<ProfileRow> rows;
  double call_ms = 0;
  std::string clock;
  std::string source;
};

// Describes one user input as `run` expects it.
struct InputInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::string> shape;  // each dim a number or a symbolic expression ("s0 + 1")
  bool is_tensor = true;
  // The program writes this input (a USER_INPUT_MUTATION): run() writes its new value into the
  // caller's memory, which must be writable.
  bool mutated = false;
};

struct LoadOptions {
  // The backend to run on: "cpu" (always there) or "cuda" (in a CUDA build).
  std::string device = "cpu";
  // Host threads for this model's kernels (each model has its own pool); 0 = all cores. More
  // than the machine's hardware threads is clamped to those (Model::warnings() says so); a
  // negative count is a kBadUsage error.
  int threads = 0;
  // A value outside PlanMode's enumerators is a kBadUsage error.
  PlanMode plan_mode = PlanMode::kPlanned;
  // Record each session's calls as CUDA graphs and replay them (docs/cuda.md, "CUDA graphs");
  // only the cuda backend records. A call is recorded the second time a session runs it with
  // the same symbol values (the first compiles its kernels) and replayed from then on; results
  // are the same as without graphs.
  bool cuda_graphs = true;
  // Engine cache for .pt2 loads: compiled engines are kept here by a key over the archive
  // file's bytes, the options, the splice build and the device (docs/engine.md); a hit maps
  // the engine without importing the archive. Empty: plan in memory every time.
  std::string cache_dir;
};

// $XDG_CACHE_HOME/splice, else ~/.cache/splice.
std::string default_cache_dir();

// What a session did with CUDA graphs so far (LoadOptions::cuda_graphs).
struct GraphStats {
  int64_t recorded = 0;  // calls recorded as a graph
  int64_t replayed = 0;  // calls that ran as a replay (a recorded call counts here too)
  int64_t refused = 0;   // shapes that cannot be recorded
  std::string refusal;   // why the last refused one cannot
};

class Session;

class Model {
 public:
  // Loads a .pt2 archive (read, verified, planned; through the engine cache when
  // options.cache_dir is set) or an engine file written by compile(). Errors: unreadable file
  // (anything but a regular file included: a FIFO is refused, never waited on), bad archive or
  // engine (corrupt, or from another splice version), unsupported ops (all of them listed at
  // once; or an op whose kernel on this backend does not run the node's dtype, naming the op,
  // the dtype and the backend), non-tensor user inputs. Nothing throws, and running out of
  // memory while loading is an Error too.
  //
  // The file is mapped, not read: weights stored uncompressed are used in place for as long as
  // the Model (or a cache entry's map) lives. If another process truncates or rewrites the file
  // meanwhile, the next read of a page past its new end raises SIGBUS in the calling thread,
  // whose default action ends the process; splice installs no handler of its own, as a library
  // must not. Replace model files by renaming a new file over them (as compile() and the cache
  // do), never by writing into them; a program that cannot ensure that may install its own
  // SIGBUS handler (the splice CLI prints "model file changed while in use" and exits 2).
  static Result<Model> load(const std::string& path, const LoadOptions& options = {});
  // Compiles a .pt2 archive into an engine file that load() accepts, written atomically
  // (docs/files.md: `engine_path` must be a regular file or absent; a replaced file keeps its
  // permissions). An `engine_path` that is the archive itself (any link to it included) is a
  // kBadUsage error. A program that options.device's backend cannot run (an op, or op × dtype,
  // its kernel table lacks) is refused as load() would refuse it, and nothing is written.
  static Result<void> compile(const std::string& pt2_path, const std::string& engine_path,
                              const LoadOptions& options = {});

  // Whether load() found this model's engine in the cache.
  bool from_cache() const { return from_cache_; }
  // Why load() could not use the engine cache it was given (empty when it could); the model
  // was then planned in memory and runs the same.
  const std::string& cache_note() const { return cache_note_; }
  // What load() changed in the options it was given, one sentence each (a thread count
  // clamped to the machine's hardware threads); empty when it used them as they were.
  const std::vector<std::string>& warnings() const { return warnings_; }

  std::vector<InputInfo> inputs() const;
  // Fully qualified names of the program's buffers (its mutable state).
  std::vector<std::string> state_names() const;
  // The backend it runs on ("cpu"), and the host threads of its own pool.
  std::string device() const;
  int threads() const;
  // A new session whose state starts as the archive's buffer values.
  Result<Session> open_session() const;
  // The document `splice inspect --plan --json` prints for this model's plan (its writes,
  // buffers, kernels and totals; docs/planning.md), as JSON text. Empty for a moved-from Model.
  std::string plan_json() const;

 private:
  explicit Model(std::shared_ptr<const detail::ModelImpl> impl, bool from_cache = false)
      : impl_(std::move(impl)), from_cache_(from_cache) {}
  std::shared_ptr<const detail::ModelImpl> impl_;
  bool from_cache_ = false;
  std::string cache_note_;
  std::vector<std::string> warnings_;
  friend class Session;
};

// A Session moved from (into another Session) is empty: its calls return a kBadUsage error
// (graph_stats() all zero) instead of touching state it no longer has. The same holds for a
// moved-from Model's open_session().
class Session {
 public:
  // Runs one call with the program's user inputs by name. Buffers the program mutates keep
  // their new values for the next call of this session.
  Result<RunResult> run(const std::map<std::string, TensorArg>& inputs,
                        const RunOptions& options = {});

  // Measures calls on `inputs`, trtexec-style: options.warmup untimed calls, then
  // options.iters timed ones, each starting from options.start_state (restored untimed). The
  // session's state afterwards is what the last call left. Errors: run()'s, set_state()'s for a
  // bad start_state, kBadUsage for warmup < 0 or iters < 1. Counting kernels with CUPTI adds a
  // little host time to each launch, which the times include.
  Result<CallTimes> measure(const std::map<std::string, TensorArg>& inputs,
                            const MeasureOptions& options = {});

  // Profiles one call on `inputs` (trtexec's --dumpProfile): options.warmup untimed calls as
  // measure() makes them (iters is ignored), then one call run step by step (never a CUDA
  // graph replay) whose time is split by plan step (CallProfile). On a GPU the rows come from
  // CUPTI's kernel records (libcupti loaded at run time; without it, a kBackend error saying
  // why); on the CPU from the host clock around each step, which touches neither CUDA nor
  // CUPTI. Errors: measure()'s.
  Result<CallProfile> profile(const std::map<std::string, TensorArg>& inputs,
                              const MeasureOptions& options = {});

  // The current value of buffer `name` (a copy the caller owns).
  Result<HostTensor> state(const std::string& name) const;
  // Replaces buffer `name`; its dtype and shape must be the buffer's.
  Result<void> set_state(const std::string& name, const TensorArg& value);
  // Restores every buffer to the archive's value.
  Result<void> reset_state();
  // CUDA graph counts of this session (all zero on the CPU or with cuda_graphs off).
  GraphStats graph_stats() const;

  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

 private:
  Session(std::shared_ptr<const detail::ModelImpl> model,
          std::unique_ptr<detail::SessionState> state);
  std::shared_ptr<const detail::ModelImpl> model_;
  std::unique_ptr<detail::SessionState> state_;
  friend class Model;
};

}  // namespace splice
