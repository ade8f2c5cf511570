#pragma once
// The CUDA backend's kernel table: one entry per op that reaches a backend (every op the CPU
// backend has a kernel for), each a thin function (cuda_kernels_*.cc) that reads the node's
// arguments with the accessors the CPU kernels use too (backends/common/args.h), allocates its
// outputs through the caching allocator (or takes the planned destination), and calls a launcher of
// this folder on the calling session's stream. Launchers whose kernels check indices, positions or
// integer division get the session's error word and the failure is read before the kernel returns,
// so the runtime's Error names the node and nothing after it runs (the CPU backend's behaviour).

#include <span>

#include "backends/kernel_abi.h"

namespace splice::cuda {

// Every kernel of the CUDA backend, sorted by op id.
std::span<const backend::KernelEntry> cuda_kernels();

}  // namespace splice::cuda
