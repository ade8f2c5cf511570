#pragma once
// Launchers of the attention kernels (attention_simt.cu, attention_mma.cu, attention_decode.cu) for
// a checked plan (attention_plan.h); attention.cc calls them.

#include <cuda_runtime_api.h>

#include "backends/cuda/attention_plan.h"
#include "support/error.h"

namespace splice::cuda {

// The CUDA-core kernel (any float dtype, E, Ev <= plan.head_dim_bound).
Result<void> launch_attention_simt(const AttnPlan& plan, cudaStream_t stream);
// The tensor-core kernel (fp16/bf16, E == Ev == plan.head_dim_bound).
Result<void> launch_attention_mma(const AttnPlan& plan, cudaStream_t stream);
// The decode kernel (fp16/bf16/fp32, few rows per unit, 16-byte aligned K/V rows), combining
// its splits in the same launch when plan.params.counters is set.
Result<void> launch_attention_decode(const AttnPlan& plan, cudaStream_t stream);
// Merges the split partials into the output and logsumexp (plan.params.splits > 1).
Result<void> launch_attention_combine(const AttnPlan& plan, cudaStream_t stream);
// Writes +inf into the logsumexp positions >= L (plan.lse_pad).
Result<void> launch_attention_lse_pad(const AttnPlan& plan, cudaStream_t stream);

}  // namespace splice::cuda
