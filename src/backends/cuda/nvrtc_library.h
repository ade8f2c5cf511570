#pragma once
// NVRTC, opened with dlopen when the first generated kernel is compiled instead of linked.
// Linking libnvrtc (about 100 MB of mappings) made every process that loads splice map it at
// start, GPU or not: under `ulimit -v 100000` even `splice --help` failed to start (issue 34).
// The entry points splice calls are resolved once; the types still come from <nvrtc.h>.

#include <nvrtc.h>

#include "support/error.h"

namespace splice::cuda {

struct NvrtcLibrary {
  decltype(&nvrtcGetErrorString) GetErrorString;
  decltype(&nvrtcCreateProgram) CreateProgram;
  decltype(&nvrtcDestroyProgram) DestroyProgram;
  decltype(&nvrtcCompileProgram) CompileProgram;
  decltype(&nvrtcGetProgramLogSize) GetProgramLogSize;
  decltype(&nvrtcGetProgramLog) GetProgramLog;
  decltype(&nvrtcGetCUBINSize) GetCUBINSize;
  decltype(&nvrtcGetCUBIN) GetCUBIN;
};

// Opens libnvrtc.so.<CUDA major of the headers> (the loader's search path first, then the
// folder of the libcudart this process loaded) on the first call; later calls return the same
// table or the same error (kBackend, naming the library and dlerror's reason).
Result<const NvrtcLibrary*> open_nvrtc();

}  // namespace splice::cuda
