#pragma once
// cuBLASLt, opened with dlopen when the first matmul runner is made instead of linked. Linking
// libcublasLt made every process that loads splice — the CLI on a CPU-only machine, each of
// CI's 7,000 test processes — spend about 0.3 s and 200 MB of touched pages at start on the
// library's relocations, GPU or not. The entry points splice calls are resolved once; the
// types and enums still come from <cublasLt.h>.

#include <cublasLt.h>

#include <string>

#include "support/error.h"

namespace splice::cuda {

struct CublasLtLibrary {
  decltype(&cublasLtCreate) Create;
  decltype(&cublasLtDestroy) Destroy;
  decltype(&cublasLtGetStatusName) GetStatusName;
  decltype(&cublasLtGetStatusString) GetStatusString;
  decltype(&cublasLtMatmul) Matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate;
  decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute;
};

// Opens libcublasLt.so.<major of the headers> (the loader's search path first, then the folder
// of the libcudart this process loaded) on the first call; later calls return the same table
// or the same error (kBackend, naming the library and dlerror's reason).
Result<const CublasLtLibrary*> open_cublaslt();

// The folder (ending in '/') of the libcudart this process loaded, where the toolkit's other
// libraries lie when the loader's search path does not name them; "" when unknown.
std::string toolkit_library_folder();

// The table once open_cublaslt() has succeeded in this process (a MatmulRunner exists).
const CublasLtLibrary& cublaslt();

}  // namespace splice::cuda
