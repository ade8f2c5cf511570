// softmax / log_softmax kernels (see softmax.h). One pass over a lane keeps the running
// maximum m and the sum s of exp(x - m) (rescaled when m grows), combined across threads by
// (m1, s1) + (m2, s2) = (m, s1·e^(m1-m) + s2·e^(m2-m)); a second pass writes exp(x - m) / s or
// x - m - log s. A NaN, or a lane whose maximum is not finite (all -inf, or +inf present, where
// PyTorch's exp(inf - inf) is NaN), gives a NaN lane, as the CPU kernel does.
#include "backends/cuda/softmax.h"

#include <cuda_runtime.h>

#include <limits>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/device_info.h"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/lane_plan.h"
#include "backends/cuda/reduce_primitives.cuh"

namespace splice::cuda {

namespace {

struct SoftmaxParams {
  const void* in;
  void* out;
  StridedOffsets<2> lanes;  // per lane: base offsets in input and output
  int64_t num_lanes;
  int64_t length;
  int64_t in_stride;
  int64_t out_stride;
  bool log;
};

template <typename A>
struct MaxSum {
  A m;
  A s;
};

template <typename A>
__device__ __forceinline__ void max_sum_update(MaxSum<A>& ms, A x) {
  if (isnan(x)) {
    ms.m = ms.s = std::numeric_limits<A>::quiet_NaN();
  } else if (x == -std::numeric_limits<A>::infinity()) {
    // contributes exp(-inf) = 0
  } else if (x > ms.m) {
    ms.s = ms.s * exp(ms.m - x) + A(1);
    ms.m = x;
  } else {
    ms.s += exp(x - ms.m);
  }
}

template <typename A>
__device__ __forceinline__ MaxSum<A> max_sum_combine(MaxSum<A> a, MaxSum<A> b) {
  if (isnan(a.m) || isnan(b.m))
    return {std::numeric_limits<A>::quiet_NaN(), std::numeric_limits<A>::quiet_NaN()};
  if (a.m == -std::numeric_limits<A>::infinity()) return b;
  if (b.m == -std::numeric_limits<A>::infinity()) return a;
  const A m = a.m > b.m ? a.m : b.m;
  return {m, a.s * exp(a.m - m) + b.s * exp(b.m - m)};
}

template <typename A>
__device__ __forceinline__ MaxSum<A> max_sum_identity() {
  return {-std::numeric_limits<A>::infinity(), A(0)};
}

// The input element as the op computes with it: rounded through the output dtype, widened.
template <typename TIn, typename TOut, typename A>
__device__ __forceinline__ A load_value(const TIn* in, int64_t off) {
  return convert<A>(convert<TOut>(in[off]));
}

template <typename TIn, typename TOut, typename A>
__device__ __forceinline__ void write_lane(const SoftmaxParams& p, int64_t in_base,
                                           int64_t out_base, MaxSum<A> ms, int64_t first,
                                           int64_t step) {
  const TIn* in = static_cast<const TIn*>(p.in);
  TOut* out = static_cast<TOut*>(p.out);
  const bool finite = isfinite(ms.m);
  const A log_s = log(ms.s);
  const A inv_s = A(1) / ms.s;
  for (int64_t j = first; j < p.length; j += step) {
    const A x = load_value<TIn, TOut, A>(in, in_base + j * p.in_stride);
    A y;
    if (!finite)
      y = std::numeric_limits<A>::quiet_NaN();
    else if (p.log)
      y = x - ms.m - log_s;
    else
      y = exp(x - ms.m) * inv_s;
    out[out_base + j * p.out_stride] = convert<TOut>(y);
  }
}

// A warp per lane (lanes of up to ~1024 elements); blockDim.x is a multiple of 32.
template <typename TIn, typename TOut, typename A>
__global__ void softmax_warp_kernel(SoftmaxParams p) {
  const int warps = blockDim.x / kWarpSize;
  const int lane_id = threadIdx.x % kWarpSize;
  for (int64_t lane = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / kWarpSize;
       lane < p.num_lanes; lane += static_cast<int64_t>(gridDim.x) * warps) {
    int64_t base[2];
    p.lanes.get(lane, base);
    const TIn* in = static_cast<const TIn*>(p.in);
    MaxSum<A> ms = max_sum_identity<A>();
    for (int64_t j = lane_id; j < p.length; j += kWarpSize)
      max_sum_update(ms, load_value<TIn, TOut, A>(in, base[0] + j * p.in_stride));
    ms = warp_allreduce(ms, [](MaxSum<A> a, MaxSum<A> b) { return max_sum_combine(a, b); });
    write_lane<TIn, TOut, A>(p, base[0], base[1], ms, lane_id, kWarpSize);
  }
}

// A block per lane (long lanes).
template <typename TIn, typename TOut, typename A>
__global__ void softmax_block_kernel(SoftmaxParams p) {
  __shared__ MaxSum<A> smem[kWarpSize];
  for (int64_t lane = blockIdx.x; lane < p.num_lanes; lane += gridDim.x) {
    int64_t base[2];
    p.lanes.get(lane, base);
    const TIn* in = static_cast<const TIn*>(p.in);
    MaxSum<A> ms = max_sum_identity<A>();
    for (int64_t j = threadIdx.x; j < p.length; j += blockDim.x)
      max_sum_update(ms, load_value<TIn, TOut, A>(in, base[0] + j * p.in_stride));
    ms = block_allreduce(ms, smem, [](MaxSum<A> a, MaxSum<A> b) { return max_sum_combine(a, b); });
    write_lane<TIn, TOut, A>(p, base[0], base[1], ms, threadIdx.x, blockDim.x);
  }
}

// A thread per lane (lanes adjacent in memory, the dim strided: reads coalesce across lanes).
template <typename TIn, typename TOut, typename A>
__global__ void softmax_column_kernel(SoftmaxParams p) {
  for (int64_t lane = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       lane < p.num_lanes; lane += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base[2];
    p.lanes.get(lane, base);
    const TIn* in = static_cast<const TIn*>(p.in);
    MaxSum<A> ms = max_sum_identity<A>();
    for (int64_t j = 0; j < p.length; ++j)
      max_sum_update(ms, load_value<TIn, TOut, A>(in, base[0] + j * p.in_stride));
    write_lane<TIn, TOut, A>(p, base[0], base[1], ms, 0, 1);
  }
}

template <typename T>
struct FloatTag {
  using type = T;
};

template <typename F>
Result<void> dispatch_float(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat16:
      return f(FloatTag<__half>{});
    case DType::kBFloat16:
      return f(FloatTag<__nv_bfloat16>{});
    case DType::kFloat32:
      return f(FloatTag<float>{});
    case DType::kFloat64:
      return f(FloatTag<double>{});
    default:
      return Error(ErrorKind::kInternal, "dispatch_float: not a float dtype");
  }
}

unsigned grid_for(int64_t items, int64_t per_block) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 1 << 30));
}

}  // namespace

