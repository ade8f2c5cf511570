// The public API (include/splice/splice.h) over the loader and the interpreter: Model owns
// the prepared program, Session owns buffer state, and tensors cross the boundary as
// caller-owned contiguous copies (so no output ever aliases an input, a buffer or another
// output).
#include <algorithm>
#include <cstring>
#include <thread>

#include "backends/cpu/registry.h"
#include "frontend/pt2/loader.h"
#include "plan/build.h"
#include "plan/cache.h"
#include "plan/engine_file.h"
#include "runtime/executor.h"
#include "splice/splice.h"
#include "support/checked_math.h"
#include "support/file_identity.h"

namespace splice {

namespace {

HostTensor to_host(const Tensor& t) {
  HostTensor h;
  h.dtype = t.dtype();
  h.shape = t.sizes();
  Tensor c = t.is_contiguous() ? t : t.contiguous_copy();
  h.bytes.resize(c.nbytes());
  if (!h.bytes.empty()) std::memcpy(h.bytes.data(), c.raw_data(), c.nbytes());
  return h;
}

// A Tensor that views the caller's memory without copying it, for the length of a call. It is
// writable only when the program mutates that input in place (`writable`); every other input
// is read-only, so no plan can write into memory the program only reads.
Result<Tensor> borrow(const std::string& name, const TensorArg& arg, bool writable = false) {
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
  auto storage = Storage::borrow(arg.data, nbytes, nullptr, writable);
  return Tensor(arg.dtype, arg.shape, contiguous_strides(arg.shape), 0, std::move(storage));
}

}  // namespace

int64_t HostTensor::numel() const { return shape_numel(shape); }

std::string default_cache_dir() { return plan::default_cache_dir(); }

namespace {

plan::PlanMode to_plan_mode(PlanMode m) {
  return m == PlanMode::kNaive ? plan::PlanMode::kNaive : plan::PlanMode::kPlanned;
}

int thread_count(const LoadOptions& options) {
  // 0 means every core the machine has.
  return options.threads > 0 ? options.threads
                             : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

Result<Model> Model::load(const std::string& path, const LoadOptions& options) {
  cpu::set_num_threads(thread_count(options));
  const plan::PlanMode mode = to_plan_mode(options.plan_mode);
  ir::Program program;
  std::optional<plan::Plan> planned;
  bool hit = false;
  std::string cache_note;
  if (plan::is_engine_file(path)) {
    SPLICE_ASSIGN_OR_RETURN(plan::LoadedEngine engine, plan::load_engine_file(path));
    program = std::move(engine.program);
    planned = std::move(engine.plan);
  } else if (!options.cache_dir.empty()) {
    SPLICE_ASSIGN_OR_RETURN(ir::Program fresh, pt2::load_program(path));
    auto build = [mode](const ir::Program& p) -> Result<plan::Plan> {
      return plan::build_plan(p, mode);
    };
    auto engine = plan::load_or_build(options.cache_dir, fresh, mode, build, &hit);
    if (engine.ok()) {
      program = std::move(engine->program);
      planned = std::move(engine->plan);
    } else {
      // The cache only saves planning time: when it cannot serve (a read-only home, a full
      // disk, an engine that does not load back) the program still runs, planned in memory,
      // and the reason is kept for the caller to report.
      cache_note = engine.error().message();
      program = std::move(fresh);
      hit = false;
    }
  } else {
    SPLICE_ASSIGN_OR_RETURN(program, pt2::load_program(path));
  }
  SPLICE_ASSIGN_OR_RETURN(
      detail::ModelImpl impl,
      runtime::prepare(std::move(program), options.threads, std::move(planned), mode));
  Model model(std::make_shared<const detail::ModelImpl>(std::move(impl)), hit);
  model.cache_note_ = std::move(cache_note);
  return model;
}

Result<void> Model::compile(const std::string& pt2_path, const std::string& engine_path,
                            const LoadOptions& options) {
  if (plan::is_engine_file(pt2_path))
    return make_error(ErrorKind::kBadUsage,
                      "'{}' is already an engine file; `splice compile` takes a .pt2 archive "
                      "(run the engine with `splice run`)",
                      pt2_path);
  // Writing the engine over the archive would replace the user's model with it.
  SPLICE_TRY(check_distinct_files({{"the model", pt2_path}}, {{"the engine file", engine_path}}));
  SPLICE_ASSIGN_OR_RETURN(ir::Program program, pt2::load_program(pt2_path));
  const plan::Plan plan = plan::build_plan(program, to_plan_mode(options.plan_mode));
  return plan::write_engine_file(program, plan, engine_path);
}

std::vector<InputInfo> Model::inputs() const {
  std::vector<InputInfo> result;
  for (size_t i : impl_->user_inputs) {
    const ir::Value* v = impl_->program.signature.inputs[i].value;
    InputInfo info;
    info.name = v->name();
    info.dtype = v->type().dtype;
    for (const auto& d : v->type().sizes) info.shape.push_back(d.to_string());
    result.push_back(std::move(info));
  }
  return result;
}

std::vector<std::string> Model::state_names() const {
  std::vector<std::string> names;
  for (const auto& spec : impl_->program.signature.inputs)
    if (spec.kind == ir::InputKind::kBuffer) names.push_back(spec.target);
  return names;
}

Session Model::open_session() const { return Session(impl_); }

Session::Session(std::shared_ptr<const detail::ModelImpl> model)
    : model_(std::move(model)), state_(std::make_unique<detail::SessionState>()) {
  reset_state();
}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

void Session::reset_state() {
  state_->buffers.clear();
  for (const auto& spec : model_->program.signature.inputs) {
    if (spec.kind != ir::InputKind::kBuffer) continue;
    auto it = model_->program.weights.find(spec.target);
    if (it == model_->program.weights.end()) continue;
    // Buffers are read-only views of the archive, shared by sessions; a buffer that the plan
    // updates in place gets this session's own copy, once.
    state_->buffers[spec.target] = model_->state_written_in_place.count(spec.target)
                                       ? it->second.contiguous_copy()
                                       : it->second;
  }
}

Result<HostTensor> Session::state(const std::string& name) const {
  auto it = state_->buffers.find(name);
  if (it == state_->buffers.end())
    return make_error(ErrorKind::kBadInput, "the program has no buffer '{}'", name);
  return to_host(it->second);
}

Result<void> Session::set_state(const std::string& name, const TensorArg& value) {
  auto it = state_->buffers.find(name);
  if (it == state_->buffers.end())
    return make_error(ErrorKind::kBadInput, "the program has no buffer '{}'", name);
  if (value.dtype != it->second.dtype() || value.shape != it->second.sizes())
    return make_error(ErrorKind::kBadInput, "state '{}' is {}{}, the buffer is {}{}", name,
                      dtype_name(value.dtype), shape_string(value.shape),
                      dtype_name(it->second.dtype()), shape_string(it->second.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor borrowed, borrow(name, value));
  it->second = borrowed.contiguous_copy();
  return ok_result();
}

Result<RunResult> Session::run(const std::map<std::string, TensorArg>& inputs) {
  runtime::TensorMap bound;
  for (const auto& [name, arg] : inputs) {
    SPLICE_ASSIGN_OR_RETURN(Tensor t,
                            borrow(name, arg, model_->inputs_written_in_place.count(name) > 0));
    bound.emplace(name, std::move(t));
  }
  SPLICE_ASSIGN_OR_RETURN(runtime::CallOutputs outs, runtime::execute(*model_, bound, *state_));
  RunResult result;
  for (auto& o : outs.user_outputs) {
    result.present.push_back(o.has_value());
    result.outputs.push_back(o ? to_host(*o) : HostTensor{});
  }
  for (auto& [name, t] : outs.mutated_inputs) {
    HostTensor h = to_host(t);
    auto it = inputs.find(name);
    // Written in place already when the new value is the caller's memory itself.
    if (it != inputs.end() && it->second.data != nullptr && h.bytes.size() > 0 &&
        it->second.dtype == h.dtype && it->second.shape == h.shape &&
        it->second.data != static_cast<void*>(t.raw_data()))
      std::memcpy(it->second.data, h.bytes.data(), h.bytes.size());
    result.mutated_inputs.emplace(name, std::move(h));
  }
  for (auto& [name, t] : outs.new_buffers) {
    // A new buffer value may view memory splice does not own (the caller's borrowed input,
    // or the archive): the session keeps its own copy then, so state never points into
    // memory that can change or vanish after the call.
    state_->buffers[name] =
        t.storage()->owned() && t.storage()->writable() ? std::move(t) : t.contiguous_copy();
  }
  return result;
}

}  // namespace splice
