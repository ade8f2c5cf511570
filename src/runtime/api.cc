// The public API (include/splice/splice.h) over the loader, the planner and the executor:
// Model owns the prepared program (on its backend), Session owns buffer state and its
// context on the backend, and tensors cross the boundary as caller-owned contiguous host
// copies (so no output ever aliases an input, a buffer or another output); Session::measure
// times calls through the backend's CallProbe (backends/backend.h). Every entry point
// turns an exception from below (out of memory in a container) into an Error: nothing throws
// across the public API.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <new>
#include <thread>
#include <tuple>

#include "backends/backend.h"
#include "compiler/driver.h"
#include "plan/build.h"
#include "plan/cache.h"
#include "plan/engine_file.h"
#include "plan/report.h"
#include "runtime/executor.h"
#include "runtime/kernel_check.h"
#include "runtime/recorded_calls.h"
#include "splice/splice.h"
#include "support/checked_math.h"
#include "support/file_identity.h"
#include "tensor/convert.h"

namespace splice {

namespace {

// Runs f, returning its Result, or an Error for an exception that escaped from below.
template <typename F>
auto no_throw(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::kBackend, "{}: out of memory", what);
  } catch (const std::exception& e) {
    return make_error(ErrorKind::kInternal, "{}: {}", what, e.what());
  } catch (...) {
    // Nothing crosses the API, not even an exception of a type splice does not know.
    return make_error(ErrorKind::kInternal, "{}: unexpected exception of an unknown type", what);
  }
}

// A host copy of t (which lives on the model's device) that the caller owns.
Result<HostTensor> to_host(const detail::ModelImpl& model, detail::SessionState& state,
                           const Tensor& t) {
  HostTensor h;
  h.dtype = t.dtype();
  h.shape = t.sizes();
  h.bytes.resize(t.nbytes());
  if (h.bytes.empty()) return h;
  // The caller's vector, viewed as a contiguous host tensor, is the copy's destination.
  Tensor dst(t.dtype(), t.sizes(), contiguous_strides(t.sizes()), 0,
             Storage::borrow(h.bytes.data(), h.bytes.size(), nullptr, true));
  if (t.is_host()) {
    copy_cast_into(dst, t);
    return h;
  }
  SPLICE_TRY(model.backend->copy(dst, t, state.backend_session.get()));
  SPLICE_TRY(model.backend->synchronize(*state.backend_session));
  return h;
}
// A DType value the caller made by casting an integer outside the enum: refused before any table
// is indexed by it (dtype_size and dtype_name read one entry per enumerator).
Result<void> check_dtype(const std::string& what, DType dtype) {
  const auto raw = static_cast<unsigned>(dtype);
  if (raw > static_cast<unsigned>(DType::kBFloat16))
    return make_error(ErrorKind::kBadUsage,
                      "{} has dtype value {}, which is not a splice::DType (0 to {})", what, raw,
                      static_cast<unsigned>(DType::kBFloat16));
  return ok_result();
}

// A Tensor that views the caller's memory without copying it, for the length of a call. It is
// writable only when the program mutates that input in place (`writable`); every other input
// is read-only, so no plan can write into memory the program only reads.
Result<Tensor> borrow(const std::string& name, const TensorArg& arg, bool writable = false,
                      const backend::Backend* backend = nullptr) {
  // Device memory is only readable by the backend that owns that device.
  if (!arg.device.is_host() && (backend == nullptr || backend->device() != arg.device))
    return make_error(
        ErrorKind::kBadInput, "input '{}' is in {} memory, but the model runs on {}", name,
        device_name(arg.device),
        backend == nullptr ? std::string("the host") : device_name(backend->device()));
  SPLICE_TRY(check_dtype(fmt::format("input '{}'", name), arg.dtype));
  auto numel = checked_numel(arg.shape);
  if (!numel)
    return make_error(ErrorKind::kBadInput, "input '{}' has an invalid shape {}", name,
                      shape_string(arg.shape));
  // Checked: a caller's shape may be anything, and a wrapped byte count would let kernels
  // address far past `data`.
  auto total = checked_mul(*numel, static_cast<int64_t>(dtype_size(arg.dtype)));
  if (!total)
    return make_error(ErrorKind::kBadInput, "input '{}' has shape {}: its size in bytes overflows",
                      name, shape_string(arg.shape));
  size_t nbytes = static_cast<size_t>(*total);
  if (arg.data == nullptr && nbytes > 0)
    return make_error(ErrorKind::kBadInput, "input '{}' has no data", name);
  auto storage = Storage::borrow(arg.data, nbytes, nullptr, writable, arg.device);
  return Tensor(arg.dtype, arg.shape, contiguous_strides(arg.shape), 0, std::move(storage));
}

