// Layer norm, RMS norm and group norm kernels (see norm.h). A row (layer/RMS norm) or a group
// (group norm) is handled by a warp when it has at most 1024 elements, else by a block of 512
// threads; each takes a pass for the mean, a pass for the squared deviations (not needed by
// RMS norm) and a pass that writes, all in float (double for float64). Weights, biases and the
// statistics outputs are read and written through their run-time dtypes.
#include "backends/cuda/norm.h"

#include <cuda_runtime.h>

#include <limits>
#include <optional>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/dependent_launch.cuh"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/error_word.cuh"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/reduce_plan.h"
#include "backends/cuda/reduce_primitives.cuh"
#include "tensor/tensor.h"

namespace splice::cuda {

namespace {

constexpr int kBlockThreads = 512;

template <int kGroup, typename V>
__device__ __forceinline__ V group_sum(V v, V* smem) {
  const auto add = [](V a, V b) { return a + b; };
  if constexpr (kGroup == kWarpSize) {
    return warp_allreduce(v, add);
  } else {
    return block_allreduce(v, smem, add);
  }
}

struct RowNormParams {
  const void* in;
  void* out;
  const void* weight;  // nullptr: none
  const void* bias;
  void* mean;  // nullptr: not wanted
  void* rstd;
  DType weight_dtype, bias_dtype, mean_dtype, rstd_dtype;
  StridedOffsets<4> rows;  // input, output, mean, rstd
  StridedOffsets<4> cols;  // input, output, weight, bias
  int64_t num_rows;
  int64_t num_cols;
  double eps;
  bool rms;
};

// kGroup threads per row: 32 (a warp; blocks of 128 hold 4 rows) or kBlockThreads (a block).
template <typename T, typename A, int kGroup>
__global__ void row_norm_kernel(RowNormParams p) {
  __shared__ A smem[kWarpSize];
  const int t = threadIdx.x % kGroup;
  const int groups_per_block = blockDim.x / kGroup;
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * groups_per_block + threadIdx.x / kGroup;
       row < p.num_rows; row += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    int64_t base[4];
    p.rows.get(row, base);
    A s = 0;
    for (int64_t j = t; j < p.num_cols; j += kGroup) {
      const A x = convert<A>(in[base[0] + p.cols.get0(j)]);
      s += p.rms ? x * x : x;
    }
    s = group_sum<kGroup>(s, smem);
    const A n = static_cast<A>(p.num_cols);
    A mean = 0, rstd;
    if (p.rms) {
      rstd = A(1) / sqrt(s / n + static_cast<A>(p.eps));
    } else {
      mean = s / n;
      A ss = 0;
      for (int64_t j = t; j < p.num_cols; j += kGroup) {
        const A d = convert<A>(in[base[0] + p.cols.get0(j)]) - mean;
        ss += d * d;
      }
      ss = group_sum<kGroup>(ss, smem);
      const A var = ss / n;
      rstd = A(1) / sqrt((var > A(0) ? var : A(0)) + static_cast<A>(p.eps));
    }
    const A shift = -rstd * mean;
    for (int64_t j = t; j < p.num_cols; j += kGroup) {
      int64_t off[4];
      p.cols.get(j, off);
      const A x = convert<A>(in[base[0] + off[0]]);
      A y = p.rms ? x * rstd : x * rstd + shift;
      if (p.weight) y *= load_as<A>(p.weight, off[2], p.weight_dtype);
      if (p.bias) y += load_as<A>(p.bias, off[3], p.bias_dtype);
      out[base[1] + off[1]] = convert<T>(y);
    }
    if (t == 0) {
      if (p.mean) store_as(p.mean, base[2], p.mean_dtype, mean);
      if (p.rstd) store_as(p.rstd, base[3], p.rstd_dtype, rstd);
    }
  }
}

struct GroupNormParams {
  const void* in;
  void* out;
  const void* weight;
  const void* bias;
  void* mean;
  void* rstd;
  DType weight_dtype, bias_dtype, mean_dtype, rstd_dtype;
  StridedOffsets<2> elems;  // row-major index over the input's shape: input, output offsets
  StridedOffsets<1> weight_offsets, bias_offsets;  // channel → element offset
  int64_t mean_strides[2], rstd_strides[2];        // [N, group]
  int64_t groups, channels_per_group, hxw, num_groups_total;
  double eps;
};

template <typename T, typename A, int kGroup>
__global__ void group_norm_kernel(GroupNormParams p) {
  __shared__ A smem[kWarpSize];
  const int t = threadIdx.x % kGroup;
  const int groups_per_block = blockDim.x / kGroup;
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  const int64_t count = p.channels_per_group * p.hxw;
  for (int64_t ng = static_cast<int64_t>(blockIdx.x) * groups_per_block + threadIdx.x / kGroup;
       ng < p.num_groups_total; ng += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    const int64_t base = ng * count;  // groups are consecutive runs in row-major order
    A s = 0;
    for (int64_t j = t; j < count; j += kGroup) s += convert<A>(in[p.elems.get0(base + j)]);
    s = group_sum<kGroup>(s, smem);
    const A mean = s / static_cast<A>(count);
    A ss = 0;
    for (int64_t j = t; j < count; j += kGroup) {
      const A d = convert<A>(in[p.elems.get0(base + j)]) - mean;
      ss += d * d;
    }
    ss = group_sum<kGroup>(ss, smem);
    const A rstd = A(1) / sqrt(ss / static_cast<A>(count) + static_cast<A>(p.eps));
    const int64_t g = ng % p.groups, n = ng / p.groups;
    const int64_t c0 = g * p.channels_per_group;
    for (int64_t j = t; j < count; j += kGroup) {
      int64_t off[2];
      p.elems.get(base + j, off);
      const int64_t ch = c0 + j / p.hxw;
      A y = (convert<A>(in[off[0]]) - mean) * rstd;
      if (p.weight) y *= load_as<A>(p.weight, p.weight_offsets.get0(ch), p.weight_dtype);
      if (p.bias) y += load_as<A>(p.bias, p.bias_offsets.get0(ch), p.bias_dtype);
      out[off[1]] = convert<T>(y);
    }
    if (t == 0) {
      if (p.mean)
        store_as(p.mean, n * p.mean_strides[0] + g * p.mean_strides[1], p.mean_dtype, mean);
      if (p.rstd)
        store_as(p.rstd, n * p.rstd_strides[0] + g * p.rstd_strides[1], p.rstd_dtype, rstd);
    }
  }
}

// An RMSNorm group (fused_rms_norm in norm.h). Operands: 0 x, 1 residual, 2 weight (broadcast
// along the rows), 3 sum, 4 out; all of the same sizes, the norm over the last dim.
struct FusedRmsNormParams {
  const void* x;
  const void* residual;  // nullptr: none
  const void* weight;    // nullptr: none
  void* sum;             // nullptr: not stored
  void* out;
  DType x_dtype, weight_dtype, out_dtype, stat, cast;
  StridedOffsets<5> rows;  // the leading dims
  int64_t cols[5];         // the last dim's stride per operand
  int64_t num_rows;
  int64_t num_cols;
  float eps;
  const int64_t* err;  // the call's error word: nothing is written once a check has failed
};

// The residual sum's element j, rounded to x's dtype as add's kernel rounds it.
__device__ __forceinline__ float fused_norm_input(const FusedRmsNormParams& p,
                                                  const int64_t (&base)[5], int64_t j) {
  const float x = load_as<float>(p.x, base[0] + j * p.cols[0], p.x_dtype);
  if (!p.residual) return x;
  return round_through(x + load_as<float>(p.residual, base[1] + j * p.cols[1], p.x_dtype),
                       p.x_dtype);
}

// Elements of a row a thread keeps in registers between the two passes (rows of up to
// kGroup * kFusedNormCached elements: 4096 on a block of 512, 1024 on 128, 256 on a warp).
constexpr int kFusedNormCached = 8;
// The threads of a row whose elements fit a warp's registers no longer (up to 1024 elements).
constexpr int kFusedNormRowBlock = 128;

// kGroup threads per row, as row_norm_kernel. Pass 1 sums the squares (storing the residual
// sum), pass 2 writes: every operation rounds where the exported chain rounds (norm.h). A row
// that fits in registers is loaded once, every load of a thread issued before the first store
// (a store to the sum may alias x for all the compiler knows, so interleaved loads and stores
// would wait on one another: one memory latency per element), and the weight is fetched before
// the reduction; a longer row is read twice, element by element.
template <int kGroup>
__global__ void fused_rms_norm_kernel(FusedRmsNormParams p) {
  __shared__ float smem[kWarpSize];
  dependent_start();
  if (failed(p.err)) return;  // uniform across the block: read once, before any barrier
  const int t = threadIdx.x % kGroup;
  const int groups_per_block = blockDim.x / kGroup;
  const bool cached = p.num_cols <= int64_t{kGroup} * kFusedNormCached;  // uniform
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * groups_per_block + threadIdx.x / kGroup;
       row < p.num_rows; row += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    int64_t base[5];
    p.rows.get(row, base);
    float s = 0;
    float a[kFusedNormCached], w[kFusedNormCached];
    if (cached) {
#pragma unroll
      for (int u = 0; u < kFusedNormCached; ++u) {
        const int64_t j = t + static_cast<int64_t>(u) * kGroup;
        a[u] = j < p.num_cols ? fused_norm_input(p, base, j) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kFusedNormCached; ++u) {
        const int64_t j = t + static_cast<int64_t>(u) * kGroup;
        w[u] = p.weight && j < p.num_cols
                   ? load_as<float>(p.weight, base[2] + j * p.cols[2], p.weight_dtype)
                   : 1.0f;
      }
#pragma unroll
      for (int u = 0; u < kFusedNormCached; ++u) {
        const int64_t j = t + static_cast<int64_t>(u) * kGroup;
        if (j >= p.num_cols) break;
        if (p.sum) store_as(p.sum, base[3] + j * p.cols[3], p.x_dtype, a[u]);
        const float xf = round_through(a[u], p.stat);  // the cast to the statistics' dtype
        s += round_through(xf * xf, p.stat);
      }
    } else {
      for (int64_t j = t; j < p.num_cols; j += kGroup) {
        const float av = fused_norm_input(p, base, j);
        if (p.sum) store_as(p.sum, base[3] + j * p.cols[3], p.x_dtype, av);
        const float xf = round_through(av, p.stat);
        s += round_through(xf * xf, p.stat);
      }
    }
    s = group_sum<kGroup>(s, smem);
    // rsqrt as the generated kernels compute it (IEEE division and square root).
    const float m = round_through(s / static_cast<float>(p.num_cols), p.stat);
    const float r = round_through(1.0f / sqrtf(round_through(m + p.eps, p.stat)), p.stat);
    if (cached) {
#pragma unroll
      for (int u = 0; u < kFusedNormCached; ++u) {
        const int64_t j = t + static_cast<int64_t>(u) * kGroup;
        if (j >= p.num_cols) break;
        const float xf = round_through(a[u], p.stat);
        float y = round_through(round_through(xf * r, p.stat), p.cast);
        if (p.weight) y = y * w[u];
        store_as(p.out, base[4] + j * p.cols[4], p.out_dtype, y);
      }
    } else {
      for (int64_t j = t; j < p.num_cols; j += kGroup) {
        const float xf = round_through(fused_norm_input(p, base, j), p.stat);
        float y = round_through(round_through(xf * r, p.stat), p.cast);
        if (p.weight) y = y * load_as<float>(p.weight, base[2] + j * p.cols[2], p.weight_dtype);
        store_as(p.out, base[4] + j * p.cols[4], p.out_dtype, y);
      }
    }
  }
}

