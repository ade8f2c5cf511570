#pragma once
// The CPU backend's public face: a table from export targets ("aten.add.Tensor") to reference
// kernels. The runtime resolves each plan step's target once with find_kernel and calls the
// function with the op's arguments in schema order. Kernels are the oracle backend: they match
// PyTorch eager CPU (bitwise for integers and bool; for floats as PyTorch's own kernels do,
// with half types computed in float and rounded once per op).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "support/dtype.h"
#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::cpu {

// One argument of an op call, in the exact order of the ATen overload's schema, with every
// defaulted argument filled (kwarg-only args too, in schema order). SymInts arrive evaluated.
// A Scalar argument arrives as bool, int64_t or double (its Python type). Device, Layout and
// MemoryFormat arguments arrive as std::string and are ignored (results are contiguous).
using KernelArg =
    std::variant<std::monostate /*None*/, bool, int64_t, double, std::string, DType /*ScalarType*/,
                 Tensor, std::vector<int64_t> /*int[]*/, std::vector<Tensor>,
                 std::vector<std::optional<Tensor>> /*Tensor?[]*/, std::vector<double>,
                 std::vector<bool>>;

// Validates its arguments (errors name the op: kShapeMismatch, kOutOfRange, kBadInput) and
// returns new tensors the caller owns. View ops (view, reshape, permute, expand, slice,
// select, alias, unsqueeze, squeeze, t, transpose) may return views of their input; the
// runtime never writes into a kernel's inputs. Other results are new contiguous tensors.
using KernelFn = Result<std::vector<Tensor>> (*)(std::span<const KernelArg> args);

// Runs `kernel` asking it to store its (first) output into `dest`, a view of planned memory
// (possibly strided: a slice of a larger buffer). Kernels for which
// writes_strided_destination() holds honour it; the caller checks whether the returned tensor
// is `dest` and copies otherwise.
Result<std::vector<Tensor>> run_into(KernelFn kernel, std::span<const KernelArg> args,
                                     const Tensor& dest);
// Whether the kernel for `target` stores its output into run_into's destination: pointwise
// kernels whose loops write every element of a strided output.
bool writes_strided_destination(std::string_view target);
// Runs a write kernel (slice_scatter, select_scatter, index_put, index_copy) so that it
// modifies its base (argument 0) instead of copying it; the result is the base.
Result<std::vector<Tensor>> run_in_place(KernelFn kernel, std::span<const KernelArg> args);
// The view of `base` that a slice or select write (slice_scatter, select_scatter with `args`)
// stores `src` into, with the kernel's own bound and shape checks; `src` is only measured.
Result<Tensor> write_destination(std::string_view target, std::span<const KernelArg> args,
                                 const Tensor& base, const Tensor& src);
// Whether `target` is a write kernel that run_in_place can run.
bool writes_in_place(std::string_view target);

// The kernel for an export target without the "torch.ops." prefix, e.g.
// "aten.slice_scatter.default"; nullptr if none.
KernelFn find_kernel(std::string_view target);
// Every registered target, sorted (for coverage tests).
std::vector<std::string> kernel_targets();
// Threads that kernels may use for big loops (>= 1): contiguous pointwise loops split across
// them (parallel.h) and OpenBLAS is set to the same count.
void set_num_threads(int n);
int num_threads();

}  // namespace splice::cpu