// Output t as a device tensor that the caller alone owns: t itself when nothing else holds its
// memory (a call's fresh output: plan::Buffer::per_call), else a copy. Memory the session
// keeps (state, a recorded call's outputs, which every replay rewrites), the archive's
// weights, a caller's input and one storage under two outputs all have other holders or are
// not splice's, and are copied. `copied` says which happened.
Result<DeviceTensor> to_device_output(const detail::ModelImpl& model, detail::SessionState& state,
                                      const Tensor& t, bool& copied) {
  const backend::Backend& b = *model.backend;
  const std::shared_ptr<Storage>& held = t.storage();
  // Decided before `out` takes a second hold of t's storage.
  copied = !(held->owned() && held->writable() && held.use_count() == 1 && t.is_contiguous() &&
             held->device() == b.device());
  Tensor out = t;
  if (copied) {
    SPLICE_ASSIGN_OR_RETURN(auto storage, b.allocate(t.nbytes()));
    out = Tensor(t.dtype(), t.sizes(), contiguous_strides(t.sizes()), 0, std::move(storage));
    SPLICE_TRY(b.copy(out, t, state.backend_session.get()));
  }
  DeviceTensor d;
  d.device = out.storage()->device();
  d.dtype = out.dtype();
  d.shape = out.sizes();
  d.data = out.device_data();
  d.owner = out.storage();
  return d;
}

// The inputs of Session::measure copied once to the model's device (MeasureOptions::device_io):
// device TensorArgs viewing `held`, and the RunOptions that keep the outputs there. Empty args
// when the inputs stay where they are (no device_io, or a host backend).
struct DeviceInputs {
  std::map<std::string, TensorArg> args;
  RunOptions options;
  std::vector<std::shared_ptr<Storage>> held;
};

Result<DeviceInputs> device_inputs(const detail::ModelImpl& model, detail::SessionState& state,
                                   const std::map<std::string, TensorArg>& inputs, bool device_io) {
  DeviceInputs d;
  const backend::Backend& b = *model.backend;
  if (!device_io || b.device().is_host()) return d;
  for (const auto& [name, arg] : inputs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor host, borrow(name, arg, false, &b));
    SPLICE_ASSIGN_OR_RETURN(auto storage, b.allocate(host.nbytes()));
    Tensor copy(host.dtype(), host.sizes(), contiguous_strides(host.sizes()), 0, storage);
    SPLICE_TRY(b.copy(copy, host, state.backend_session.get()));
    d.args.emplace(name, TensorArg{storage->device_data(), arg.dtype, arg.shape, b.device()});
    d.held.push_back(std::move(storage));
  }
  SPLICE_TRY(b.synchronize(*state.backend_session));
  d.options.outputs_on_device = true;
  return d;
}

}  // namespace

int64_t HostTensor::numel() const { return shape_numel(shape); }
int64_t DeviceTensor::numel() const { return shape_numel(shape); }

std::string default_cache_dir() { return plan::default_cache_dir(); }

namespace {

// The thread count a model runs with: 0 means every hardware thread; more than the machine has
// is clamped to that with a warning (threads beyond the cores only contend: 4096 of them made a
// call about 1,000x slower), a negative count is refused.
Result<int> thread_count(const LoadOptions& options, std::vector<std::string>& warnings) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (options.threads < 0)
    return make_error(ErrorKind::kBadUsage,
                      "threads must be 0 (every hardware thread) or a positive count, got {}",
                      options.threads);
  if (options.threads == 0) return hardware;
  if (options.threads > hardware) {
    warnings.push_back(
        fmt::format("{} threads asked for, but this machine has {} hardware "
                    "threads; using {}",
                    options.threads, hardware, hardware));
    return hardware;
  }
  return options.threads;
}

