// cumsum kernels (see scan.h). A lane is scanned in chunks of kThreads x kItems elements: each
// thread scans its kItems consecutive elements, the threads' totals are scanned across the
// warp (shuffles) and the block (shared memory), the chunk's carry-in is added, and the chunk
// total carries into the next chunk. The input is read through its run-time dtype (converted
// to the result dtype first, as PyTorch does), so only the result dtype is a template argument.
#include "backends/cuda/scan.h"

#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/device_info.h"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/lane_plan.h"
#include "backends/cuda/reduce_primitives.cuh"

namespace splice::cuda {

namespace {

constexpr int kItems = 4;

struct ScanParams {
  const void* in;
  void* out;
  DType in_dtype;
  StridedOffsets<2> lanes;
  int64_t num_lanes;
  int64_t length;
  int64_t in_stride;
  int64_t out_stride;
};

// PyTorch's CPU accumulate type of the result: float for the 16-bit floats, double for the
// 32/64-bit floats, int64 for integers; bool is or-ed (held as int32 for the shuffles).
template <typename T>
using scan_acc_t = std::conditional_t<
    is_reduced_float_v<T>, float,
    std::conditional_t<std::is_floating_point_v<T>, double,
                       std::conditional_t<std::is_same_v<T, bool>, int32_t, int64_t>>>;

template <typename T>
struct ScanAdd {
  using A = scan_acc_t<T>;
  __device__ __forceinline__ A operator()(A a, A b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a | b;
    } else if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return a + b;
    }
  }
};

template <typename T>
__device__ __forceinline__ scan_acc_t<T> load_scan(const ScanParams& p, int64_t off) {
  const T v = load_as<T>(p.in, off, p.in_dtype);  // converted to the result dtype first
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else {
    return convert<scan_acc_t<T>>(v);
  }
}

template <typename T>
__device__ __forceinline__ T store_value(scan_acc_t<T> a) {
  if constexpr (std::is_same_v<T, bool>) {
    return a != 0;
  } else {
    return convert<T>(a);
  }
}

// kThreads threads per lane: 32 (a warp; blocks of 128 hold 4 lanes) or a whole block.
template <typename T, int kThreads>
__global__ void scan_kernel(ScanParams p) {
  using A = scan_acc_t<T>;
  const ScanAdd<T> add;
  __shared__ A warp_totals[kWarpSize];
  const int t = threadIdx.x % kThreads;
  const int lanes_per_block = blockDim.x / kThreads;
  T* out = static_cast<T*>(p.out);
  for (int64_t lane = static_cast<int64_t>(blockIdx.x) * lanes_per_block + threadIdx.x / kThreads;
       lane < p.num_lanes; lane += static_cast<int64_t>(gridDim.x) * lanes_per_block) {
    int64_t base[2];
    p.lanes.get(lane, base);
    A carry = A(0);
    for (int64_t chunk = 0; chunk < p.length; chunk += int64_t{kThreads} * kItems) {
      const int64_t first = chunk + int64_t{t} * kItems;
      A v[kItems];
      A total = A(0);
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t j = first + i;
        v[i] = j < p.length ? load_scan<T>(p, base[0] + j * p.in_stride) : A(0);
        total = add(total, v[i]);
        v[i] = total;  // inclusive within the thread
      }
      // Exclusive prefix of this thread's total within the chunk.
      A inclusive = warp_inclusive_scan(total, add);
      A chunk_total;
      A prefix;
      if constexpr (kThreads == kWarpSize) {
        prefix = shfl_up_any(inclusive, 1);
        if (t == 0) prefix = A(0);
        chunk_total = shfl_any(inclusive, kWarpSize - 1);
      } else {
        const int warp = t / kWarpSize, lane_id = t % kWarpSize;
        __syncthreads();  // warp_totals may still be read for the previous chunk
        if (lane_id == kWarpSize - 1) warp_totals[warp] = inclusive;
        __syncthreads();
        A warp_prefix = A(0);
        for (int w = 0; w < warp; ++w) warp_prefix = add(warp_prefix, warp_totals[w]);
        chunk_total = A(0);
        for (int w = 0; w < kThreads / kWarpSize; ++w)
          chunk_total = add(chunk_total, warp_totals[w]);
        A within = shfl_up_any(inclusive, 1);
        if (lane_id == 0) within = A(0);
        prefix = add(warp_prefix, within);
      }
      const A start = add(carry, prefix);
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t j = first + i;
        if (j < p.length) out[base[1] + j * p.out_stride] = store_value<T>(add(start, v[i]));
      }
      carry = add(carry, chunk_total);
    }
  }
}

// A thread per lane, sequential (lanes adjacent in memory: coalesced across threads).
template <typename T>
__global__ void scan_column_kernel(ScanParams p) {
  using A = scan_acc_t<T>;
  const ScanAdd<T> add;
  T* out = static_cast<T*>(p.out);
  for (int64_t lane = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       lane < p.num_lanes; lane += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base[2];
    p.lanes.get(lane, base);
    A acc = A(0);
    for (int64_t j = 0; j < p.length; ++j) {
      acc = add(acc, load_scan<T>(p, base[0] + j * p.in_stride));
      out[base[1] + j * p.out_stride] = store_value<T>(acc);
    }
  }
}

unsigned grid_for(int64_t items, int64_t per_block) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 1 << 30));
}

}  // namespace

Result<void> cumsum(const DeviceTensor& self, int64_t dim, const DeviceTensor& out,
                    cudaStream_t stream) {
  constexpr std::string_view op = "cumsum";
  const DeviceTensor* operands[] = {&self, &out};
  SPLICE_ASSIGN_OR_RETURN(LanePlan plan, plan_lanes(op, operands, dim));
  if (plan.lanes == 0 || plan.length == 0) return ok_result();
  ScanParams p{};
  p.in = self.data;
  p.out = out.data;
  p.in_dtype = self.dtype;
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
  SPLICE_ASSIGN_OR_RETURN(int sms, current_sm_count());
  return dispatch_device_dtype(out.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if (plan.lanes_contiguous && plan.lanes >= int64_t{64} * sms) {
      scan_column_kernel<T><<<grid_for(plan.lanes, 256), 256, 0, stream>>>(p);
    } else if (plan.length <= 2048) {
      scan_kernel<T, kWarpSize><<<grid_for(plan.lanes, 4), 128, 0, stream>>>(p);
    } else {
      scan_kernel<T, 512><<<grid_for(plan.lanes, 1), 512, 0, stream>>>(p);
    }
    SPLICE_CUDA_CHECK(cudaGetLastError());
    return ok_result();
  });
}

}  // namespace splice::cuda