Shape shape_of(const DeviceTensor& t) {
  return Shape(t.sizes.begin(), t.sizes.begin() + std::max(0, std::min(t.rank, kMaxDims)));
}

Result<void> check_rank(std::string_view op, const char* what, const DeviceTensor& t) {
  SPLICE_CHECK_OR_RETURN(t.rank >= 0 && t.rank <= kMaxDims, ErrorKind::kShapeMismatch,
                         "{}: {} has rank {} (at most {})", op, what, t.rank, kMaxDims);
  return ok_result();
}

Result<void> check_shape(std::string_view op, const char* what, const DeviceTensor& t,
                         const Shape& expected) {
  SPLICE_TRY(check_rank(op, what, t));
  SPLICE_CHECK_OR_RETURN(shape_of(t) == expected, ErrorKind::kShapeMismatch,
                         "{}: {} of shape {} must have shape {}", op, what,
                         shape_string(shape_of(t)), shape_string(expected));
  return ok_result();
}

// t seen with `sizes` (trailing dims aligned; a missing or size-1 dim repeats by a zero stride,
// as PyTorch broadcasts), or an error naming the operand.
Result<DeviceTensor> broadcast_operand(std::string_view op, const char* what, const DeviceTensor& t,
                                       const Shape& sizes) {
  SPLICE_TRY(check_rank(op, what, t));
  const int rank = static_cast<int>(sizes.size());
  SPLICE_CHECK_OR_RETURN(t.rank <= rank, ErrorKind::kShapeMismatch,
                         "{}: {} of shape {} does not broadcast to {}", op, what,
                         shape_string(shape_of(t)), shape_string(sizes));
  DeviceTensor b = t;
  b.rank = rank;
  const int lead = rank - t.rank;
  for (int d = rank - 1; d >= 0; --d) {
    const int from = d - lead;
    const int64_t size = from >= 0 ? t.sizes[from] : 1;
    SPLICE_CHECK_OR_RETURN(size == sizes[d] || size == 1, ErrorKind::kShapeMismatch,
                           "{}: {} of shape {} does not broadcast to {}", op, what,
                           shape_string(shape_of(t)), shape_string(sizes));
    b.sizes[d] = sizes[d];
    b.strides[d] = from >= 0 && size == sizes[d] ? t.strides[from] : 0;
  }
  return b;
}