// A PlanMode value outside the enum (a cast integer) would be planned as neither mode and
// written into an engine that splice then refuses.
Result<void> check_plan_mode(PlanMode mode) {
  if (mode != PlanMode::kPlanned && mode != PlanMode::kNaive)
    return make_error(ErrorKind::kBadUsage,
                      "plan_mode value {} is not a splice::PlanMode (kPlanned = 0, kNaive = 1)",
                      static_cast<int>(mode));
  return ok_result();
}

// Session calls on a Session whose contents were moved to another one.
Result<void> check_not_moved(const detail::SessionState* state) {
  if (state == nullptr)
    return make_error(ErrorKind::kBadUsage,
                      "this Session was moved from; use the Session it was moved to");
  return ok_result();
}

}  // namespace

Result<Model> Model::load(const std::string& path, const LoadOptions& options) {
  return no_throw("loading a model", [&]() -> Result<Model> {
    SPLICE_TRY(check_plan_mode(options.plan_mode));
    std::vector<std::string> warnings;
    SPLICE_ASSIGN_OR_RETURN(const int threads, thread_count(options, warnings));
    SPLICE_ASSIGN_OR_RETURN(const backend::Backend* backend,
                            backend::require_backend(options.device));
    const backend::Target& target = backend->target();
    const PlanMode mode = options.plan_mode;
    ir::Program program;
    std::optional<plan::Plan> planned;
    bool hit = false;
    std::string cache_note;
    if (plan::is_engine_file(path)) {
      SPLICE_ASSIGN_OR_RETURN(plan::LoadedEngine engine, plan::load_engine_file(path, target));
      program = std::move(engine.program);
      planned = std::move(engine.plan);
    } else if (!options.cache_dir.empty()) {
      // The key comes from the archive's bytes (remembered against its identity), so a hit
      // never imports it: the entry is mapped and nothing of the archive but its stat is read.
      SPLICE_ASSIGN_OR_RETURN(const std::string digest,
                              plan::archive_digest(options.cache_dir, path));
      const std::string key = plan::cache_key(digest, mode, target, backend->identity());
      // Set when the import itself fails: that is the user's error, not the cache's.
      std::optional<Error> import_error;
      auto build = [&]() -> Result<plan::BuiltEngine> {
        auto imported = compiler::load_program(path);
        if (!imported.ok()) {
          import_error = imported.error();
          return imported.error();
        }
        plan::Plan p = plan::build_plan(*imported, mode, target);
        return plan::BuiltEngine{std::move(*imported), std::move(p)};
      };
      std::optional<plan::BuiltEngine> built;
      auto engine = plan::load_or_build(options.cache_dir, key, target, build, &hit, &built);
      if (import_error) return *import_error;
      if (engine.ok()) {
        program = std::move(engine->program);
        planned = std::move(engine->plan);
      } else {
        // The cache only saves planning time: when it cannot serve (a read-only home, a full
        // disk, an engine that does not load back) the program still runs, planned in
        // memory, and the reason is kept for the caller to report.
        cache_note = engine.error().message();
        hit = false;
        if (built) {
          program = std::move(built->program);
          planned = std::move(built->plan);
        } else {
          SPLICE_ASSIGN_OR_RETURN(program, compiler::load_program(path));
        }
      }
    } else {
      SPLICE_ASSIGN_OR_RETURN(program, compiler::load_program(path));
    }
    runtime::PrepareOptions prepare;
    prepare.device = options.device;
    prepare.threads = threads;
    prepare.mode = mode;
    SPLICE_ASSIGN_OR_RETURN(detail::ModelImpl impl,
                            runtime::prepare(std::move(program), prepare, std::move(planned)));
    impl.record_calls = options.cuda_graphs;
    Model model(std::make_shared<const detail::ModelImpl>(std::move(impl)), hit);
    model.cache_note_ = std::move(cache_note);
    model.warnings_ = std::move(warnings);
    return model;
  });
}

