// The attention entry point (see attention.h): plan, run the tensor-core or CUDA-core kernel,
// combine split partials, pad the logsumexp.
#include "backends/cuda/attention.h"

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/attention_plan.h"
#include "backends/cuda/device_info.h"

namespace splice::cuda {

Result<void> attention(const AttentionArgs& args, const KernelScratch& scratch,
                       cudaStream_t stream) {
  SPLICE_ASSIGN_OR_RETURN(int sms, current_sm_count());
  SPLICE_ASSIGN_OR_RETURN(AttnPlan plan, plan_attention(args, sms, scratch));
  if (plan.lse_pad) SPLICE_TRY(launch_attention_lse_pad(plan, stream));
  if (plan.empty) return ok_result();
  if (plan.kernel == AttnKernel::kMma)
    SPLICE_TRY(launch_attention_mma(plan, stream));
  else
    SPLICE_TRY(launch_attention_simt(plan, stream));
  if (plan.params.splits > 1) SPLICE_TRY(launch_attention_combine(plan, stream));
  return ok_result();
}

Result<size_t> attention_scratch_bytes(const AttentionArgs& args) {
  SPLICE_ASSIGN_OR_RETURN(int sms, current_sm_count());
  SPLICE_ASSIGN_OR_RETURN(AttnPlan plan, plan_attention(args, sms, KernelScratch{}));
  return plan.split_bytes_wanted;
}

}  // namespace splice::cuda
