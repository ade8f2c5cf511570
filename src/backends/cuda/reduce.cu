// The sum/mean and prod kernels over reduce.cuh, and the parameter packing every reduction
// launch shares. The input is read through a loader chosen by reduce_loaders.cuh so that a
// typed kernel serves every common dtype pair. (Checks and errors live in reduce.cc: this
// file only instantiates and launches.)
#include "backends/cuda/reduce_launch.h"

#include "backends/cuda/reduce.cuh"
#include "backends/cuda/reduce_loaders.cuh"

namespace splice::cuda {

Result<void> prepare_reduce_params(const ReduceLayout& layout, const ReduceSchedule& schedule,
                                   std::span<const DeviceTensor* const> outputs,
                                   const KernelScratch& scratch, ReduceParams& p) {
  const int kept_rank = static_cast<int>(layout.kept_sizes.size());
  const int red_rank = static_cast<int>(layout.red_sizes.size());
  if (kept_rank > kMaxDims || red_rank > kMaxDims)
    return Error(ErrorKind::kInternal, "reduction layout rank exceeds kMaxDims");
  p.kept.rank = kept_rank;
  for (int d = 0; d < kept_rank; ++d) {
    p.kept.sizes[d] = layout.kept_sizes[d];
    p.kept.strides[0][d] = layout.kept_in_strides[d];
    p.kept.strides[1][d] = layout.kept_out_strides[0][d];
    p.kept.strides[2][d] = layout.kept_out_strides[1][d];
  }
  p.red.rank = red_rank;
  for (int d = 0; d < red_rank; ++d) {
    p.red.sizes[d] = layout.red_sizes[d];
    p.red.strides[0][d] = layout.red_in_strides[d];
  }
  p.num_outputs = layout.num_outputs;
  p.count = layout.count;
  p.outputs_per_block = schedule.outputs_per_block;
  p.output_blocks = schedule.output_blocks;
  p.splits = schedule.splits;
  p.split_chunk = schedule.split_chunk;
  p.along_outputs = schedule.mode == ReduceSchedule::Mode::kAlongOutputs;
  for (size_t i = 0; i < outputs.size() && i < kMaxReduceOutputs; ++i) {
    p.out[i] = outputs[i]->data;
    p.out_dtype[i] = outputs[i]->dtype;
  }
  if (schedule.splits > 1) p.partials = scratch.data;
  return ok_result();
}

Result<void> launch_sum(const ReduceLayout& layout, const DeviceTensor& self,
                        const DeviceTensor& out, bool mean, const KernelScratch& scratch,
                        cudaStream_t stream) {
  const DeviceTensor* outs[] = {&out};
  return dispatch_accumulator(out.dtype, [&](auto acc_tag) -> Result<void> {
    using V = typename decltype(acc_tag)::type;
    return dispatch_load<V>(self, out.dtype, [&](auto load) -> Result<void> {
      return launch_reduce(layout, SumOp<decltype(load)>{load, mean}, outs, scratch, stream);
    });
  });
}

Result<void> launch_prod(const ReduceLayout& layout, const DeviceTensor& self,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream) {
  const DeviceTensor* outs[] = {&out};
  return dispatch_accumulator(out.dtype, [&](auto acc_tag) -> Result<void> {
    using V = typename decltype(acc_tag)::type;
    return dispatch_load<V>(self, out.dtype, [&](auto load) -> Result<void> {
      return launch_reduce(layout, ProdOp<decltype(load)>{load}, outs, scratch, stream);
    });
  });
}

}  // namespace splice::cuda
