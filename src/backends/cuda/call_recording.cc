// CUDA graph recording and replay of a session's calls (call_recording.h).
#include "backends/cuda/call_recording.h"

#include <utility>

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace {

class CudaRecordedCall final : public backend::RecordedCall {
 public:
  CudaRecordedCall(cudaGraphExec_t exec, cudaStream_t stream, SessionBlocks blocks, bool checks)
      : exec_(exec), stream_(stream), blocks_(blocks), checks_(checks) {}
  ~CudaRecordedCall() override {
    // Destroying an executable graph needs no sync: the runtime drops recordings between
    // calls, when the session's stream is idle.
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  }
  CudaRecordedCall(const CudaRecordedCall&) = delete;
  CudaRecordedCall& operator=(const CudaRecordedCall&) = delete;

  cudaGraphExec_t exec() const { return exec_; }
  cudaStream_t stream() const { return stream_; }
  const SessionBlocks& blocks() const { return blocks_; }
  bool checks() const { return checks_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
  cudaStream_t stream_ = nullptr;
  SessionBlocks blocks_;
  bool checks_ = false;  // a launch it recorded may write the error word
};

Error graph_error(std::string_view what, cudaError_t status) {
  return make_error(ErrorKind::kBackend, "{}: {} ({})", what, cudaGetErrorName(status),
                    cudaGetErrorString(status));
}

}  // namespace

bool is_recording(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
         status != cudaStreamCaptureStatusNone;
}

Result<void> begin_recording(CudaSession& session, std::vector<std::shared_ptr<Storage>>* keep) {
  session.make_current();
  // What the recording notes is its own (nothing runs while it records): checks left unread
  // (by a call that failed before its end) are read first.
  if (session.checks_unread()) SPLICE_TRY(session.take_device_failure("a call before this one"));
  SPLICE_CUDA_CHECK(cudaStreamBeginCapture(session.stream(), cudaStreamCaptureModeThreadLocal));
  set_recording_keep(keep);
  return ok_result();
}

Result<std::unique_ptr<backend::RecordedCall>> end_recording(CudaSession& session) {
  set_recording_keep(nullptr);
  // Checks noted while recording belong to the replays, which note them again. (Reading the
  // word here would queue a copy into the capture and invalidate it, leaving the stream
  // capturing.)
  const bool checks = session.take_noted_checks();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(session.stream(), &graph);
  if (ended != cudaSuccess || graph == nullptr) {
    // An invalidated capture is not a sticky error: clear it so the call can run without one.
    (void)cudaGetLastError();
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return graph_error("the call could not be recorded as a CUDA graph", ended);
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    (void)cudaGetLastError();
    return graph_error("the recorded CUDA graph could not be instantiated", made);
  }
  return std::unique_ptr<backend::RecordedCall>(
      std::make_unique<CudaRecordedCall>(exec, session.stream(), session.blocks(), checks));
}

Result<bool> replay(CudaSession& session, const backend::RecordedCall& call) {
  const auto* recorded = dynamic_cast<const CudaRecordedCall*>(&call);
  SPLICE_CHECK_OR_RETURN(recorded != nullptr && recorded->stream() == session.stream(),
                         ErrorKind::kInternal,
                         "a recorded call was replayed on a session that did not record it");
  if (recorded->blocks() != session.blocks()) return false;
  session.make_current();
  if (recorded->checks()) session.note_checks();
  SPLICE_CUDA_CHECK(cudaGraphLaunch(recorded->exec(), session.stream()));
  return true;
}

}  // namespace splice::cuda
