#pragma once
// The device half of dependent_launch.h, and launch_dependent for the runtime's kernels.

#include <cuda_runtime.h>

#include <utility>

#include "backends/cuda/dependent_launch.h"

namespace splice::cuda {

// Waits until the kernels before this one have finished and their writes are visible, then
// lets the next kernel launch (its threads then wait in turn; triggering only after the wait
// keeps at most one kernel's blocks waiting on the GPU). A no-op when the launch was not
// dependent, and before sm_90.
__device__ __forceinline__ void dependent_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// A hint to bring the 128-byte line at p into L2; safe before dependent_start() (L2 is where
// every write lands, so the line is never stale), the reads after it then hit L2.
__device__ __forceinline__ void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

// kernel<<<grid, block, smem, stream>>>(args...), dependent where dependent_launch_enabled().
template <typename... Params, typename... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &dependent;
  config.numAttrs = dependent_launch_enabled() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace splice::cuda
