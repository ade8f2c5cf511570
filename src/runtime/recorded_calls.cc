// A session's recorded calls (recorded_calls.h).
#include "runtime/recorded_calls.h"

#include <algorithm>

namespace splice::runtime {

RecordedEntry* recording_for(const detail::ModelImpl& model, detail::SessionState& state,
                             const SymBindings& symbols) {
  if (!model.record_calls || model.backend->recorder() == nullptr) return nullptr;
  if (state.recordings == nullptr) state.recordings = std::make_shared<CallRecordings>();
  auto& entries = state.recordings->entries;
  auto it = entries.find(symbols);
  if (it != entries.end()) return &it->second;
  if (entries.size() >= kMaxRecordedShapes) return nullptr;
  return &entries[symbols];
}

Result<bool> replay_recorded(const detail::ModelImpl& model, detail::SessionState& state,
                             RecordedEntry& entry,
                             const std::vector<std::pair<const ir::Value*, Tensor>>& bound) {
  SPLICE_ASSIGN_OR_RETURN(const backend::CallRecorder* recorder, recorder_of(model));
  backend::SessionContext& session = *state.backend_session;
  for (auto& [input, device] : entry.inputs) {
    // A plain pointer: clang 14 cannot capture a structured binding in a lambda.
    const ir::Value* value = input;
    auto it =
        std::find_if(bound.begin(), bound.end(), [&](const auto& b) { return b.first == value; });
    SPLICE_CHECK_OR_RETURN(it != bound.end(), ErrorKind::kInternal,
                           "a recorded call reads input '{}', which this call lacks",
                           value->name());
    SPLICE_TRY(model.backend->copy(device, it->second, &session));
  }
  SPLICE_ASSIGN_OR_RETURN(bool replayed, recorder->replay(session, *entry.call));
  if (!replayed) return false;
  ++state.recordings->stats.replayed;
  SPLICE_TRY(model.backend->synchronize(session));
  return true;
}

std::string replay_blocker(const detail::ModelImpl& model, const detail::SessionState& state,
                           const CallOutputs& outputs) {
  for (const auto& [name, t] : outputs.new_buffers) {
    auto it = state.buffers.find(name);
    if (it == state.buffers.end() || it->second.storage() != t.storage())
      return fmt::format(
          "buffer '{}' gets a new tensor instead of being updated in place, and a replay would "
          "read the old one",
          name);
  }
  return "";
}

namespace {

// What the host spends launching one kernel of a call run step by step, at the low end of what
// was measured (a 16-layer decoder's step of 147 kernels on an H100, bench/RESULTS.md run I:
// 2.40 ms step by step against 1.66 replayed, ~5 us a kernel).
constexpr double kLaunchMicros = 4.0;
// A device-to-device copy's speed in bytes per microsecond (bytes copied, each read and
// written once: ~1.5 TB/s on an H100).
constexpr double kCopyBytesPerMicro = 1.5e6;

}  // namespace

std::string replay_cost_blocker(int64_t copied_bytes, int64_t kernels) {
  const double cost = static_cast<double>(copied_bytes) / kCopyBytesPerMicro;
  const double saved = static_cast<double>(kernels) * kLaunchMicros;
  if (cost <= saved) return "";
  return fmt::format(
      "a replay would copy {} bytes of device inputs and outputs (~{:.0f} us) to save the "
      "launches of {} kernels (~{:.0f} us)",
      copied_bytes, cost, kernels, saved);
}

int64_t replay_copy_bytes(const detail::ModelImpl& model,
                          const std::vector<std::pair<const ir::Value*, Tensor>>& bound,
                          const CallOutputs& outputs) {
  int64_t copied = 0;
  for (const auto& [value, t] : bound)
    if (t.device() == model.backend->device() && !t.storage()->owned()) copied += t.nbytes();
  for (const auto& t : outputs.user_outputs)
    if (t) copied += t->nbytes();
  return copied;
}

void refuse_recording(detail::SessionState& state, RecordedEntry& entry, std::string why) {
  GraphStats& stats = state.recordings->stats;
  ++stats.refused;
  stats.refusal = why;
  entry.refused = std::move(why);
}

void keep_session_memory(const detail::SessionState& state,
                         std::vector<std::shared_ptr<Storage>>& keep) {
  for (const auto& storage : state.workspace)
    if (storage) keep.push_back(storage);
  for (const auto& [name, t] : state.buffers) keep.push_back(t.storage());
}

Result<const backend::CallRecorder*> recorder_of(const detail::ModelImpl& model) {
  const backend::CallRecorder* recorder = model.backend->recorder();
  SPLICE_CHECK_OR_RETURN(recorder != nullptr, ErrorKind::kInternal,
                         "a call is recorded on the {} backend, which records no calls",
                         model.backend->name());
  return recorder;
}

void forget_recordings(detail::SessionState& state) {
  if (state.recordings != nullptr) state.recordings->entries.clear();
}

}  // namespace splice::runtime
