// dependent_launch.h's host half: whether launches may be dependent, and the driver launch of
// NVRTC-compiled kernels.
#include "backends/cuda/dependent_launch.h"

#include <cstdlib>
#include <string_view>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/driver_api.h"

namespace splice::cuda {

namespace {

// Dependent launches on a device of this compute capability (SPLICE_PDL read once).
bool dependent_on(const DeviceInfo& device) {
  static const bool switched_off = [] {
    const char* value = std::getenv("SPLICE_PDL");
    return value != nullptr && std::string_view(value) == "0";
  }();
  return !switched_off && device.major >= 9;
}

}  // namespace

bool dependent_launch_enabled() {
  auto device = current_device_info();
  return device.ok() && dependent_on(*device);
}

Result<void> launch_module_kernel(CUfunction kernel, unsigned grid_x, unsigned grid_y,
                                  unsigned threads, cudaStream_t stream, void** args) {
  // The driver launch needs the runtime's primary context current on this thread, which a
  // thread whose first CUDA call this is does not have yet.
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  thread_local int bound_device = -1;
  if (bound_device != device.ordinal) {
    SPLICE_CUDA_CHECK(cudaSetDevice(device.ordinal));
    bound_device = device.ordinal;
  }
  SPLICE_ASSIGN_OR_RETURN(const DriverApi* api, driver_api());
  CUlaunchAttribute dependent{};
  dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  dependent.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = reinterpret_cast<CUstream>(stream);
  config.attrs = &dependent;
  config.numAttrs = dependent_on(device) ? 1 : 0;
  SPLICE_CU_CHECK(api, launch_kernel_ex(&config, kernel, args, nullptr));
  return ok_result();
}

}  // namespace splice::cuda