template <typename F>
Result<void> dispatch_float_input(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat16:
      return f(DeviceTypeTag<__half>{});
    case DType::kBFloat16:
      return f(DeviceTypeTag<__nv_bfloat16>{});
    case DType::kFloat32:
      return f(DeviceTypeTag<float>{});
    case DType::kFloat64:
      return f(DeviceTypeTag<double>{});
    default:
      return Error(ErrorKind::kInternal, "norm: not a float dtype");
  }
}

unsigned grid_for(int64_t items, int64_t per_block) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 1 << 30));
}

// Shared by layer norm and RMS norm once their arguments are checked.
Result<void> launch_row_norm(const DeviceTensor& input, int64_t axis, const DeviceTensor* weight,
                             const DeviceTensor* bias, double eps, bool rms,
                             const DeviceTensor& out, const DeviceTensor* mean,
                             const DeviceTensor* rstd, cudaStream_t stream) {
  RowNormParams p{};
  p.in = input.data;
  p.out = out.data;
  p.weight = weight ? weight->data : nullptr;
  p.bias = bias ? bias->data : nullptr;
  p.mean = mean ? mean->data : nullptr;
  p.rstd = rstd ? rstd->data : nullptr;
  p.weight_dtype = weight ? weight->dtype : DType::kFloat32;
  p.bias_dtype = bias ? bias->dtype : DType::kFloat32;
  p.mean_dtype = mean ? mean->dtype : DType::kFloat32;
  p.rstd_dtype = rstd ? rstd->dtype : DType::kFloat32;
  p.eps = eps;
  p.rms = rms;
  // Rows: the leading dims (input, output, mean, rstd share them).
  Shape row_sizes, cols_sizes;
  std::vector<int64_t> rs[4], cs[4];
  const DeviceTensor* row_ops[4] = {&input, &out, mean, rstd};
  const DeviceTensor* col_ops[4] = {&input, &out, weight, bias};
  for (int d = 0; d < input.rank; ++d) {
    if (d < axis) {
      row_sizes.push_back(input.sizes[d]);
      for (int i = 0; i < 4; ++i) rs[i].push_back(row_ops[i] ? row_ops[i]->strides[d] : 0);
    } else {
      cols_sizes.push_back(input.sizes[d]);
      // weight and bias have only the normalized dims
      for (int i = 0; i < 4; ++i) {
        const int od = i < 2 ? d : d - static_cast<int>(axis);
        cs[i].push_back(col_ops[i] ? col_ops[i]->strides[od] : 0);
      }
    }
  }
  p.num_rows = shape_numel(row_sizes);
  p.num_cols = shape_numel(cols_sizes);
  if (p.num_rows == 0) return ok_result();
  merge_dims(row_sizes, {&rs[0], &rs[1], &rs[2], &rs[3]});
  merge_dims(cols_sizes, {&cs[0], &cs[1], &cs[2], &cs[3]});
  p.rows.rank = static_cast<int>(row_sizes.size());
  p.cols.rank = static_cast<int>(cols_sizes.size());
  for (int d = 0; d < p.rows.rank; ++d) {
    p.rows.sizes[d] = row_sizes[d];
    for (int i = 0; i < 4; ++i) p.rows.strides[i][d] = rs[i][d];
  }
  for (int d = 0; d < p.cols.rank; ++d) {
    p.cols.sizes[d] = cols_sizes[d];
    for (int i = 0; i < 4; ++i) p.cols.strides[i][d] = cs[i][d];
  }
  return dispatch_float_input(input.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    if (p.num_cols <= 1024) {
      row_norm_kernel<T, A, kWarpSize><<<grid_for(p.num_rows, 4), 128, 0, stream>>>(p);
    } else {
      row_norm_kernel<T, A, kBlockThreads>
          <<<grid_for(p.num_rows, 1), kBlockThreads, 0, stream>>>(p);
    }
    SPLICE_CUDA_CHECK(cudaGetLastError());
    return ok_result();
  });
}

