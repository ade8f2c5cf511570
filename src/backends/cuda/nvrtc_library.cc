// open_nvrtc: dlopen of libnvrtc and dlsym of the entry points splice uses, once per process
// (nvrtc_library.h says why it is not linked).
#include "backends/cuda/nvrtc_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "backends/cuda/cublaslt_library.h"

namespace splice::cuda {

namespace {

template <typename Fn>
void resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr && missing.empty()) missing = name;
}

struct Opened {
  NvrtcLibrary table{};
  std::string error;  // empty when the table is complete
};

Opened open_once() {
  Opened o;
  // NVRTC's soname carries the toolkit's major version (libnvrtc.so.13 for CUDA 13).
  const std::string name = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string reason = handle == nullptr ? dlerror() : "";
  if (handle == nullptr) {
    const std::string beside = toolkit_library_folder();
    if (!beside.empty()) handle = dlopen((beside + name).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    o.error = "cannot load " + name + " (NVRTC, needed to compile kernels for the GPU): " + reason;
    return o;
  }
  // The handle stays open for the life of the process: the table points into it.
  std::string missing;
  NvrtcLibrary& t = o.table;
  resolve(handle, "nvrtcGetErrorString", t.GetErrorString, missing);
  resolve(handle, "nvrtcCreateProgram", t.CreateProgram, missing);
  resolve(handle, "nvrtcDestroyProgram", t.DestroyProgram, missing);
  resolve(handle, "nvrtcCompileProgram", t.CompileProgram, missing);
  resolve(handle, "nvrtcGetProgramLogSize", t.GetProgramLogSize, missing);
  resolve(handle, "nvrtcGetProgramLog", t.GetProgramLog, missing);
  resolve(handle, "nvrtcGetCUBINSize", t.GetCUBINSize, missing);
  resolve(handle, "nvrtcGetCUBIN", t.GetCUBIN, missing);
  if (!missing.empty()) o.error = name + " has no " + missing + " (another NVRTC version?)";
  return o;
}

}  // namespace

Result<const NvrtcLibrary*> open_nvrtc() {
  static const Opened o = open_once();  // thread-safe one-time initialisation
  if (!o.error.empty()) return make_error(ErrorKind::kBackend, "{}", o.error);
  return &o.table;
}

}  // namespace splice::cuda
