#pragma once
// The reduction kernels' launch entry points, called by reduce.cc after it has checked the
// arguments and planned the layout (reduce_plan.h). Kept apart from reduce.h because they
// trust their arguments: outputs match the layout, dtypes are the ones the op allows.

#include <cuda_runtime_api.h>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernel_scratch.h"
#include "backends/cuda/reduce_plan.h"
#include "support/error.h"

namespace splice::cuda {

enum class NormKind : int { kZero, kOne, kTwo, kInf, kNegInf, kPower };

// out's dtype is the result dtype; self is converted to it, then accumulated.
Result<void> launch_sum(const ReduceLayout& layout, const DeviceTensor& self,
                        const DeviceTensor& out, bool mean, const KernelScratch& scratch,
                        cudaStream_t stream);
Result<void> launch_prod(const ReduceLayout& layout, const DeviceTensor& self,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream);
Result<void> launch_any_all(const ReduceLayout& layout, const DeviceTensor& self,
                            const DeviceTensor& out, bool all, const KernelScratch& scratch,
                            cudaStream_t stream);
Result<void> launch_extreme(const ReduceLayout& layout, const DeviceTensor& self,
                            const DeviceTensor& out, bool is_max, const KernelScratch& scratch,
                            cudaStream_t stream);
// values may be null (argmax/argmin).
Result<void> launch_arg_extreme(const ReduceLayout& layout, const DeviceTensor& self,
                                const DeviceTensor* values, const DeviceTensor& indices,
                                bool is_max, const KernelScratch& scratch, cudaStream_t stream);
// mean_out may be null; divisor = max(0, count - correction).
Result<void> launch_var(const ReduceLayout& layout, const DeviceTensor& self,
                        const DeviceTensor& var_out, const DeviceTensor* mean_out, double divisor,
                        bool take_sqrt, const KernelScratch& scratch, cudaStream_t stream);
// out's dtype is the result dtype (self converted to it first); p is used by kPower.
Result<void> launch_norm(const ReduceLayout& layout, const DeviceTensor& self,
                         const DeviceTensor& out, NormKind kind, double p,
                         const KernelScratch& scratch, cudaStream_t stream);

}  // namespace splice::cuda