// The checks layer norm and RMS norm share: float input, normalized_shape = trailing dims.
Result<int64_t> check_normalized(std::string_view op, const DeviceTensor& input,
                                 std::span<const int64_t> normalized_shape,
                                 const DeviceTensor& out) {
  SPLICE_TRY(check_rank(op, "input", input));
  SPLICE_CHECK_OR_RETURN(is_floating(input.dtype), ErrorKind::kBadInput,
                         "{}: expects a floating point input, got {}", op, dtype_name(input.dtype));
  const Shape norm(normalized_shape.begin(), normalized_shape.end());
  const int64_t nd = static_cast<int64_t>(norm.size());
  const int64_t axis = input.rank - nd;
  const Shape in_shape = shape_of(input);
  SPLICE_CHECK_OR_RETURN(
      nd >= 1 && axis >= 0 && Shape(in_shape.begin() + axis, in_shape.end()) == norm,
      ErrorKind::kShapeMismatch, "{}: normalized_shape {} does not match the trailing dims of {}",
      op, shape_string(norm), shape_string(in_shape));
  SPLICE_TRY(check_shape(op, "out", out, in_shape));
  SPLICE_CHECK_OR_RETURN(out.dtype == input.dtype, ErrorKind::kBadInput,
                         "{}: out dtype {} must be the input's {}", op, dtype_name(out.dtype),
                         dtype_name(input.dtype));
  return axis;
}

}  // namespace