Result<void> Model::compile(const std::string& pt2_path, const std::string& engine_path,
                            const LoadOptions& options) {
  return no_throw("compiling a model", [&]() -> Result<void> {
    if (plan::is_engine_file(pt2_path))
      return make_error(ErrorKind::kBadUsage,
                        "'{}' is already an engine file; `splice compile` takes a .pt2 archive "
                        "(run the engine with `splice run`)",
                        pt2_path);
    SPLICE_TRY(check_plan_mode(options.plan_mode));
    // Writing the engine over the archive would replace the user's model with it.
    SPLICE_TRY(check_distinct_files({{"the model", pt2_path}}, {{"the engine file", engine_path}}));
    SPLICE_ASSIGN_OR_RETURN(const backend::Backend* backend,
                            backend::require_backend(options.device));
    SPLICE_ASSIGN_OR_RETURN(ir::Program program, compiler::load_program(pt2_path));
    // An engine its backend would refuse at load is refused now (the Target is plain data, so
    // this holds for a backend this machine cannot run, too).
    SPLICE_TRY(runtime::check_kernels(program, backend->target()));
    const plan::Plan plan = plan::build_plan(program, options.plan_mode, backend->target());
    if (auto peak = plan::check_static_peak(program, plan); !peak.ok())
      return peak.error().with_context(pt2_path);
    return plan::write_engine_file(program, plan, engine_path);
  });
}

std::vector<InputInfo> Model::inputs() const {
  std::vector<InputInfo> result;
  if (impl_ == nullptr) return result;  // a moved-from Model has no program
  for (size_t i : impl_->user_inputs) {
    const ir::Value* v = impl_->program.signature.inputs[i].value;
    InputInfo info;
    info.name = v->name();
    info.dtype = v->type().dtype;
    for (const auto& d : v->type().sizes) info.shape.push_back(d.to_string());
    for (const auto& out : impl_->program.signature.outputs)
      info.mutated = info.mutated ||
                     (out.kind == ir::OutputKind::kUserInputMutation && out.target == info.name);
    result.push_back(std::move(info));
  }
  return result;
}

std::vector<std::string> Model::state_names() const {
  std::vector<std::string> names;
  if (impl_ == nullptr) return names;
  for (const auto& spec : impl_->program.signature.inputs)
    if (spec.kind == ir::InputKind::kBuffer) names.push_back(spec.target);
  return names;
}

std::string Model::device() const {
  return impl_ == nullptr ? std::string() : std::string(impl_->backend->name());
}

int Model::threads() const { return impl_ == nullptr ? 0 : impl_->backend_model->threads(); }

std::string Model::plan_json() const {
  if (impl_ == nullptr) return {};
  return plan::plan_report_json(impl_->program, impl_->plan).dump(2) + "\n";
}

Result<Session> Model::open_session() const {
  return no_throw("opening a session", [&]() -> Result<Session> {
    if (impl_ == nullptr)
      return make_error(ErrorKind::kBadUsage,
                        "this Model was moved from; use the Model it was moved to");
    SPLICE_ASSIGN_OR_RETURN(detail::SessionState state, runtime::open_session_state(*impl_));
    return Session(impl_, std::make_unique<detail::SessionState>(std::move(state)));
  });
}

