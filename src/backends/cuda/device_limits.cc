// The current device's multiprocessor count and shared-memory limit, cached per device (up to
// 64 devices; later ones are queried every time) so launchers do not query on every call.
#include "backends/cuda/device_limits.h"

#include <cuda_runtime_api.h>

#include <atomic>

#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace {

constexpr int kCachedDevices = 64;

Result<int> cached_attribute(std::atomic<int> (&cache)[kCachedDevices], cudaDeviceAttr attr) {
  int device = 0;
  SPLICE_CUDA_CHECK(cudaGetDevice(&device));
  if (device >= 0 && device < kCachedDevices) {
    const int v = cache[device].load(std::memory_order_relaxed);
    if (v > 0) return v;
  }
  int value = 0;
  SPLICE_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  if (device >= 0 && device < kCachedDevices) cache[device].store(value, std::memory_order_relaxed);
  return value;
}

std::atomic<int> sm_counts[kCachedDevices];
std::atomic<int> smem_optin[kCachedDevices];

}  // namespace

Result<int> current_sm_count() {
  return cached_attribute(sm_counts, cudaDevAttrMultiProcessorCount);
}

Result<size_t> current_max_smem_optin() {
  SPLICE_ASSIGN_OR_RETURN(int v,
                          cached_attribute(smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin));
  return static_cast<size_t>(v);
}

}  // namespace splice::cuda