Result<void> fused_rms_norm(const DeviceTensor& x, const DeviceTensor* residual,
                            const DeviceTensor* weight, const DeviceTensor* sum,
                            const DeviceTensor& out, DType stat, DType cast, double eps,
                            const int64_t* error_word, cudaStream_t stream) {
  constexpr std::string_view op = "an RMSNorm group";
  SPLICE_TRY(check_rank(op, "out", out));
  SPLICE_CHECK_OR_RETURN(out.rank >= 1, ErrorKind::kShapeMismatch, "{}: out is 0-d", op);
  // The norm's sizes are out's; the inputs broadcast to them (the runtime passes the weight
  // [H] as [1, ..., 1, H]), the residual sum has them.
  const Shape sizes = shape_of(out);
  if (sum) SPLICE_TRY(check_shape(op, "sum", *sum, sizes));
  SPLICE_ASSIGN_OR_RETURN(const DeviceTensor xb, broadcast_operand(op, "x", x, sizes));
  std::optional<DeviceTensor> rb, wb;
  if (residual) {
    SPLICE_ASSIGN_OR_RETURN(rb, broadcast_operand(op, "residual", *residual, sizes));
  }
  if (weight) {
    SPLICE_ASSIGN_OR_RETURN(wb, broadcast_operand(op, "weight", *weight, sizes));
  }
  const DeviceTensor* ops[5] = {&xb, rb ? &*rb : nullptr, wb ? &*wb : nullptr, sum, &out};
  auto norm_dtype = [](DType d) {
    return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32;
  };
  for (DType d : {x.dtype, out.dtype, stat, cast, weight ? weight->dtype : DType::kFloat32})
    SPLICE_CHECK_OR_RETURN(norm_dtype(d), ErrorKind::kUnsupportedOp,
                           "{}: {} is not float16, bfloat16 or float32", op, dtype_name(d));
  SPLICE_CHECK_OR_RETURN(
      (!residual || residual->dtype == x.dtype) && (!sum || sum->dtype == x.dtype),
      ErrorKind::kBadInput, "{}: the residual and the sum must have x's dtype {}", op,
      dtype_name(x.dtype));
  FusedRmsNormParams p{};
  p.x = x.data;
  p.residual = residual ? residual->data : nullptr;
  p.weight = weight ? weight->data : nullptr;
  p.sum = sum ? sum->data : nullptr;
  p.out = out.data;
  p.x_dtype = x.dtype;
  p.weight_dtype = weight ? weight->dtype : DType::kFloat32;
  p.out_dtype = out.dtype;
  p.stat = stat;
  p.cast = cast;
  p.eps = static_cast<float>(eps);  // add(mean, eps) on a float32 tensor rounds eps to float
  p.err = error_word;
  const int last = out.rank - 1;
  Shape row_sizes;
  std::vector<int64_t> rs[5];
  for (int d = 0; d < last; ++d) {
    row_sizes.push_back(sizes[d]);
    for (int i = 0; i < 5; ++i) rs[i].push_back(ops[i] ? ops[i]->strides[d] : 0);
  }
  for (int i = 0; i < 5; ++i) p.cols[i] = ops[i] ? ops[i]->strides[last] : 0;
  p.num_rows = shape_numel(row_sizes);
  p.num_cols = sizes[last];
  if (p.num_rows == 0 || p.num_cols == 0) return ok_result();
  if (row_sizes.empty()) {  // one row: a rank-1 row space of size 1
    row_sizes.push_back(1);
    for (auto& r : rs) r.push_back(0);
  }
  merge_dims(row_sizes, {&rs[0], &rs[1], &rs[2], &rs[3], &rs[4]});
  p.rows.rank = static_cast<int>(row_sizes.size());
  for (int d = 0; d < p.rows.rank; ++d) {
    p.rows.sizes[d] = row_sizes[d];
    for (int i = 0; i < 5; ++i) p.rows.strides[i][d] = rs[i][d];
  }
  if (p.num_cols <= kWarpSize * kFusedNormCached) {
    SPLICE_CUDA_CHECK(launch_dependent(fused_rms_norm_kernel<kWarpSize>,
                                       dim3(grid_for(p.num_rows, 4)), dim3(128), 0, stream, p));
  } else if (p.num_cols <= kFusedNormRowBlock * kFusedNormCached) {
    // A row of up to 1024 (SmolVLA's 960 and 720) on a warp would be read element by element
    // (44 us for 113 rows, a memory latency per element); on a block of 128 threads it is
    // loaded once, 8 elements a thread, and every row gets its own block.
    SPLICE_CUDA_CHECK(launch_dependent(fused_rms_norm_kernel<kFusedNormRowBlock>,
                                       dim3(grid_for(p.num_rows, 1)), dim3(kFusedNormRowBlock), 0,
                                       stream, p));
  } else {
    SPLICE_CUDA_CHECK(launch_dependent(fused_rms_norm_kernel<kBlockThreads>,
                                       dim3(grid_for(p.num_rows, 1)), dim3(kBlockThreads), 0,
                                       stream, p));
  }
  return ok_result();
}

