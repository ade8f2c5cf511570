#pragma once
// An optional part of a backend: recording a session's queued work once and replaying it
// (CUDA graphs; docs/cuda.md, "CUDA graphs"), with the positions such a recording reads on the
// device instead of the host (runtime/device_positions.h). Only a backend with a queue that can
// be recorded has one (Backend::recorder() returns it); the others return nullptr and the
// runtime runs every call step by step. The same shape as ggml's CUDA graphs, which live
// inside its CUDA backend, and IREE's recorded command buffers replayed with indirect bindings:
// the runtime decides *when* a call is recorded and replayed (runtime/recorded_calls.h), the
// recorder *how*.
//
// Everything a recording needs is here and nowhere on Backend, so a backend that records
// nothing implements none of it, and a new recording feature grows this interface, not the
// core every backend implements.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ir/sym.h"
#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::backend {

class SessionContext;

// A call recorded on a session's queue instead of run (a CUDA graph): replaying it queues the
// same work on the same memory again.
class RecordedCall {
 public:
  virtual ~RecordedCall() = default;
};

// A window of a tensor whose start along `dim` is read on the device when the copy runs
// (runtime/device_positions.h): entry `slot` of `positions`, an int64 tensor that
// CallRecorder::bind_positions made. The window tensor itself is the view at position 0.
struct WindowPosition {
  const Tensor* positions = nullptr;
  int64_t slot = 0;
  int64_t dim = 0;       // the dim the window moves along
  int64_t dim_size = 0;  // that dim's size in the tensor the window lies in
  bool in_dst = true;    // the window is the copy's destination (a write), else its source
};

// Records a session's calls and replays them. One object per backend, shared by all its
// sessions (every method takes the session it works on), living as long as the backend.
class CallRecorder {
 public:
  virtual ~CallRecorder() = default;

  // Starts recording `session`'s queue: work queued from now on is recorded, not run. Until
  // end_recording, every allocation this thread makes on the backend is also appended to
  // `keep`, so the memory the recording names stays its own (nothing else is handed it while
  // the caller keeps `keep`). Anything that must wait for the device (a copy to the host, a
  // buffer that grows) fails while recording, and so does copying from the host.
  virtual Result<void> begin_recording(SessionContext& session,
                                       std::vector<std::shared_ptr<Storage>>* keep) const = 0;
  // Ends the recording begin_recording started (always call it once that succeeded, also when
  // the call failed): the recorded call, or an Error saying why it cannot be replayed.
  virtual Result<std::unique_ptr<RecordedCall>> end_recording(SessionContext& session) const = 0;
  // Queues a recorded call of this session again. False (nothing queued) when it went stale:
  // memory it names was given up since (a session buffer grew), so it must be recorded again.
  virtual Result<bool> replay(SessionContext& session, const RecordedCall& call) const = 0;

  // Positions read on the device, for calls being recorded (runtime/device_positions.h): a
  // new int64 device tensor holding value + offsets[i], where value is the one element of
  // `source` (an integer tensor on this device) read when the work runs. A value outside
  // `range` fails the call when its results are read, with an error naming `context` (the
  // .item() node and its symbol); copies at the positions then write nothing.
  virtual Result<Tensor> bind_positions(SessionContext& session, const Tensor& source,
                                        std::span<const int64_t> offsets, const SymRange& range,
                                        std::string_view context) const = 0;
  // dst = src (src converted and broadcast to dst), where one of them is a window that starts
  // at a position read on the device (`at`); a position that puts the window outside its
  // tensor fails the call when its results are read, naming `context`, and writes nothing.
  virtual Result<void> copy_at_position(SessionContext& session, const Tensor& dst,
                                        const Tensor& src, const WindowPosition& at,
                                        std::string_view context) const = 0;
};

}  // namespace splice::backend
