#pragma once
// The reduction kernel shared by every reduction op (sum, mean, prod, amax/amin, max/min with
// indices, argmax/argmin, any/all, var/std with mean, vector norms), and the ops it runs.
//
// One kernel, two block shapes (reduce_plan.h picks): along the reduction, threadIdx.x walks
// the reduced elements of one output (a segment of lanes, a warp or up to 512 threads per
// output, combined with shuffles and shared memory); along the outputs, threadIdx.x walks
// consecutive outputs (coalesced when the kept dim is the contiguous one) and threadIdx.y the
// reduction, combined through shared memory. Each thread keeps four accumulators for memory
// parallelism. When the outputs cannot fill the GPU, blockIdx.y splits each reduction and a
// second kernel combines the partials from the caller's scratch.
//
// An op supplies: acc_t (a trivially copyable 4-byte-multiple accumulator), identity(),
// load(offset) -> value (the input element converted as the op's PyTorch kernel converts it),
// reduce(acc, value, index), combine(acc, acc) (associative; index ties broken toward the
// lower index so the result does not depend on the order), and finalize(acc, count, params,
// offsets) that writes the outputs.

#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/device_info.h"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/kernel_scratch.h"
#include "backends/cuda/reduce_launch.h"
#include "backends/cuda/reduce_plan.h"
#include "backends/cuda/reduce_primitives.cuh"

