// NVRTC compilation to cubins and the process-wide module cache. The cache maps (device,
// source) to an entry whose compile runs under std::call_once, outside the map's lock: one
// source compiles once while other sources compile in parallel.
#include "backends/cuda/nvrtc_compiler.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/nvrtc_library.h"

namespace splice::cuda {

namespace {

std::atomic<int64_t> g_compiles{0};

Error nvrtc_error(const NvrtcLibrary& nvrtc, nvrtcResult status, const char* what,
                  const std::string& log = "") {
  return make_error(ErrorKind::kBackend, "NVRTC {} failed: {}{}{}", what,
                    nvrtc.GetErrorString(status), log.empty() ? "" : "\n", log);
}

struct Entry {
  std::once_flag once;
  std::unique_ptr<Result<LoadedModule>> module;
};

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: modules outlive static destructors
  return *c;
}

Result<LoadedModule> compile_and_load(const std::string& source,
                                      std::span<const char* const> kernel_names,
                                      const DeviceInfo& device) {
  SPLICE_ASSIGN_OR_RETURN(const DriverApi* api, driver_api());
  SPLICE_ASSIGN_OR_RETURN(std::string cubin,
                          compile_to_cubin(source, device.major * 10 + device.minor));
  // The runtime's primary context must be current on this thread for cuModuleLoadData.
  SPLICE_CUDA_CHECK(cudaSetDevice(device.ordinal));
  LoadedModule loaded;
  SPLICE_CU_CHECK(api, module_load_data(&loaded.module, cubin.data()));
  for (const char* name : kernel_names) {
    CUfunction f = nullptr;
    const CUresult status = api->module_get_function(&f, loaded.module, name);
    if (status != CUDA_SUCCESS) {
      (void)api->module_unload(loaded.module);
      return driver_error(status, name).with_context("looking up a generated kernel");
    }
    loaded.kernels.push_back(f);
  }
  return loaded;
}

}  // namespace

Result<std::string> compile_to_cubin(const std::string& source, int arch) {
  SPLICE_ASSIGN_OR_RETURN(const NvrtcLibrary* nvrtc, open_nvrtc());
  g_compiles.fetch_add(1, std::memory_order_relaxed);
  nvrtcProgram program = nullptr;
  nvrtcResult status =
      nvrtc->CreateProgram(&program, source.c_str(), "splice_generated.cu", 0, nullptr, nullptr);
  if (status != NVRTC_SUCCESS) return nvrtc_error(*nvrtc, status, "program creation");
  struct Destroy {
    const NvrtcLibrary* nvrtc;
    nvrtcProgram* p;
    ~Destroy() { nvrtc->DestroyProgram(p); }
  } destroy{nvrtc, &program};
  const std::string arch_option = "--gpu-architecture=sm_" + std::to_string(arch);
  const char* options[] = {arch_option.c_str(), "-std=c++17",       "--fmad=false",
                           "--prec-div=true",   "--prec-sqrt=true", "--ftz=false"};
  status = nvrtc->CompileProgram(program, sizeof(options) / sizeof(options[0]), options);
  if (status != NVRTC_SUCCESS) {
    size_t log_size = 0;
    std::string log;
    if (nvrtc->GetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      if (nvrtc->GetProgramLog(program, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    return nvrtc_error(*nvrtc, status, "compilation of a generated kernel", log);
  }
  size_t size = 0;
  status = nvrtc->GetCUBINSize(program, &size);
  if (status != NVRTC_SUCCESS) return nvrtc_error(*nvrtc, status, "cubin size query");
  std::string cubin(size, '\0');
  status = nvrtc->GetCUBIN(program, cubin.data());
  if (status != NVRTC_SUCCESS) return nvrtc_error(*nvrtc, status, "cubin retrieval");
  return cubin;
}

Result<const LoadedModule*> load_module(const std::string& source,
                                        std::span<const char* const> kernel_names) {
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  std::string key = std::to_string(device.ordinal) + ":";
  for (const char* name : kernel_names) key += std::string(name) + ",";
  key += "\n" + source;
  std::shared_ptr<Entry> entry;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto& slot = c.entries[key];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  std::call_once(entry->once, [&] {
    entry->module =
        std::make_unique<Result<LoadedModule>>(compile_and_load(source, kernel_names, device));
  });
  if (!entry->module->ok()) return entry->module->error();
  return &entry->module->value();
}

int64_t nvrtc_compile_count() { return g_compiles.load(std::memory_order_relaxed); }

}  // namespace splice::cuda