Result<void> softmax(const DeviceTensor& self, int64_t dim, bool log, const DeviceTensor& out,
                     cudaStream_t stream) {
  const std::string_view op = log ? "log_softmax" : "softmax";
  SPLICE_CHECK_OR_RETURN(is_floating(self.dtype), ErrorKind::kBadInput,
                         "{}: expects a floating point tensor, got {}", op, dtype_name(self.dtype));
  SPLICE_CHECK_OR_RETURN(is_floating(out.dtype), ErrorKind::kBadInput,
                         "{}: the output must be floating point, got {}", op,
                         dtype_name(out.dtype));
  const DeviceTensor* operands[] = {&self, &out};
  SPLICE_ASSIGN_OR_RETURN(LanePlan plan, plan_lanes(op, operands, dim));
  if (plan.lanes == 0 || plan.length == 0) return ok_result();
  SoftmaxParams p{};
  p.in = self.data;
  p.out = out.data;
  p.lanes.rank = static_cast<int>(plan.lane_sizes.size());
  for (int d = 0; d < p.lanes.rank; ++d) {
    p.lanes.sizes[d] = plan.lane_sizes[d];
    p.lanes.strides[0][d] = plan.lane_strides[0][d];
    p.lanes.strides[1][d] = plan.lane_strides[1][d];
  }
  p.num_lanes = plan.lanes;
  p.length = plan.length;
  p.in_stride = plan.elem_strides[0];
  p.out_stride = plan.elem_strides[1];
  p.log = log;
  SPLICE_ASSIGN_OR_RETURN(int sms, current_sm_count());
  return dispatch_float(self.dtype, [&](auto in_tag) -> Result<void> {
    using TIn = typename decltype(in_tag)::type;
    return dispatch_float(out.dtype, [&](auto out_tag) -> Result<void> {
      using TOut = typename decltype(out_tag)::type;
      using A = std::conditional_t<std::is_same_v<TOut, double>, double, float>;
      if (plan.lanes_contiguous && plan.lanes >= int64_t{64} * sms) {
        softmax_column_kernel<TIn, TOut, A><<<grid_for(plan.lanes, 256), 256, 0, stream>>>(p);
      } else if (plan.length <= 1024) {
        softmax_warp_kernel<TIn, TOut, A><<<grid_for(plan.lanes, 4), 128, 0, stream>>>(p);
      } else {
        softmax_block_kernel<TIn, TOut, A><<<grid_for(plan.lanes, 1), 512, 0, stream>>>(p);
      }
      SPLICE_CUDA_CHECK(cudaGetLastError());
      return ok_result();
    });
  });
}

}  // namespace splice::cuda