Result<void> layer_norm(const DeviceTensor& input, std::span<const int64_t> normalized_shape,
                        const DeviceTensor* weight, const DeviceTensor* bias, double eps,
                        const DeviceTensor& out, const DeviceTensor* mean, const DeviceTensor* rstd,
                        cudaStream_t stream) {
  constexpr std::string_view op = "native_layer_norm";
  SPLICE_ASSIGN_OR_RETURN(int64_t axis, check_normalized(op, input, normalized_shape, out));
  const Shape norm(normalized_shape.begin(), normalized_shape.end());
  const bool reduced = input.dtype == DType::kFloat16 || input.dtype == DType::kBFloat16;
  for (const DeviceTensor* t : {weight, bias}) {
    if (!t) continue;
    SPLICE_TRY(check_shape(op, "weight/bias", *t, norm));
    SPLICE_CHECK_OR_RETURN(t->dtype == input.dtype || (reduced && t->dtype == DType::kFloat32),
                           ErrorKind::kShapeMismatch,
                           "{}: weight/bias dtype {} does not match the input's {}", op,
                           dtype_name(t->dtype), dtype_name(input.dtype));
  }
  Shape stat_shape = shape_of(input);
  for (int64_t d = axis; d < input.rank; ++d) stat_shape[d] = 1;
  for (const DeviceTensor* t : {mean, rstd}) {
    if (!t) continue;
    SPLICE_TRY(check_shape(op, "mean/rstd", *t, stat_shape));
    SPLICE_CHECK_OR_RETURN(is_floating(t->dtype), ErrorKind::kBadInput,
                           "{}: mean/rstd must be floating point, got {}", op,
                           dtype_name(t->dtype));
  }
  return launch_row_norm(input, axis, weight, bias, eps, false, out, mean, rstd, stream);
}

