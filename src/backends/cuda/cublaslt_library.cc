// open_cublaslt: dlopen of libcublasLt and dlsym of the entry points splice uses, once per
// process (cublaslt_library.h says why it is not linked).
#include "backends/cuda/cublaslt_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "support/shared_library.h"

namespace splice::cuda {

namespace {

// The soname matching the headers this build compiled against (ABI of that major version).
std::string soname() { return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR); }

struct Opened {
  CublasLtLibrary table{};
  std::string error;  // empty when the table is complete
};

Opened open_once() {
  Opened o;
  const std::string name = soname();
  std::string reason;
  void* handle = open_shared_library(name, toolkit_library_folder(), reason);
  if (handle == nullptr) {
    o.error = "cannot load " + name + " (cuBLASLt, needed for matmuls on the GPU): " + reason;
    return o;
  }
  // The handle stays open for the life of the process: the table points into it.
  std::string missing;
  CublasLtLibrary& t = o.table;
  resolve_symbol(handle, "cublasLtCreate", t.Create, missing);
  resolve_symbol(handle, "cublasLtDestroy", t.Destroy, missing);
  resolve_symbol(handle, "cublasLtGetStatusName", t.GetStatusName, missing);
  resolve_symbol(handle, "cublasLtGetStatusString", t.GetStatusString, missing);
  resolve_symbol(handle, "cublasLtMatmul", t.Matmul, missing);
  resolve_symbol(handle, "cublasLtMatmulAlgoGetHeuristic", t.MatmulAlgoGetHeuristic, missing);
  resolve_symbol(handle, "cublasLtMatmulDescCreate", t.MatmulDescCreate, missing);
  resolve_symbol(handle, "cublasLtMatmulDescDestroy", t.MatmulDescDestroy, missing);
  resolve_symbol(handle, "cublasLtMatmulDescSetAttribute", t.MatmulDescSetAttribute, missing);
  resolve_symbol(handle, "cublasLtMatmulPreferenceCreate", t.MatmulPreferenceCreate, missing);
  resolve_symbol(handle, "cublasLtMatmulPreferenceDestroy", t.MatmulPreferenceDestroy, missing);
  resolve_symbol(handle, "cublasLtMatmulPreferenceSetAttribute", t.MatmulPreferenceSetAttribute,
                 missing);
  resolve_symbol(handle, "cublasLtMatrixLayoutCreate", t.MatrixLayoutCreate, missing);
  resolve_symbol(handle, "cublasLtMatrixLayoutDestroy", t.MatrixLayoutDestroy, missing);
  resolve_symbol(handle, "cublasLtMatrixLayoutSetAttribute", t.MatrixLayoutSetAttribute, missing);
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
