// open_nvrtc: dlopen of libnvrtc and dlsym of the entry points splice uses, once per process
// (nvrtc_library.h says why it is not linked).
#include "backends/cuda/nvrtc_library.h"

#include <cuda_runtime_api.h>

#include <string>

#include "backends/cuda/cublaslt_library.h"
#include "support/shared_library.h"

namespace splice::cuda {

namespace {

struct Opened {
  NvrtcLibrary table{};
  std::string error;  // empty when the table is complete
};

Opened open_once() {
  Opened o;
  // NVRTC's soname carries the toolkit's major version (libnvrtc.so.13 for CUDA 13).
  const std::string name = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
  std::string reason;
  void* handle = open_shared_library(name, toolkit_library_folder(), reason);
  if (handle == nullptr) {
    o.error = "cannot load " + name + " (NVRTC, needed to compile kernels for the GPU): " + reason;
    return o;
  }
  // The handle stays open for the life of the process: the table points into it.
  std::string missing;
  NvrtcLibrary& t = o.table;
  resolve_symbol(handle, "nvrtcGetErrorString", t.GetErrorString, missing);
  resolve_symbol(handle, "nvrtcCreateProgram", t.CreateProgram, missing);
  resolve_symbol(handle, "nvrtcDestroyProgram", t.DestroyProgram, missing);
  resolve_symbol(handle, "nvrtcCompileProgram", t.CompileProgram, missing);
  resolve_symbol(handle, "nvrtcGetProgramLogSize", t.GetProgramLogSize, missing);
  resolve_symbol(handle, "nvrtcGetProgramLog", t.GetProgramLog, missing);
  resolve_symbol(handle, "nvrtcGetCUBINSize", t.GetCUBINSize, missing);
  resolve_symbol(handle, "nvrtcGetCUBIN", t.GetCUBIN, missing);
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