Session::Session(std::shared_ptr<const detail::ModelImpl> model,
                 std::unique_ptr<detail::SessionState> state)
    : model_(std::move(model)), state_(std::move(state)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Result<void> Session::reset_state() {
  return no_throw("resetting state", [&]() -> Result<void> {
    SPLICE_TRY(check_not_moved(state_.get()));
    return runtime::reset_session_state(*model_, *state_);
  });
}

GraphStats Session::graph_stats() const {
  return state_ != nullptr && state_->recordings != nullptr ? state_->recordings->stats
                                                            : GraphStats{};
}

Result<HostTensor> Session::state(const std::string& name) const {
  return no_throw("reading state", [&]() -> Result<HostTensor> {
    SPLICE_TRY(check_not_moved(state_.get()));
    auto it = state_->buffers.find(name);
    if (it == state_->buffers.end())
      return make_error(ErrorKind::kBadInput, "the program has no buffer '{}'", name);
    return to_host(*model_, *state_, it->second);
  });
}

Result<void> Session::set_state(const std::string& name, const TensorArg& value) {
  return no_throw("setting state", [&]() -> Result<void> {
    SPLICE_TRY(check_not_moved(state_.get()));
    auto it = state_->buffers.find(name);
    if (it == state_->buffers.end())
      return make_error(ErrorKind::kBadInput, "the program has no buffer '{}'", name);
    SPLICE_TRY(check_dtype(fmt::format("state '{}'", name), value.dtype));
    if (value.dtype != it->second.dtype() || value.shape != it->second.sizes())
      return make_error(ErrorKind::kBadInput, "state '{}' is {}{}, the buffer is {}{}", name,
                        dtype_name(value.dtype), shape_string(value.shape),
                        dtype_name(it->second.dtype()), shape_string(it->second.sizes()));
    SPLICE_ASSIGN_OR_RETURN(Tensor borrowed, borrow(name, value, false, model_->backend));
    const backend::Backend& b = *model_->backend;
    // A buffer the plan updates in place is the session's own copy: the value is copied into
    // it, so recorded calls, which name its memory, stay valid and read the new value.
    const Tensor& own = it->second;
    if (model_->state_written_in_place.count(name) && own.storage()->owned() &&
        own.storage()->writable() && own.is_contiguous()) {
      SPLICE_TRY(b.copy(own, borrowed, state_->backend_session.get()));
      return b.synchronize(*state_->backend_session);
    }
    // Otherwise the session's own copy on the model's device (state never views the caller's
    // memory), which recordings do not know: they are dropped.
    SPLICE_ASSIGN_OR_RETURN(auto storage, b.allocate(borrowed.nbytes()));
    Tensor copy(borrowed.dtype(), borrowed.sizes(), contiguous_strides(borrowed.sizes()), 0,
                std::move(storage));
    SPLICE_TRY(b.copy(copy, borrowed, state_->backend_session.get()));
    SPLICE_TRY(b.synchronize(*state_->backend_session));
    runtime::forget_recordings(*state_);
    it->second = std::move(copy);
    return ok_result();
  });
}

Result<RunResult> Session::run(const std::map<std::string, TensorArg>& inputs,
                               const RunOptions& options) {
  return no_throw("running a call", [&]() -> Result<RunResult> {
    SPLICE_TRY(check_not_moved(state_.get()));
    const backend::Backend& b = *model_->backend;
    runtime::TensorMap bound;
    bool on_device = false;
    for (const auto& [name, arg] : inputs) {
      SPLICE_ASSIGN_OR_RETURN(
          Tensor t, borrow(name, arg, model_->inputs_written_in_place.count(name) > 0, &b));
      on_device = on_device || !arg.device.is_host();
      bound.emplace(name, std::move(t));
    }
    if (on_device && options.stream != nullptr)
      SPLICE_TRY(b.wait_for(*state_->backend_session, options.stream));
    SPLICE_ASSIGN_OR_RETURN(runtime::CallOutputs outs,
                            runtime::execute(*model_, bound, *state_, nullptr, state_->step_hooks));
    RunResult result;
    bool queued = false;  // work queued after execute() (which waited for its own)
    for (auto& o : outs.user_outputs) {
      result.present.push_back(o.has_value());
      if (options.outputs_on_device) {
        if (!o) {
          result.device_outputs.emplace_back();
          continue;
        }
        // Moved out of `outs`, so that a fresh output's storage has no holder but this one.
        const Tensor t = *std::exchange(o, std::nullopt);
        bool copied = false;
        SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, to_device_output(*model_, *state_, t, copied));
        queued = queued || copied;
        result.device_outputs.push_back(std::move(d));
        continue;
      }
      if (!o) {
        result.outputs.emplace_back();
        continue;
      }
      SPLICE_ASSIGN_OR_RETURN(HostTensor h, to_host(*model_, *state_, *o));
      result.outputs.push_back(std::move(h));
    }
    if (queued) SPLICE_TRY(b.synchronize(*state_->backend_session));
    for (auto& [name, t] : outs.mutated_inputs) {
      SPLICE_ASSIGN_OR_RETURN(HostTensor h, to_host(*model_, *state_, t));
      auto it = inputs.find(name);
      auto caller = bound.find(name);
      // Written in place already when the new value is the caller's memory itself.
      const bool written = caller != bound.end() && caller->second.device() == t.device() &&
                           caller->second.device_data() == t.device_data();
      if (it != inputs.end() && it->second.data != nullptr && h.bytes.size() > 0 &&
          it->second.dtype == h.dtype && it->second.shape == h.shape && !written) {
        if (it->second.device.is_host()) {
          std::memcpy(it->second.data, h.bytes.data(), h.bytes.size());
        } else {
          SPLICE_TRY(b.copy(caller->second, t, state_->backend_session.get()));
          SPLICE_TRY(b.synchronize(*state_->backend_session));
        }
      }
      result.mutated_inputs.emplace(name, std::move(h));
    }
    for (auto& [name, t] : outs.new_buffers) {
      // A new buffer value may view memory splice does not own (the caller's borrowed input,
      // or the archive): the session keeps its own copy then, so state never points into
      // memory that can change or vanish after the call.
      if (t.storage()->owned() && t.storage()->writable()) {
        state_->buffers[name] = std::move(t);
        continue;
      }
      const backend::Backend& b = *model_->backend;
      SPLICE_ASSIGN_OR_RETURN(auto storage, b.allocate(t.nbytes()));
      Tensor copy(t.dtype(), t.sizes(), contiguous_strides(t.sizes()), 0, std::move(storage));
      SPLICE_TRY(b.copy(copy, t, state_->backend_session.get()));
      state_->buffers[name] = std::move(copy);
    }
    return result;
  });
}

