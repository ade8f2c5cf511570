#pragma once
// What launchers need to know about the current device (its compute capability, for NVRTC's
// target; its multiprocessor count, for grid sizes; the shared memory a block may opt into),
// queried once per device and cached (the cached reads are allowed during stream capture).

#include <cstddef>
#include <cstdint>
#include <string>

#include "support/error.h"

namespace splice::cuda {

struct DeviceInfo {
  int ordinal = 0;
  int major = 9;  // compute capability
  int minor = 0;
  int multiprocessors = 1;
  size_t max_smem_optin = 48 * 1024;  // dynamic shared memory one block may opt into
};

// The current device's properties (cached per ordinal; thread-safe). kBackend when CUDA has no
// usable device (no driver, no GPU).
Result<DeviceInfo> current_device_info();

// Multiprocessors of the current device (current_device_info().multiprocessors).
Result<int> current_sm_count();
// The most dynamic shared memory one block of the current device may opt into
// (cudaFuncSetAttribute).
Result<size_t> current_max_smem_optin();

// Blocks for a grid-stride kernel over `work` items with `threads` per block: enough to cover
// the work, at most 16 per multiprocessor (each thread then loops), at least 1.
unsigned grid_blocks(int64_t work, unsigned threads, const DeviceInfo& device);

// The current device as the engine cache keys it (Backend::identity): its name, compute
// capability, multiprocessors and memory, the driver's and the CUDA runtime's versions and the
// cuBLASLt version splice was built for (the library it opens is of that major version).
// "no CUDA device" when there is none usable; never fails.
std::string device_identity();

// Whether a CUDA device can be used here (for tests that skip without a GPU); never fails.
bool device_available();

}  // namespace splice::cuda
