// repeat_interleave with a repeats tensor (shape_ops.h): the CPU kernel's checks
// (cpu/repeat.cc), the device sum of the repeats, the host read of the total (the output's
// shape depends on it), then one gather launch (index_kernels.h).
#include <cstring>

#include "backends/common/args.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/error_word.h"
#include "backends/cuda/index_kernels.h"
#include "backends/cuda/indexing.h"
#include "backends/cuda/shape_ops.h"
#include "tensor/indexing.h"

namespace splice::cuda {

namespace {

Shape sizes_of(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

}  // namespace

Result<RepeatInterleavePlan> plan_repeat_interleave(const DeviceTensor* self,
                                                    const DeviceTensor& repeats,
                                                    std::optional<int64_t> dim_opt,
                                                    std::optional<int64_t> output_size,
                                                    const LaunchContext& ctx) {
  const std::string_view op =
      self ? "aten.repeat_interleave.self_Tensor" : "aten.repeat_interleave.Tensor";
  if (self) {
    KCHECK(repeats.rank <= 1, ErrorKind::kShapeMismatch,
           "repeat_interleave only accepts a 0-D or 1-D repeats tensor, got {} dims", repeats.rank);
  } else {
    KCHECK(repeats.rank == 1, ErrorKind::kShapeMismatch,
           "repeat_interleave only accepts a 1-D repeats tensor, got {} dims", repeats.rank);
  }
  KCHECK(repeats.dtype == DType::kInt64 || repeats.dtype == DType::kInt32, ErrorKind::kBadInput,
         "repeats has to be an int64 or int32 tensor, got {}", dtype_name(repeats.dtype));
  KCHECK(ctx.error_word != nullptr && ctx.workspace != nullptr, ErrorKind::kInternal,
         "{} needs an error word and a workspace", op);
  RepeatInterleavePlan plan;
  plan.count = repeats.numel();
  int64_t n = plan.count;
  size_t flat_bytes = 0;
  if (self) {
    plan.has_self = true;
    plan.input = *self;
    if (!dim_opt) {
      flat_bytes = (self->numel() * dtype_size(self->dtype) + 255) / 256 * 256;
      const int64_t numel = self->numel();
      plan.input = contiguous_tensor(nullptr, self->dtype, std::span<const int64_t>(&numel, 1));
      plan.dim = 0;
    } else {
      SPLICE_ASSIGN_OR_RETURN(plan.dim, wrap_dim(op, *dim_opt, self->rank));
      if (self->rank == 0) {
        plan.input.rank = 1;
        plan.input.sizes[0] = 1;
        plan.input.strides[0] = 1;
      }
    }
    n = plan.input.sizes[plan.dim];
    plan.broadcast = plan.count == 1;
    KCHECK(plan.broadcast || plan.count == n, ErrorKind::kShapeMismatch,
           "repeats must have the same size as input along dim {}, but got repeats.size(0) = {} "
           "and input.size({}) = {}",
           plan.dim, plan.count, plan.dim, n);
  }
  const size_t scan_bytes = (std::max<int64_t>(plan.count, 1) * sizeof(int64_t) + 255) / 256 * 256;
  SPLICE_ASSIGN_OR_RETURN(void* base,
                          ctx.workspace->reserve(scan_bytes + flat_bytes + 64, ctx.stream));
  auto* cumsum = static_cast<int64_t*>(base);
  plan.cumsum = cumsum;
  if (self && !dim_opt) {
    plan.input.data = static_cast<char*>(base) + scan_bytes;
    DeviceTensor flat = plan.input;  // the contiguous copy, viewed with self's shape
    flat.rank = self->rank;
    int64_t stride = 1;
    for (int d = self->rank - 1; d >= 0; --d) {
      flat.sizes[d] = self->sizes[d];
      flat.strides[d] = stride;
      stride *= self->sizes[d];
    }
    SPLICE_TRY(copy_cast(flat, *self, ctx));
  }
  int64_t host[1 + kErrorWordSlots] = {};
  if (plan.count > 0) {
    RepeatScanParams sp;
    sp.repeats = repeats.data;
    sp.is_int32 = repeats.dtype == DType::kInt32 ? 1 : 0;
    sp.count = plan.count;
    sp.stride = repeats.rank == 0 ? 1 : repeats.strides[0];
    sp.cumsum = cumsum;
    sp.error_word = ctx.error_word;
    sp.site = ctx.site;
    SPLICE_CUDA_CHECK(launch_repeat_scan(sp, ctx.stream));
    SPLICE_CUDA_CHECK(cudaMemcpyAsync(&host[0], cumsum + plan.count - 1, sizeof(int64_t),
                                      cudaMemcpyDeviceToHost, ctx.stream));
  }
  SPLICE_CUDA_CHECK(cudaMemcpyAsync(&host[1], ctx.error_word, kErrorWordSlots * sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, ctx.stream));
  // The total decides the output's shape: wait for it (and for the check of the counts).
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  if (host[1 + kErrorWordCheck] != 0) {
    DeviceCheckFailure f;
    f.check = static_cast<DeviceCheck>(host[1 + kErrorWordCheck]);
    f.site = host[1 + kErrorWordSite];
    f.value = host[1 + kErrorWordValue];
    f.limit = host[1 + kErrorWordLimit];
    f.dim = host[1 + kErrorWordDim];
    f.extra = host[1 + kErrorWordExtra];
    return failure_error(f, f.site == ctx.site ? op : "");
  }
  plan.total = host[0];
  if (plan.broadcast) {
    plan.each = host[0];
    plan.total = host[0] * n;
  }
  KCHECK(!output_size || *output_size == plan.total, ErrorKind::kShapeMismatch,
         "output_size {} does not match the required size {}", output_size.value_or(0), plan.total);
  if (self) {
    plan.out_shape = sizes_of(plan.input);
    plan.out_shape[plan.dim] = plan.total;
  } else {
    plan.out_shape = {plan.total};
  }
  return plan;
}

Result<void> repeat_interleave_tensor(const DeviceTensor& out, const DeviceTensor& repeats,
                                      const RepeatInterleavePlan& plan, const LaunchContext& ctx) {
  const bool with_self = plan.has_self;
  const std::string_view op =
      with_self ? "aten.repeat_interleave.self_Tensor" : "aten.repeat_interleave.Tensor";
  const DType dtype = with_self ? plan.input.dtype : repeats.dtype;
  KCHECK(out.dtype == dtype && sizes_of(out) == plan.out_shape, ErrorKind::kShapeMismatch,
         "the output is {}{} but the result is {}{}", dtype_name(out.dtype),
         shape_string(sizes_of(out)), dtype_name(dtype), shape_string(plan.out_shape));
  RepeatGatherParams p;
  p.rank = out.rank;
  p.dim = static_cast<int32_t>(plan.dim);
  p.numel = out.numel();
  if (p.numel == 0) return ok_result();
  for (int d = 0; d < out.rank; ++d) {
    p.out_sizes[d] = out.sizes[d];
    p.out_strides[d] = out.strides[d];
    if (with_self) p.src_strides[d] = plan.input.strides[d];
  }
  p.cumsum = plan.broadcast ? nullptr : plan.cumsum;
  p.count = plan.count;
  p.each = plan.each;
  p.out = out.data;
  p.src = with_self ? plan.input.data : nullptr;
  p.index_int32 = repeats.dtype == DType::kInt32 ? 1 : 0;
  p.error_word = ctx.error_word;
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  SPLICE_CUDA_CHECK(
      launch_repeat_gather(p, dtype_size(dtype), grid_blocks(p.numel, 256, device), ctx.stream));
  return ok_result();
}

}  // namespace splice::cuda