Result<CallTimes> Session::measure(const std::map<std::string, TensorArg>& inputs,
                                   const MeasureOptions& options) {
  return no_throw("measuring calls", [&]() -> Result<CallTimes> {
    if (options.warmup < 0 || options.iters < 1)
      return make_error(ErrorKind::kBadUsage,
                        "measure needs warmup >= 0 and iters >= 1 (got warmup {}, iters {})",
                        options.warmup, options.iters);
    SPLICE_TRY(check_not_moved(state_.get()));
    // Every name is checked before any call, also for a program without buffers, which
    // restores nothing and would otherwise never look at them.
    for (const auto& [name, value] : options.start_state)
      if (!state_->buffers.count(name))
        return make_error(ErrorKind::kBadInput, "start state '{}': the program has no buffer '{}'",
                          name, name);
    const bool has_state = !state_->buffers.empty();
    // Untimed, before every call: the same starting state each time.
    const auto restore = [&]() -> Result<void> {
      if (!has_state) return ok_result();
      if (options.start_state.empty()) return reset_state();
      for (const auto& [name, value] : options.start_state) {
        auto r = set_state(name, value);
        if (!r.ok()) return r.error().with_context(fmt::format("start state '{}'", name));
      }
      return ok_result();
    };
    // Made before the warm-up calls, so whatever the probe sets up on first use (CUPTI's
    // instrumentation of the context) is paid there, not in a timed call.
    SPLICE_ASSIGN_OR_RETURN(std::unique_ptr<backend::CallProbe> probe,
                            model_->backend->probe(*state_->backend_session));
    SPLICE_ASSIGN_OR_RETURN(DeviceInputs on_device,
                            device_inputs(*model_, *state_, inputs, options.device_io));
    const auto call = [&]() -> Result<RunResult> {
      return on_device.args.empty() ? run(inputs) : run(on_device.args, on_device.options);
    };
    for (int i = 0; i < options.warmup; ++i) {
      SPLICE_TRY(restore());
      SPLICE_TRY(call());
    }
    CallTimes times;
    times.clock = std::string(probe->clock());
    times.ms.reserve(static_cast<size_t>(options.iters));
    for (int i = 0; i < options.iters; ++i) {
      SPLICE_TRY(restore());
      SPLICE_TRY(probe->begin(false));
      SPLICE_TRY(call());
      SPLICE_ASSIGN_OR_RETURN(double ms, probe->end());
      times.ms.push_back(ms);
    }
    // As many calls again, counted and not timed: what the timed calls ran, without the
    // counting's own cost in their times.
    for (int i = 0; probe->counts_work() && i < options.iters; ++i) {
      SPLICE_TRY(restore());
      SPLICE_TRY(probe->begin(true));
      SPLICE_TRY(call());
      SPLICE_TRY(probe->end());
    }
    SPLICE_ASSIGN_OR_RETURN(backend::LaunchCounts counts, probe->counts());
    times.counted = counts.counted;
    times.kernels = counts.kernels;
    times.memcpys = counts.memcpys;
    times.memsets = counts.memsets;
    times.count_note = std::move(counts.note);
    return times;
  });
}

namespace {

// Around each plan step of a profiled call: on a backend with device records, marks the step
// (the device's kernels are mapped to it); else times the step on the host's clock.
class ProfileHooks final : public runtime::StepHooks {
 public:
  ProfileHooks(backend::CallProbe& probe, bool device, size_t steps)
      : probe_(probe), device_(device), ms_(steps, 0.0) {}
  Result<void> before(size_t step) override {
    if (device_) return probe_.mark_step(static_cast<int64_t>(step));
    start_ = std::chrono::steady_clock::now();
    return ok_result();
  }
  Result<void> after(size_t step) override {
    if (device_) return probe_.mark_step(-1);
    ms_[step] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
    return ok_result();
  }
  const std::vector<double>& ms() const { return ms_; }

