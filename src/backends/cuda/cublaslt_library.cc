// open_cublaslt: dlopen of libcublasLt and dlsym of the entry points splice uses, once per
// process (cublaslt_library.h says why it is not linked).
#include "backends/cuda/cublaslt_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

namespace splice::cuda {

namespace {

// The soname matching the headers this build compiled against (ABI of that major version).
std::string soname() { return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR); }

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr && missing.empty()) missing = name;
  return fn != nullptr;
}

struct Opened {
  CublasLtLibrary table{};
  std::string error;  // empty when the table is complete
};

Opened open_once() {
  Opened o;
  const std::string name = soname();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string reason = handle == nullptr ? dlerror() : "";
  if (handle == nullptr) {
    const std::string beside = toolkit_library_folder();
    if (!beside.empty()) handle = dlopen((beside + name).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    o.error = "cannot load " + name + " (cuBLASLt, needed for matmuls on the GPU): " + reason;
    return o;
  }
  // The handle stays open for the life of the process: the table points into it.
  std::string missing;
  CublasLtLibrary& t = o.table;
  resolve(handle, "cublasLtCreate", t.Create, missing);
  resolve(handle, "cublasLtDestroy", t.Destroy, missing);
  resolve(handle, "cublasLtGetStatusName", t.GetStatusName, missing);
  resolve(handle, "cublasLtGetStatusString", t.GetStatusString, missing);
  resolve(handle, "cublasLtMatmul", t.Matmul, missing);
  resolve(handle, "cublasLtMatmulAlgoGetHeuristic", t.MatmulAlgoGetHeuristic, missing);
  resolve(handle, "cublasLtMatmulDescCreate", t.MatmulDescCreate, missing);
  resolve(handle, "cublasLtMatmulDescDestroy", t.MatmulDescDestroy, missing);
  resolve(handle, "cublasLtMatmulDescSetAttribute", t.MatmulDescSetAttribute, missing);
  resolve(handle, "cublasLtMatmulPreferenceCreate", t.MatmulPreferenceCreate, missing);
  resolve(handle, "cublasLtMatmulPreferenceDestroy", t.MatmulPreferenceDestroy, missing);
  resolve(handle, "cublasLtMatmulPreferenceSetAttribute", t.MatmulPreferenceSetAttribute, missing);
  resolve(handle, "cublasLtMatrixLayoutCreate", t.MatrixLayoutCreate, missing);
  resolve(handle, "cublasLtMatrixLayoutDestroy", t.MatrixLayoutDestroy, missing);
  resolve(handle, "cublasLtMatrixLayoutSetAttribute", t.MatrixLayoutSetAttribute, missing);
  if (!missing.empty()) o.error = name + " has no " + missing + " (another cuBLASLt version?)";
  return o;
}

const Opened& opened() {
  static const Opened o = open_once();  // thread-safe one-time initialisation
  return o;
}

}  // namespace

// The folder of the libcudart this process runs with: the toolkit's library folder, where
// cuBLASLt and NVRTC are installed beside it when the loader's path does not name them.
std::string toolkit_library_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudaGetDeviceCount), &info) == 0 ||
      info.dli_fname == nullptr)
    return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

Result<const CublasLtLibrary*> open_cublaslt() {
  const Opened& o = opened();
  if (!o.error.empty()) return make_error(ErrorKind::kBackend, "{}", o.error);
  return &o.table;
}

const CublasLtLibrary& cublaslt() { return opened().table; }

}  // namespace splice::cuda
