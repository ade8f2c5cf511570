#pragma once
// What every CUDA launcher takes besides its tensors: the stream to enqueue on, the call's
// error word for device-side checks (error_word.h) with the site id recorded on failure (the
// caller's id for the node: its plan step), and a Workspace for launchers that need scratch.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splice::cuda {

class Workspace;

struct LaunchContext {
  cudaStream_t stream = nullptr;
  // Device pointer to the error word; launchers whose kernels check something (indices,
  // positions read on the device, integer division) refuse to launch without one.
  int64_t* error_word = nullptr;
  int64_t site = 0;
  Workspace* workspace = nullptr;
};

}  // namespace splice::cuda
