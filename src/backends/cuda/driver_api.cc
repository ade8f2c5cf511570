// Driver API entry points through the CUDA runtime (cudaGetDriverEntryPointByVersion), resolved
// once per process. The runtime reports a missing driver as an error status, which becomes the
// Error every later caller gets; nothing here aborts.
#include "backends/cuda/driver_api.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <optional>

namespace splice::cuda {

namespace {

// The driver ABI version the entry points are requested at: CUDA 12.0's versions of these
// functions (unchanged since; a 12.x or 13.x driver provides them).
constexpr unsigned kDriverAbiVersion = 12000;

template <typename Fn>
Result<void> lookup(const char* symbol, Fn*& out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverAbiVersion, cudaEnableDefault, &query);
  if (status != cudaSuccess) {
    return make_error(ErrorKind::kBackend,
                      "the CUDA driver is not available ({}: {}) while looking up {}",
                      cudaGetErrorName(status), cudaGetErrorString(status), symbol);
  }
  if (query != cudaDriverEntryPointSuccess || fn == nullptr) {
    return make_error(ErrorKind::kBackend,
                      "the CUDA driver has no entry point {} for ABI version {} (query result {})",
                      symbol, kDriverAbiVersion, static_cast<int>(query));
  }
  out = reinterpret_cast<Fn*>(fn);
  return ok_result();
}

Result<DriverApi> load() {
  DriverApi api;
  SPLICE_TRY(lookup("cuModuleLoadData", api.module_load_data));
  SPLICE_TRY(lookup("cuModuleUnload", api.module_unload));
  SPLICE_TRY(lookup("cuModuleGetFunction", api.module_get_function));
  SPLICE_TRY(lookup("cuLaunchKernelEx", api.launch_kernel_ex));
  SPLICE_TRY(lookup("cuGetErrorName", api.get_error_name));
  SPLICE_TRY(lookup("cuGetErrorString", api.get_error_string));
  return api;
}

}  // namespace

Result<const DriverApi*> driver_api() {
  static std::once_flag once;
  static std::optional<Result<DriverApi>> loaded;
  std::call_once(once, [] { loaded.emplace(load()); });
  if (!loaded->ok()) return loaded->error();
  return &loaded->value();
}

Error driver_error(CUresult status, const char* call) {
  const char* name = "unknown CUresult";
  const char* text = "";
  if (auto api = driver_api(); api.ok()) {
    if ((*api)->get_error_name(status, &name) != CUDA_SUCCESS) name = "unknown CUresult";
    if ((*api)->get_error_string(status, &text) != CUDA_SUCCESS) text = "";
  }
  return make_error(ErrorKind::kBackend, "CUDA driver error {} ({}, code {}) in {}", name, text,
                    static_cast<int>(status), call);
}

}  // namespace splice::cuda
