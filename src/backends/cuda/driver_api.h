#pragma once
// The CUDA driver API entry points splice uses (loading NVRTC-compiled cubins and launching
// their kernels), fetched once per process through cudaGetDriverEntryPointByVersion rather than
// by linking libcuda: a CUDA build of splice then starts on a machine without a driver (CI),
// and only a call that needs the driver fails, with an Error saying why.

#include <cuda.h>

#include "support/error.h"

namespace splice::cuda {

struct DriverApi {
  CUresult (*module_load_data)(CUmodule* module, const void* image) = nullptr;
  CUresult (*module_unload)(CUmodule module) = nullptr;
  CUresult (*module_get_function)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  // cuLaunchKernelEx: a launch with attributes (dependent launches, dependent_launch.h).
  CUresult (*launch_kernel_ex)(const CUlaunchConfig* config, CUfunction f, void** params,
                               void** extra) = nullptr;
  CUresult (*get_error_name)(CUresult error, const char** name) = nullptr;
  CUresult (*get_error_string)(CUresult error, const char** text) = nullptr;
};

// The entry points, looked up on first use (thread-safe; the lookup runs once and its outcome,
// success or the Error, is kept). Fails with kBackend when the CUDA runtime finds no driver or
// the driver lacks an entry point.
Result<const DriverApi*> driver_api();

// An Error of kind kBackend naming the driver call, its CUresult name and text.
Error driver_error(CUresult status, const char* call);

}  // namespace splice::cuda

// Calls a driver entry point through `api` (a const DriverApi*) and returns a kBackend Error
// naming the call from the enclosing function when it fails.
#define SPLICE_CU_CHECK(api, call)                                   \
  do {                                                               \
    const CUresult splice_cu_status_ = (api)->call;                  \
    if (splice_cu_status_ != CUDA_SUCCESS)                           \
      return ::splice::cuda::driver_error(splice_cu_status_, #call); \
  } while (0)
