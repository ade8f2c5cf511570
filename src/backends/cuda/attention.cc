// The attention entry point (see attention.h): plan, run the decode, tensor-core or CUDA-core
// kernel, combine split partials (unless the decode kernel did), pad the logsumexp.
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
  switch (plan.kernel) {
    case AttnKernel::kMma:
      SPLICE_TRY(launch_attention_mma(plan, stream));
      break;
    case AttnKernel::kDecode:
      SPLICE_TRY(launch_attention_decode(plan, stream));
      break;
    case AttnKernel::kSimt:
      SPLICE_TRY(launch_attention_simt(plan, stream));
      break;
  }
  // The decode kernel combines its own splits when it has counters.
  const bool combined = plan.kernel == AttnKernel::kDecode && plan.params.counters != nullptr;
  if (plan.params.splits > 1 && !combined) SPLICE_TRY(launch_attention_combine(plan, stream));
  return ok_result();
}

Result<size_t> attention_scratch_bytes(const AttentionArgs& args) {
  SPLICE_ASSIGN_OR_RETURN(int sms, current_sm_count());
  SPLICE_ASSIGN_OR_RETURN(AttnPlan plan, plan_attention(args, sms, KernelScratch{}));
  return plan.split_bytes_wanted;
}

}  // namespace splice::cuda
