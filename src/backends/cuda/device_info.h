#pragma once
// What launchers need to know about the current device (its compute capability, for NVRTC's
// target, and its multiprocessor count, for grid sizes), queried once per device.

#include <cstdint>

#include "support/error.h"

namespace splice::cuda {

struct DeviceInfo {
  int ordinal = 0;
  int major = 9;  // compute capability
  int minor = 0;
  int multiprocessors = 1;
};

// The current device's properties (cached per ordinal; thread-safe). kBackend when CUDA has no
// usable device (no driver, no GPU).
Result<DeviceInfo> current_device_info();

// Blocks for a grid-stride kernel over `work` items with `threads` per block: enough to cover
// the work, at most 16 per multiprocessor (each thread then loops), at least 1.
unsigned grid_blocks(int64_t work, unsigned threads, const DeviceInfo& device);

// Whether a CUDA device can be used here (for tests that skip without a GPU); never fails.
bool device_available();

}  // namespace splice::cuda