namespace splice::cuda {

struct ReduceParams {
  StridedOffsets<3> kept;  // per output: input base offset, offsets in output 0 and 1
  StridedOffsets<1> red;   // per reduced element: input offset from the base
  int64_t num_outputs = 0;
  int64_t count = 0;
  int64_t outputs_per_block = 1;
  int64_t output_blocks = 0;
  int64_t splits = 1;
  int64_t split_chunk = 0;
  bool along_outputs = false;
  void* out[kMaxReduceOutputs] = {nullptr, nullptr};
  DType out_dtype[kMaxReduceOutputs] = {DType::kFloat32, DType::kFloat32};
  void* partials = nullptr;  // [num_outputs][splits] accumulators when splits > 1
};

// ---- loaders: an input element as the op's value type -------------------------------------

// A typed input whose conversion to V is exact (or is the op's own widening).
template <typename T, typename V>
struct TypedLoad {
  using value_t = V;
  const T* data;
  __device__ __forceinline__ V operator()(int64_t off) const { return convert<V>(data[off]); }
};

// Any input dtype, first converted to `via` (the op's output dtype, as PyTorch converts the
// input before reducing when a dtype is given), then to V.
template <typename V>
struct DynamicLoad {
  using value_t = V;
  const void* data;
  DType in;
  DType via;
  __device__ __forceinline__ V operator()(int64_t off) const {
    switch (via) {
      case DType::kUInt8:
        return convert<V>(load_as<uint8_t>(data, off, in));
      case DType::kInt8:
        return convert<V>(load_as<int8_t>(data, off, in));
      case DType::kInt16:
        return convert<V>(load_as<int16_t>(data, off, in));
      case DType::kInt32:
        return convert<V>(load_as<int32_t>(data, off, in));
      case DType::kInt64:
        return convert<V>(load_as<int64_t>(data, off, in));
      case DType::kFloat16:
        return convert<V>(load_as<__half>(data, off, in));
      case DType::kFloat32:
        return convert<V>(load_as<float>(data, off, in));
      case DType::kFloat64:
        return convert<V>(load_as<double>(data, off, in));
      case DType::kBool:
        return convert<V>(load_as<bool>(data, off, in));
      case DType::kBFloat16:
        return convert<V>(load_as<__nv_bfloat16>(data, off, in));
    }
    return V();
  }
};

// Integer accumulators narrower than 4 bytes are held as int32 (shuffles move whole words).
template <typename V>
using wide_t = std::conditional_t<(sizeof(V) < 4), int32_t, V>;

template <typename V>
__device__ __forceinline__ V lowest_value() {
  if constexpr (std::is_floating_point_v<V>) {
    return -std::numeric_limits<V>::infinity();
  } else {
    return std::numeric_limits<V>::lowest();
  }
}
template <typename V>
__device__ __forceinline__ V highest_value() {
  if constexpr (std::is_floating_point_v<V>) {
    return std::numeric_limits<V>::infinity();
  } else {
    return std::numeric_limits<V>::max();
  }
}

// Integer sums and products wrap (two's complement), as PyTorch's int64 accumulation does.
template <typename A>
__device__ __forceinline__ A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename A>
__device__ __forceinline__ A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// ---- ops ------------------------------------------------------------------------------------

// sum / mean. Acc is float (16-bit and 32-bit float outputs), double (float64) or int64
// (integer and bool outputs). mean: the sum rounded to the output dtype, then divided in its
// opmath (PyTorch's sum_out().div_()).
template <typename Load>
struct SumOp {
  using acc_t = typename Load::value_t;
  Load load;
  bool mean;
  __device__ __forceinline__ acc_t identity() const { return acc_t(0); }
  __device__ __forceinline__ acc_t reduce(acc_t a, acc_t v, int64_t) const {
    return wrap_add(a, v);
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const { return wrap_add(a, b); }
  __device__ __forceinline__ void finalize(acc_t a, int64_t count, const ReduceParams& p,
                                           const int64_t (&off)[3]) const {
    if constexpr (std::is_floating_point_v<acc_t>) {
      if (mean) {
        const acc_t s = round_through(a, p.out_dtype[0]);
        store_as(p.out[0], off[1], p.out_dtype[0], s / static_cast<acc_t>(count));
        return;
      }
    }
    store_as(p.out[0], off[1], p.out_dtype[0], a);
  }
};

template <typename Load>
struct ProdOp {
  using acc_t = typename Load::value_t;
  Load load;
  __device__ __forceinline__ acc_t identity() const { return acc_t(1); }
  __device__ __forceinline__ acc_t reduce(acc_t a, acc_t v, int64_t) const {
    return wrap_mul(a, v);
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const { return wrap_mul(a, b); }
  __device__ __forceinline__ void finalize(acc_t a, int64_t, const ReduceParams& p,
                                           const int64_t (&off)[3]) const {
    store_as(p.out[0], off[1], p.out_dtype[0], a);
  }
};

// The larger (is_max) or smaller of two values, a NaN winning whenever one is present.
template <typename V>
__device__ __forceinline__ V nan_extreme(V a, V b, bool is_max) {
  if (is_nan_value(a)) return a;
  if (is_nan_value(b)) return b;
  return is_max ? (b > a ? b : a) : (b < a ? b : a);
}

// amax / amin / max / min over dims (no indices).
template <typename Load>
struct ExtremeOp {
  using acc_t = wide_t<typename Load::value_t>;
  Load load;
  bool is_max;
  __device__ __forceinline__ acc_t identity() const {
    return is_max ? acc_t(lowest_value<typename Load::value_t>())
                  : acc_t(highest_value<typename Load::value_t>());
  }
  __device__ __forceinline__ acc_t reduce(acc_t a, acc_t v, int64_t) const {
    return nan_extreme(a, v, is_max);
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    return nan_extreme(a, b, is_max);
  }
  __device__ __forceinline__ void finalize(acc_t a, int64_t, const ReduceParams& p,
                                           const int64_t (&off)[3]) const {
    store_as(p.out[0], off[1], p.out_dtype[0], static_cast<typename Load::value_t>(a));
  }
};

template <typename W>
struct ValueIndex {
  W value;
  int64_t index;
};

// max.dim / min.dim (values and indices) and argmax / argmin: the first extreme, the first NaN
// when there is one, as PyTorch reports. value_slot is the output of the values (-1: none),
// index_slot that of the int64 indices.
template <typename Load>
struct ArgExtremeOp {
  using value_t = typename Load::value_t;
  using W = wide_t<value_t>;
  using acc_t = ValueIndex<W>;
  Load load;
  bool is_max;
  int value_slot;
  int index_slot;
  __device__ __forceinline__ acc_t identity() const {
    return {is_max ? W(lowest_value<value_t>()) : W(highest_value<value_t>()), INT64_MAX};
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    const bool a_nan = is_nan_value(a.value), b_nan = is_nan_value(b.value);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index <= b.index ? a : b;
      return a_nan ? a : b;
    }
    if (a.value == b.value) return a.index <= b.index ? a : b;
    return (is_max ? a.value > b.value : a.value < b.value) ? a : b;
  }
  __device__ __forceinline__ acc_t reduce(acc_t a, W v, int64_t index) const {
    return combine(a, acc_t{v, index});
  }
  __device__ __forceinline__ void finalize(acc_t a, int64_t, const ReduceParams& p,
                                           const int64_t (&off)[3]) const {
    if (value_slot >= 0)
      store_as(p.out[value_slot], off[1 + value_slot], p.out_dtype[value_slot],
               static_cast<value_t>(a.value));
    static_cast<int64_t*>(p.out[index_slot])[off[1 + index_slot]] = a.index;
  }
};

// any / all: the output is bool (uint8 for a uint8 input, holding 0 or 1).
template <typename Load>
struct AnyAllOp {
  using acc_t = int32_t;
  Load load;  // value_t bool
  bool all;
  __device__ __forceinline__ acc_t identity() const { return all ? 1 : 0; }
  __device__ __forceinline__ acc_t reduce(acc_t a, bool v, int64_t) const {
    return all ? (a & static_cast<int32_t>(v)) : (a | static_cast<int32_t>(v));
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    return all ? (a & b) : (a | b);
  }
  __device__ __forceinline__ void finalize(acc_t a, int64_t, const ReduceParams& p,
                                           const int64_t (&off)[3]) const {
    store_as(p.out[0], off[1], p.out_dtype[0], a != 0);
  }
};

template <typename A>
struct WelfordAcc {
  A mean;
  A m2;
  int64_t n;
};

// var / std (output 0) and the mean (output 1, optional) by Welford's online algorithm with
// Chan's pairwise combination, in float (double for float64). var = m2 / divisor, where the
// host computed divisor = max(0, count - correction); an empty reduction has a NaN mean.
template <typename Load>
struct WelfordOp {
  using A = typename Load::value_t;
  using acc_t = WelfordAcc<A>;
  Load load;
  A divisor;
  bool take_sqrt;
  bool with_mean;
  __device__ __forceinline__ acc_t identity() const { return {A(0), A(0), 0}; }
  __device__ __forceinline__ acc_t reduce(acc_t a, A v, int64_t) const {
    a.n += 1;
    const A delta = v - a.mean;
    a.mean += delta / static_cast<A>(a.n);
    a.m2 += delta * (v - a.mean);
    return a;
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const A nb_over_n = static_cast<A>(b.n) / static_cast<A>(n);
    const A delta = b.mean - a.mean;
    return {a.mean + delta * nb_over_n,
            a.m2 + b.m2 + delta * delta * static_cast<A>(a.n) * nb_over_n, n};
  }
  __device__ __forceinline__ void finalize(acc_t a, int64_t count, const ReduceParams& p,
                                           const int64_t (&off)[3]) const {
    const A var = a.m2 / divisor;
    store_as(p.out[0], off[1], p.out_dtype[0], take_sqrt ? sqrt(var) : var);
    if (with_mean) {
      const A mean = count == 0 ? std::numeric_limits<A>::quiet_NaN() : a.mean;
      store_as(p.out[1], off[2], p.out_dtype[1], mean);
    }
  }
};

// Vector norms of |x|: count of non-zeros (0), sum (1), sqrt of the sum of squares (2), max
// (inf) and min (-inf) with NaN propagating, else (sum |x|^p)^(1/p).
template <typename Load>
struct NormOp {
  using A = typename Load::value_t;
  using acc_t = A;
  Load load;
  NormKind kind;
  A p;
  __device__ __forceinline__ acc_t identity() const {
    return kind == NormKind::kNegInf ? std::numeric_limits<A>::infinity() : A(0);
  }
  __device__ __forceinline__ acc_t reduce(acc_t a, A x, int64_t) const {
    const A v = fabs(x);
    switch (kind) {
      case NormKind::kZero:
        return a + (v != A(0) ? A(1) : A(0));
      case NormKind::kOne:
        return a + v;
      case NormKind::kTwo:
        return a + v * v;
      case NormKind::kInf:
        return nan_extreme(a, v, true);
      case NormKind::kNegInf:
        return nan_extreme(a, v, false);
      case NormKind::kPower:
        return a + pow(v, p);
    }
    return a;
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    if (kind == NormKind::kInf) return nan_extreme(a, b, true);
    if (kind == NormKind::kNegInf) return nan_extreme(a, b, false);
    return a + b;
  }
  __device__ __forceinline__ void finalize(acc_t a, int64_t, const ReduceParams& prm,
                                           const int64_t (&off)[3]) const {
    if (kind == NormKind::kTwo) a = sqrt(a);
    if (kind == NormKind::kPower) a = pow(a, A(1) / p);
    store_as(prm.out[0], off[1], prm.out_dtype[0], a);
  }
};

// ---- kernels --------------------------------------------------------------------------------

// One thread's share of output `base`'s reduction: elements r, r + step, ... below end, with
// four independent accumulators.
template <typename Op>
__device__ __forceinline__ typename Op::acc_t thread_reduce(const Op& op, const ReduceParams& p,
                                                            int64_t base, int64_t r, int64_t end,
                                                            int64_t step) {
  using Acc = typename Op::acc_t;
  Acc a0 = op.identity(), a1 = op.identity(), a2 = op.identity(), a3 = op.identity();
  if (p.red.rank == 1) {
    const int64_t stride = p.red.strides[0][0];
    for (; r + 3 * step < end; r += 4 * step) {
      const auto v0 = op.load(base + r * stride);
      const auto v1 = op.load(base + (r + step) * stride);
      const auto v2 = op.load(base + (r + 2 * step) * stride);
      const auto v3 = op.load(base + (r + 3 * step) * stride);
      a0 = op.reduce(a0, v0, r);
      a1 = op.reduce(a1, v1, r + step);
      a2 = op.reduce(a2, v2, r + 2 * step);
      a3 = op.reduce(a3, v3, r + 3 * step);
    }
    for (; r < end; r += step) a0 = op.reduce(a0, op.load(base + r * stride), r);
  } else {
    for (; r < end; r += step) a0 = op.reduce(a0, op.load(base + p.red.get0(r)), r);
  }
  return op.combine(op.combine(a0, a1), op.combine(a2, a3));
}

template <typename Op>
__global__ void reduce_kernel(ReduceParams p, Op op) {
  using Acc = typename Op::acc_t;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  Acc* smem = reinterpret_cast<Acc*>(reduce_smem);
  const auto combine = [&](const Acc& a, const Acc& b) { return op.combine(a, b); };
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int64_t split = blockIdx.y;
  const int64_t r_begin = split * p.split_chunk;
  const int64_t r_end = p.count < r_begin + p.split_chunk ? p.count : r_begin + p.split_chunk;
  for (int64_t ob = blockIdx.x; ob < p.output_blocks; ob += gridDim.x) {
    const int64_t o = ob * p.outputs_per_block + (p.along_outputs ? tx : ty);
    const bool valid = o < p.num_outputs;
    int64_t off[3] = {0, 0, 0};
    Acc acc = op.identity();
    if (valid) {
      p.kept.get(o, off);
      if (p.along_outputs)
        acc = thread_reduce(op, p, off[0], r_begin + ty, r_end, by);
      else
        acc = thread_reduce(op, p, off[0], r_begin + tx, r_end, bx);
    }
    bool writer;
    if (!p.along_outputs) {
      // Segments of bx lanes (bx <= 32) or bx / 32 warps per output.
      acc = segment_reduce(acc, bx < kWarpSize ? bx : kWarpSize, combine);
      if (bx > kWarpSize) {
        const int warps_per_row = bx / kWarpSize;
        if (tx % kWarpSize == 0) smem[ty * warps_per_row + tx / kWarpSize] = acc;
        __syncthreads();
        if (tx == 0)
          for (int w = 1; w < warps_per_row; ++w) acc = combine(acc, smem[ty * warps_per_row + w]);
        __syncthreads();  // smem is rewritten by the next output block
      }
      writer = tx == 0;
    } else {
      smem[ty * bx + tx] = acc;
      __syncthreads();
      for (int s = by / 2; s > 0; s /= 2) {
        if (ty < s) smem[ty * bx + tx] = combine(smem[ty * bx + tx], smem[(ty + s) * bx + tx]);
        __syncthreads();
      }
      acc = smem[tx];
      __syncthreads();  // every thread read row 0 before the next output block rewrites it
      writer = ty == 0;
    }
    if (writer && valid) {
      if (p.splits == 1)
        op.finalize(acc, p.count, p, off);
      else
        static_cast<Acc*>(p.partials)[o * p.splits + split] = acc;
    }
  }
}

// Combines the split partials of each output and writes it.
template <typename Op>
__global__ void reduce_combine_kernel(ReduceParams p, Op op) {
  using Acc = typename Op::acc_t;
  const Acc* partials = static_cast<const Acc*>(p.partials);
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < p.num_outputs;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Acc acc = partials[o * p.splits];
    for (int64_t s = 1; s < p.splits; ++s) acc = op.combine(acc, partials[o * p.splits + s]);
    int64_t off[3];
    p.kept.get(o, off);
    op.finalize(acc, p.count, p, off);
  }
}

// Fills params from the layout and launches reduce_kernel (and the combine kernel when the
// schedule splits). outputs: up to two tensors of the layout's output shape.
Result<void> prepare_reduce_params(const ReduceLayout& layout, const ReduceSchedule& schedule,
                                   std::span<const DeviceTensor* const> outputs,
                                   const KernelScratch& scratch, ReduceParams& p);

template <typename Op>
Result<void> launch_reduce(const ReduceLayout& layout, Op op,
                           std::span<const DeviceTensor* const> outputs,
                           const KernelScratch& scratch, cudaStream_t stream) {
  if (layout.num_outputs == 0) return ok_result();
  using Acc = typename Op::acc_t;
  SPLICE_ASSIGN_OR_RETURN(int sms, current_sm_count());
  const ReduceSchedule schedule = plan_reduce_schedule(layout, sms, sizeof(Acc), scratch.bytes);
  ReduceParams p;
  SPLICE_TRY(prepare_reduce_params(layout, schedule, outputs, scratch, p));
  const dim3 block(schedule.block_x, schedule.block_y);
  const dim3 grid(static_cast<unsigned>(schedule.grid_x), static_cast<unsigned>(schedule.splits));
  const size_t smem = sizeof(Acc) * schedule.block_x * schedule.block_y;
  reduce_kernel<Op><<<grid, block, smem, stream>>>(p, op);
  SPLICE_CUDA_CHECK(cudaGetLastError());
  if (schedule.splits > 1) {
    const int64_t blocks = std::min<int64_t>((layout.num_outputs + 255) / 256, 65535);
    reduce_combine_kernel<Op><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p, op);
    SPLICE_CUDA_CHECK(cudaGetLastError());
  }
  return ok_result();
}

}  // namespace splice::cuda