Result<void> rms_norm(const DeviceTensor& input, std::span<const int64_t> normalized_shape,
                      const DeviceTensor* weight, std::optional<double> eps,
                      const DeviceTensor& out, const DeviceTensor* rstd, cudaStream_t stream) {
  constexpr std::string_view op = "rms_norm";
  SPLICE_ASSIGN_OR_RETURN(int64_t axis, check_normalized(op, input, normalized_shape, out));
  const Shape norm(normalized_shape.begin(), normalized_shape.end());
  if (weight) {
    SPLICE_TRY(check_shape(op, "weight", *weight, norm));
    SPLICE_CHECK_OR_RETURN(is_floating(weight->dtype), ErrorKind::kBadInput,
                           "{}: weight must be floating point, got {}", op,
                           dtype_name(weight->dtype));
  }
  if (rstd) {
    Shape rstd_shape = shape_of(input);
    for (int64_t d = axis; d < input.rank; ++d) rstd_shape[d] = 1;
    SPLICE_TRY(check_shape(op, "rstd", *rstd, rstd_shape));
    SPLICE_CHECK_OR_RETURN(is_floating(rstd->dtype), ErrorKind::kBadInput,
                           "{}: rstd must be floating point, got {}", op, dtype_name(rstd->dtype));
  }
  const double e = eps ? *eps
                   : input.dtype == DType::kFloat64
                       ? std::numeric_limits<double>::epsilon()
                       : static_cast<double>(std::numeric_limits<float>::epsilon());
  return launch_row_norm(input, axis, weight, nullptr, e, true, out, nullptr, rstd, stream);
}

