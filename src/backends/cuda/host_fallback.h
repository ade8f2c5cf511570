#pragma once
// The host fallback: runs an op's CPU kernel on host copies of its device arguments and
// uploads the results (a stream sync each way). Used only for the ops listed in
// host_fallback_ops() — the CUDA-export attention forms, whose extra outputs (rng state, cum
// seq, debug masks) no GPU kernel of splice's produces yet; docs/cuda.md lists them and the
// coverage test keeps the list from growing silently.

#include <span>
#include <string_view>
#include <vector>

#include "backends/cuda/kernel_glue.h"

namespace splice::cuda::glue {

Result<Outputs> host_fallback(Ctx& ctx, std::span<const KernelArg> args);

}  // namespace splice::cuda::glue

namespace splice::cuda {

// The targets whose CUDA kernel is the host fallback, sorted.
std::vector<std::string_view> host_fallback_ops();

}  // namespace splice::cuda