 private:
  backend::CallProbe& probe_;
  bool device_;
  std::vector<double> ms_;
  std::chrono::steady_clock::time_point start_;
};

// The op a plan step runs: its node's target, a group's first member's, "copy" for a base
// copy.
std::string step_op(const detail::ModelImpl& model, int64_t step) {
  if (step < 0 || static_cast<size_t>(step) >= model.plan.steps.size()) return "";
  const plan::Step& s = model.plan.steps[static_cast<size_t>(step)];
  const auto& nodes = model.program.graph.nodes();
  switch (s.kind) {
    case plan::StepKind::kBaseCopy:
      return "copy";
    case plan::StepKind::kGroup:
      return nodes[static_cast<size_t>(model.plan.groups[static_cast<size_t>(s.index)].nodes[0])]
          ->target();
    case plan::StepKind::kNode:
      break;
  }
  return nodes[static_cast<size_t>(s.index)]->target();
}

}  // namespace

Result<CallProfile> Session::profile(const std::map<std::string, TensorArg>& inputs,
                                     const MeasureOptions& options) {
  return no_throw("profiling a call", [&]() -> Result<CallProfile> {
    if (options.warmup < 0)
      return make_error(ErrorKind::kBadUsage, "profile needs warmup >= 0 (got {})", options.warmup);
    // The warm-up calls (and the state every call starts from) as measure() makes them.
    MeasureOptions warm = options;
    warm.iters = 1;
    SPLICE_ASSIGN_OR_RETURN(CallTimes warm_times, measure(inputs, warm));
    (void)warm_times;
    if (!state_->buffers.empty()) {
      if (options.start_state.empty()) {
        SPLICE_TRY(reset_state());
      } else {
        for (const auto& [name, value] : options.start_state) {
          auto r = set_state(name, value);
          if (!r.ok()) return r.error().with_context(fmt::format("start state '{}'", name));
        }
      }
    }
    SPLICE_ASSIGN_OR_RETURN(std::unique_ptr<backend::CallProbe> probe,
                            model_->backend->probe(*state_->backend_session));
    SPLICE_ASSIGN_OR_RETURN(DeviceInputs on_device,
                            device_inputs(*model_, *state_, inputs, options.device_io));
    SPLICE_ASSIGN_OR_RETURN(const bool device, probe->enable_profile());
    ProfileHooks hooks(*probe, device, model_->plan.steps.size());
    state_->step_hooks = &hooks;
    SPLICE_TRY(probe->begin(true));
    auto ran = on_device.args.empty() ? run(inputs) : run(on_device.args, on_device.options);
    state_->step_hooks = nullptr;
    SPLICE_TRY(ran);
    CallProfile out;
    SPLICE_ASSIGN_OR_RETURN(out.call_ms, probe->end());
    out.clock = std::string(probe->clock());
    if (device) {
      out.source = "cupti";
      SPLICE_ASSIGN_OR_RETURN(std::vector<backend::KernelTime> kernels, probe->kernel_times());
      // One row per (step, kernel name, grid): a step's repeated launches merge.
      std::map<std::tuple<int64_t, std::string, std::array<int64_t, 3>>, size_t> row_of;
      for (const backend::KernelTime& k : kernels) {
        const std::array<int64_t, 3> grid = {k.grid[0], k.grid[1], k.grid[2]};
        auto [it, fresh] = row_of.try_emplace({k.step, k.kernel, grid}, out.rows.size());
        if (fresh) out.rows.push_back({k.step, step_op(*model_, k.step), k.kernel, grid, 0, 0});
        ProfileRow& row = out.rows[it->second];
        ++row.calls;
        row.ms += k.ms;
      }
    } else {
      out.source = "host";
      for (size_t s = 0; s < hooks.ms().size(); ++s) {
        const auto step = static_cast<int64_t>(s);
        out.rows.push_back(
            {step, step_op(*model_, step), std::nullopt, std::nullopt, 1, hooks.ms()[s]});
      }
    }
    std::stable_sort(out.rows.begin(), out.rows.end(),
                     [](const ProfileRow& a, const ProfileRow& b) { return a.ms > b.ms; });
    return out;
  });
}

}  // namespace splice
