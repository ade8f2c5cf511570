#pragma once
// Runtime compilation of generated CUDA source: NVRTC compiles it straight to a cubin for the
// current device's architecture (sm_90 when no device is present, for compile-only tests), and
// the driver API (driver_api.h) loads it. Modules are cached in-process by source text and
// device, so each distinct source compiles once per process however many threads ask for it at
// once; a failed compile is cached too (its Error comes back without compiling again).

#include <cuda.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "support/error.h"

namespace splice::cuda {

// Compiles `source` to a cubin for sm_<arch> (e.g. 90) with splice's options (C++17,
// --fmad=false so that a*b+c rounds twice as the CPU backend's does, IEEE division and square
// root). kBackend Error with NVRTC's log on failure.
Result<std::string> compile_to_cubin(const std::string& source, int arch);

// A loaded module and its kernels, in the order they were asked for.
struct LoadedModule {
  CUmodule module = nullptr;
  std::vector<CUfunction> kernels;
};

// The module of `source` for the current device, compiled and loaded on first use (then
// cached for the process), with `kernel_names` (extern "C" names) looked up.
Result<const LoadedModule*> load_module(const std::string& source,
                                        std::span<const char* const> kernel_names);

// How many NVRTC compiles this process has run (tests check the cache with it).
int64_t nvrtc_compile_count();

}  // namespace splice::cuda
