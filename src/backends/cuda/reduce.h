#pragma once
// Reduction launchers: sum, mean, prod, amax/amin (max/min over everything), max/min over a
// dim with indices, argmax/argmin, any/all, var/std (var_mean/std_mean), vector norms. Each
// matches the CPU backend's kernel of the same op (cpu/reduce.cc, reduce_extrema.cc,
// composite_math.cc), which reproduces PyTorch:
//
//  - dims: nullopt reduces every dim; an empty list reduces every dim for sum/mean/prod/amax/
//    amin/var/std/norm and none for any/all (empty_means_all in reduced_dims); dims wrap.
//  - keepdim: the outputs keep reduced dims as size 1. Outputs are strided views of any
//    layout with exactly the reduction's output shape (checked; the error names both).
//  - inputs: any strides (broadcast, transposed, sliced), rank <= 8, any size including 0.
//  - accumulation: float for float16/bfloat16/float32 outputs, double for float64, int64 with
//    two's-complement wraparound for integer and bool outputs (PyTorch's CUDA accumulate
//    types). Float results therefore differ from the CPU backend (which sums in double) by
//    float rounding: the GPU tests allow 1e-5 relative for float32 sums of 4096 elements,
//    and one 16-bit rounding (2^-8 relative for bfloat16, 2^-11 for float16) plus that for
//    the 16-bit outputs. Integer, bool, max/min/arg results are exact.
//
// All launchers run on `stream`, never allocate, and may use `scratch` (split partials when
// the outputs alone cannot fill the GPU; any size, nullptr included, is correct). Errors:
// kShapeMismatch (output shape, empty reductions without identity), kBadInput (dtypes),
// kOutOfRange (dims), kBackend (CUDA).

#include <cuda_runtime_api.h>

#include <optional>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernel_scratch.h"
#include "support/error.h"

namespace splice::cuda {

using DimList = std::optional<std::vector<int64_t>>;

// sum.default / sum.dim_IntList: out's dtype is the op's result dtype (the dtype argument,
// else int64 for integer and bool inputs, else self's); self is converted to it element by
// element first (as PyTorch does when a dtype is given), then summed.
Result<void> reduce_sum(const DeviceTensor& self, const DimList& dims, bool keepdim,
                        const DeviceTensor& out, const KernelScratch& scratch, cudaStream_t stream);

// mean.default / mean.dim: out's dtype must be floating (the dtype argument or self's); the
// sum rounded to out's dtype, divided by the count (NaN for an empty reduction).
Result<void> reduce_mean(const DeviceTensor& self, const DimList& dims, bool keepdim,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream);

// prod.default (dims nullopt) / prod.dim_int: out's dtype as for sum (int64 for integer and
// bool inputs unless a dtype is given); integer products wrap.
Result<void> reduce_prod(const DeviceTensor& self, const DimList& dims, bool keepdim,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream);

// any / all (.default: dims nullopt; .dim: one dim; .dims: a list, [] reducing nothing):
// out is bool, or uint8 (0/1) for a uint8 input.
Result<void> reduce_any_all(const DeviceTensor& self, const DimList& dims, bool keepdim, bool all,
                            const DeviceTensor& out, const KernelScratch& scratch,
                            cudaStream_t stream);

// amax / amin (dims list, [] = every dim) and max.default / min.default (dims nullopt): out
// has self's dtype; NaN wins. Reducing an empty dim is an error (no identity).
Result<void> reduce_extreme(const DeviceTensor& self, const DimList& dims, bool keepdim,
                            bool is_max, const DeviceTensor& out, const KernelScratch& scratch,
                            cudaStream_t stream);

// max.dim / min.dim (values given: self's dtype) and argmax / argmin (values nullptr; dim
// nullopt = the index into the flattened tensor; bool inputs refused as by PyTorch): indices
// is int64; the first extreme (the first NaN if any) is reported.
Result<void> reduce_arg_extreme(const DeviceTensor& self, std::optional<int64_t> dim, bool keepdim,
                                bool is_max, const DeviceTensor* values,
                                const DeviceTensor& indices, const KernelScratch& scratch,
                                cudaStream_t stream);

// var / std (.correction and .dim forms: unbiased = correction 1) and var_mean / std_mean
// (mean given): float inputs only; outputs in self's dtype; var = sum((x - mean)^2) /
// max(0, N - correction) (inf/NaN when that is 0, as PyTorch).
Result<void> reduce_var(const DeviceTensor& self, const DimList& dims, bool keepdim,
                        double correction, bool take_sqrt, const DeviceTensor& var_out,
                        const DeviceTensor* mean_out, const KernelScratch& scratch,
                        cudaStream_t stream);

// linalg_vector_norm / norm.Scalar / norm.ScalarOpt_dim: the ord-norm of |x| over dims; out's
// dtype is the dtype argument or self's (floating only), self converted to it first. An
// empty reduction with ord < 0 or ord = inf is an error, as in PyTorch.
Result<void> reduce_norm(const DeviceTensor& self, double ord, const DimList& dims, bool keepdim,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream);

}  // namespace splice::cuda
