#pragma once
// The CUDA backend behind the backend interface (backends/backend.h), registered as "cuda"
// when its library is linked. Memory comes from the caching allocator (caching_allocator.h);
// a model's context pins the device (weights are uploaded once by the runtime through
// allocate/copy and shared by its sessions); a session owns a stream, the error word its
// kernels' device-side checks record into, a workspace and a scratch block (grown only when a
// call needs more, so repeated calls allocate nothing), and a cuBLASLt runner with its own
// fixed workspace. Kernels (cuda_kernels.h) run on the calling session's stream, which is
// also where Session::measure's probe times a call and counts its launches (call_probe.h).
//
// Without a usable GPU (no driver, no device) the backend still registers, so plans for the
// cuda target can be made on any machine; opening a model fails with a kBackend Error that
// says so.

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/error_word.h"
#include "backends/cuda/kernel_scratch.h"
#include "backends/cuda/launch_context.h"
#include "backends/cuda/matmul.h"

namespace splice::cuda {

// The blocks a session owns that its kernels use besides their tensors (scratch, the launcher
// workspace): a recorded call is valid only while they stay where they were.
struct SessionBlocks {
  const void* scratch = nullptr;
  const void* workspace = nullptr;
  bool operator==(const SessionBlocks&) const = default;
};

// A session's execution context on the GPU.
class CudaSession final : public backend::SessionContext {
 public:
  static Result<std::unique_ptr<CudaSession>> create(int device);
  ~CudaSession() override;
  CudaSession(const CudaSession&) = delete;
  CudaSession& operator=(const CudaSession&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  ErrorWord& error_word() { return error_word_; }
  Workspace& workspace() { return workspace_; }
  MatmulRunner& matmul() { return *matmul_; }
  // Scratch of at least `bytes` for one launch (valid until the next call; grows after a
  // stream sync, never shrinks).
  Result<KernelScratch> scratch(size_t bytes);
  // A LaunchContext on this session's stream with its error word and workspace.
  LaunchContext launch() { return {stream_, error_word_.device(), 0, &workspace_}; }
  // The site a checked launch of `op` records a failure under while the stream is being
  // recorded. A recorded call's checks are read when the call ends, not after each launch (that
  // would wait for the device inside the recording), so the site is what names the op then.
  int64_t recording_site(std::string_view op);
  // Every launch that may record a failure in the error word says so here (Ctx::launch(true),
  // a checked pointwise group, a window at a device position, a recorded call's checked
  // launch and so its replays), so that synchronize() reads the word only when something
  // since its last read could have written it: a call of unchecked kernels waits for its
  // stream and copies nothing back.
  void note_checks() { checks_unread_ = true; }
  bool checks_unread() const { return checks_unread_; }
  // The note_checks() since the last read, forgotten without reading the word: for a recording,
  // whose launches ran nothing (the word is as its last read left it), and which must not touch
  // the stream before its capture ends.
  bool take_noted_checks() { return std::exchange(checks_unread_, false); }
  // Reads the error word (waits for the stream): the first device-side check that failed
  // since the last read, as the CPU backend's Error (prefixed with `context`); the word is
  // cleared for the next call.
  Result<void> take_device_failure(std::string_view context);
  // Makes this session's stream the one the caching allocator keys this thread's memory by.
  void make_current() const;
  SessionBlocks blocks() const { return {scratch_.data(), workspace_.data()}; }
  // Makes this session's stream wait for the work queued on `other` so far.
  Result<void> wait_for(cudaStream_t other);

 private:
  CudaSession() = default;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;  // recorded on a caller's stream by wait_for
  ErrorWord error_word_;
  Workspace workspace_;
  DeviceBuffer scratch_;
  DeviceBuffer counters_;  // KernelScratch::counters, zeroed once at creation
  DeviceBuffer matmul_workspace_;
  std::unique_ptr<MatmulRunner> matmul_;
  std::vector<std::string> site_ops_;  // recording_site(op) - 1 -> op
  bool checks_unread_ = false;         // note_checks() since the error word's last read
};

// The CUDA session of a kernel call (kInternal when the call came from another backend's
// session or none).
Result<CudaSession*> cuda_session(backend::SessionContext* session);

// The device the CUDA backend runs on.
inline constexpr Device kCudaDevice{DeviceType::kCUDA, 0};

}  // namespace splice::cuda