Result<void> group_norm(const DeviceTensor& input, const DeviceTensor* weight,
                        const DeviceTensor* bias, int64_t n, int64_t c, int64_t hxw, int64_t groups,
                        double eps, const DeviceTensor& out, const DeviceTensor* mean,
                        const DeviceTensor* rstd, cudaStream_t stream) {
  constexpr std::string_view op = "native_group_norm";
  SPLICE_TRY(check_rank(op, "input", input));
  SPLICE_CHECK_OR_RETURN(is_floating(input.dtype), ErrorKind::kBadInput,
                         "{}: expected a floating point input, got {}", op,
                         dtype_name(input.dtype));
  const Shape in_shape = shape_of(input);
  SPLICE_CHECK_OR_RETURN(groups > 0 && c % groups == 0, ErrorKind::kShapeMismatch,
                         "{}: expected number of channels in input to be divisible by num_groups, "
                         "but got input of shape {} and num_groups={}",
                         op, shape_string(in_shape), groups);
  const bool counts_fit =
      n >= 0 && c >= 0 && hxw >= 0 &&
      (n == 0 || c == 0 || hxw == 0 || (c <= INT64_MAX / n && hxw <= INT64_MAX / (n * c))) &&
      n * c * hxw == shape_numel(in_shape);
  SPLICE_CHECK_OR_RETURN(counts_fit, ErrorKind::kShapeMismatch,
                         "{}: N={} C={} HxW={} do not match an input of shape {}", op, n, c, hxw,
                         shape_string(in_shape));
  for (const DeviceTensor* t : {weight, bias}) {
    if (!t) continue;
    SPLICE_TRY(check_rank(op, "weight/bias", *t));
    SPLICE_CHECK_OR_RETURN(t->numel() == c && is_floating(t->dtype), ErrorKind::kShapeMismatch,
                           "{}: expected weight and bias to have {} float elements, got shape {} "
                           "of {}",
                           op, c, shape_string(shape_of(*t)), dtype_name(t->dtype));
  }
  SPLICE_TRY(check_shape(op, "out", out, in_shape));
  SPLICE_CHECK_OR_RETURN(out.dtype == input.dtype, ErrorKind::kBadInput,
                         "{}: out dtype {} must be the input's {}", op, dtype_name(out.dtype),
                         dtype_name(input.dtype));
  for (const DeviceTensor* t : {mean, rstd}) {
    if (!t) continue;
    SPLICE_TRY(check_shape(op, "mean/rstd", *t, Shape{n, groups}));
    SPLICE_CHECK_OR_RETURN(is_floating(t->dtype), ErrorKind::kBadInput,
                           "{}: mean/rstd must be floating point, got {}", op,
                           dtype_name(t->dtype));
  }
  if (n == 0) return ok_result();
  GroupNormParams p{};
  p.in = input.data;
  p.out = out.data;
  p.weight = weight ? weight->data : nullptr;
  p.bias = bias ? bias->data : nullptr;
  p.mean = mean ? mean->data : nullptr;
  p.rstd = rstd ? rstd->data : nullptr;
  p.weight_dtype = weight ? weight->dtype : DType::kFloat32;
  p.bias_dtype = bias ? bias->dtype : DType::kFloat32;
  p.mean_dtype = mean ? mean->dtype : DType::kFloat32;
  p.rstd_dtype = rstd ? rstd->dtype : DType::kFloat32;
  p.groups = groups;
  p.channels_per_group = c / groups;
  p.hxw = hxw;
  p.num_groups_total = n * groups;
  p.eps = eps;
  Shape sizes = in_shape;
  std::vector<int64_t> s_in(input.strides.begin(), input.strides.begin() + input.rank);
  std::vector<int64_t> s_out(out.strides.begin(), out.strides.begin() + out.rank);
  merge_dims(sizes, {&s_in, &s_out});
  p.elems.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < p.elems.rank; ++d) {
    p.elems.sizes[d] = sizes[d];
    p.elems.strides[0][d] = s_in[d];
    p.elems.strides[1][d] = s_out[d];
  }
  const auto fill_channel_offsets = [](const DeviceTensor* t, StridedOffsets<1>& o) {
    if (!t) return;
    Shape ts = shape_of(*t);
    std::vector<int64_t> st(t->strides.begin(), t->strides.begin() + t->rank);
    merge_dims(ts, {&st});
    o.rank = static_cast<int>(ts.size());
    for (int d = 0; d < o.rank; ++d) {
      o.sizes[d] = ts[d];
      o.strides[0][d] = st[d];
    }
  };
  fill_channel_offsets(weight, p.weight_offsets);
  fill_channel_offsets(bias, p.bias_offsets);
  for (int i = 0; i < 2; ++i) {
    p.mean_strides[i] = mean ? mean->strides[i] : 0;
    p.rstd_strides[i] = rstd ? rstd->strides[i] : 0;
  }
  const int64_t count = p.channels_per_group * hxw;
  return dispatch_float_input(input.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    if (count <= 1024) {
      group_norm_kernel<T, A, kWarpSize><<<grid_for(p.num_groups_total, 4), 128, 0, stream>>>(p);
    } else {
      group_norm_kernel<T, A, kBlockThreads>
          <<<grid_for(p.num_groups_total, 1), kBlockThreads, 0, stream>>>(p);
    }
    SPLICE_CUDA_CHECK(cudaGetLastError());
    return ok_result();
  });
}

}  // namespace splice::cuda
