#pragma once
// Recording a CUDA session's calls as CUDA graphs: the backend's side of
// CallRecorder::begin_recording / end_recording / replay (backends/call_recorder.h;
// docs/cuda.md, "CUDA graphs").
//
// Capture runs in cudaStreamCaptureModeThreadLocal: only this thread's own capture-unsafe calls
// (a stream sync, a blocking copy) break it, so another session allocating or uploading on
// another thread cannot. Whatever waits for the device while recording fails the recording
// (the runtime then runs the call without a graph), and host<->device copies are refused while
// recording: a graph would replay a pageable host address that is gone by then.
//
// A recorded call names device memory: the call's tensors (kept alive by the runtime through
// the allocator's keep list) and the session's own scratch and launcher workspace. Those two
// are the session's and may be reallocated when a later call needs more; a recorded call made
// before that is stale (replay() returns false) and is recorded again.

#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"

namespace splice::cuda {

Result<void> begin_recording(CudaSession& session, std::vector<std::shared_ptr<Storage>>* keep);
Result<std::unique_ptr<backend::RecordedCall>> end_recording(CudaSession& session);
Result<bool> replay(CudaSession& session, const backend::RecordedCall& call);

// Whether the session's stream is being recorded right now.
bool is_recording(cudaStream_t stream);

}  // namespace splice::cuda
