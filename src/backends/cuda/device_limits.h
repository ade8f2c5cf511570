#pragma once
// Properties of the current CUDA device that launchers size their grids and shared memory by,
// read once per device and cached (cudaDeviceGetAttribute is allowed during stream capture).

#include <cstddef>

#include "support/error.h"

namespace splice::cuda {

// Multiprocessors of the current device.
Result<int> current_sm_count();
// The most dynamic shared memory one block may opt into (cudaFuncSetAttribute).
Result<size_t> current_max_smem_optin();

}  // namespace splice::cuda
