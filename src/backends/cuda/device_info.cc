// Device queries through the CUDA runtime, cached per device ordinal.
#include "backends/cuda/device_info.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <array>
#include <mutex>
#include <optional>

#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace {
constexpr int kMaxDevices = 64;
std::mutex g_mutex;
std::array<std::optional<DeviceInfo>, kMaxDevices> g_infos;
}  // namespace

Result<DeviceInfo> current_device_info() {
  int ordinal = 0;
  SPLICE_CUDA_CHECK(cudaGetDevice(&ordinal));
  SPLICE_CHECK_OR_RETURN(ordinal >= 0 && ordinal < kMaxDevices, ErrorKind::kBackend,
                         "CUDA device ordinal {} is beyond the {} devices splice tracks", ordinal,
                         kMaxDevices);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_infos[ordinal]) return *g_infos[ordinal];
  DeviceInfo info;
  info.ordinal = ordinal;
  SPLICE_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.major, cudaDevAttrComputeCapabilityMajor, ordinal));
  SPLICE_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.minor, cudaDevAttrComputeCapabilityMinor, ordinal));
  SPLICE_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.multiprocessors, cudaDevAttrMultiProcessorCount, ordinal));
  int smem = 0;
  SPLICE_CUDA_CHECK(
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  info.max_smem_optin = static_cast<size_t>(smem);
  g_infos[ordinal] = info;
  return info;
}

Result<int> current_sm_count() {
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo info, current_device_info());
  return info.multiprocessors;
}

Result<size_t> current_max_smem_optin() {
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo info, current_device_info());
  return info.max_smem_optin;
}

unsigned grid_blocks(int64_t work, unsigned threads, const DeviceInfo& device) {
  const int64_t needed = (work + threads - 1) / threads;
  const int64_t cap = int64_t{device.multiprocessors} * 16;
  return static_cast<unsigned>(needed < 1 ? 1 : needed > cap ? cap : needed);
}

std::string device_identity() {
  if (!device_available()) return "no CUDA device";
  int ordinal = 0, driver = 0, runtime = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&ordinal) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess ||
      cudaDriverGetVersion(&driver) != cudaSuccess ||
      cudaRuntimeGetVersion(&runtime) != cudaSuccess) {
    (void)cudaGetLastError();  // the sticky error of a failed query is not the caller's
    return "unknown CUDA device";
  }
  return fmt::format("{} sm_{}{} {} SMs {} bytes; driver {} runtime {} cublasLt {}", prop.name,
                     prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem, driver,
                     runtime, CUBLAS_VERSION);
}

bool device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the (non-sticky) "no driver / no device" status
    return false;
  }
  return count > 0;
}

}  // namespace splice::cuda
