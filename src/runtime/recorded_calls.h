#pragma once
// A session's recorded calls (CUDA graphs; docs/cuda.md, "CUDA graphs"), by the values of the
// program's symbols. For a backend that records calls (Backend::recorder():
// backends/call_recorder.h) and a model loaded with them on, a call whose symbol values the
// session has seen run once is recorded — the first run compiled its kernels, grew its
// scratch and chose its library algorithms, none of which a recording may do — and every later
// call with those values replays the recording: the caller's inputs are copied into the device
// tensors it reads, the graph is launched, and its outputs are read from the tensors it writes. A
// write position that arrives as a tensor (cache_position, a 0-d index for index_copy) is read by
// the kernels on the device and is not part of the key, so a decode loop replays one recording; so
// is a position read with .item() that only says where windows start (runtime/device_positions.h).
//
// A call is not recorded (it keeps running step by step, and the reason is kept) when it must
// wait for the device midway (another .item(), a data-dependent size), when it gives a buffer a
// new tensor instead of updating it in place (a replay would read the old one), or when the
// copies a replay adds cost more than the launches it saves (replay_cost_blocker). A
// session keeps at most kMaxRecordedShapes recordings; other shapes run without one.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/executor.h"
#include "splice/splice.h"

namespace splice::runtime {

inline constexpr size_t kMaxRecordedShapes = 8;

// What a session recorded for one set of symbol values.
struct RecordedEntry {
  int calls_run = 0;    // calls with these values run without a recording so far
  std::string refused;  // why these values are never recorded (empty: they may be)
  std::unique_ptr<backend::RecordedCall> call;
  // The device tensors the recording reads the caller's inputs from, by graph input.
  std::vector<std::pair<const ir::Value*, Tensor>> inputs;
  // The recording's results (tensors it writes on every replay).
  CallOutputs outputs;
  // Every storage the recording names, kept so that no other tensor is given its memory.
  std::vector<std::shared_ptr<Storage>> keep;
};

struct CallRecordings {
  std::map<SymBindings, RecordedEntry> entries;
  GraphStats stats;
};

// The entry for a call with `symbols`, or nullptr when this session does not record (the
// backend cannot, the model was loaded without graphs) or already holds the most recordings.
RecordedEntry* recording_for(const detail::ModelImpl& model, detail::SessionState& state,
                             const SymBindings& symbols);

// Replays `entry`'s recording with this call's inputs (`bound`: every graph input's tensor, the
// caller's on the host). False when the recording went stale (nothing ran).
Result<bool> replay_recorded(const detail::ModelImpl& model, detail::SessionState& state,
                             RecordedEntry& entry,
                             const std::vector<std::pair<const ir::Value*, Tensor>>& bound);

// Why a recorded call's results cannot be replayed, or "" when they can: every buffer the
// program mutates must have been updated in place.
std::string replay_blocker(const detail::ModelImpl& model, const detail::SessionState& state,
                           const CallOutputs& outputs);

// Why recording a call would make it slower, or "" when it would not. A replay saves the
// host's launch of each of the plan's `kernels`, but copies `copied_bytes` more: every input the
// caller gave in device memory into the tensor the recording reads, and every output out of the
// memory the recording rewrites (run step by step, a call reads device inputs in place and hands
// its fresh outputs over: replay_copy_bytes). A rotary call over 32 MB in one kernel loses; a
// decoder's step of hundreds of kernels over a few positions gains.
std::string replay_cost_blocker(int64_t copied_bytes, int64_t kernels);

// The bytes a replay of a call that ran as `bound` -> `outputs` copies that running it step by
// step does not.
int64_t replay_copy_bytes(const detail::ModelImpl& model,
                          const std::vector<std::pair<const ir::Value*, Tensor>>& bound,
                          const CallOutputs& outputs);

// Marks `entry`'s symbol values as never recorded, for `why`, and counts the refusal in the
// session's GraphStats (its latest reason is the one graph_stats() reports).
void refuse_recording(detail::SessionState& state, RecordedEntry& entry, std::string why);

// Adds the session memory a recording names besides what it allocated (planned buffers kept
// between calls, the session's buffers) to `keep`.
void keep_session_memory(const detail::SessionState& state,
                         std::vector<std::shared_ptr<Storage>>& keep);

// The backend's call recorder (backends/call_recorder.h); kInternal when it has none, which
// only a runtime bug can reach: nothing is recorded on such a backend (recording_for).
Result<const backend::CallRecorder*> recorder_of(const detail::ModelImpl& model);

// Drops every recording of the session (its buffers were replaced: set_state, reset_state).
void forget_recordings(detail::SessionState& state);

}  // namespace splice::runtime
