#pragma once
// The CPU backend's kernel table, for the backend itself (cpu_backend.cc) and its tests:
// reference kernels that match PyTorch eager CPU (bitwise for integers and bool; for floats as
// PyTorch's own kernels do, with half types computed in float and rounded once per op). Stages
// above the backends never include this: they reach the kernels through backends/backend.h.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kernel_abi.h"

namespace splice::cpu {

using backend::KernelArg;
using backend::KernelCall;
using backend::KernelEntry;
using backend::KernelFn;

// Every kernel of the CPU backend (merged from each op family's table).
std::span<const KernelEntry> kernels();
// The kernel for an export target ("aten.add.Tensor"), or nullptr.
KernelFn find_kernel(std::string_view target);
// Every registered target, sorted (for coverage tests).
std::vector<std::string> kernel_targets();
// Calls a kernel outside any session: no planned destination, not in place, on the calling
// thread (or the current pool's, thread_pool.h). What kernels calling kernels and tests use.
Result<std::vector<Tensor>> call_kernel(KernelFn kernel, std::span<const KernelArg> args);
// How many operands the matrix products (mm, bmm, addmm, matmul, linear) have copied to
// contiguous memory so far in this process, because BLAS could not read them in place (for
// tests that strided float operands go to BLAS as they are).
int64_t matmul_operand_copies();

}  // namespace splice::cpu
