// The CUDA source of a GEMV with an epilogue (gemv_epilogue.h): the preamble and compute() of
// the pointwise generator, a parameter struct, and one kernel per row tile. The GEMV loop is
// gemv.cu's rows kernel (16-byte weight loads that bypass L1, four in flight per lane, a warp
// sum per weight row, split-K partials summed in split order by the tile's last block).
#include <fmt/format.h>

#include "backends/cuda/gemv_epilogue.h"
#include "backends/cuda/pointwise_codegen.h"
#include "backends/cuda/pointwise_expressions.h"

namespace splice::cuda {

namespace {

constexpr int kRowTiles[] = {1, 2, 4, 8, 16};

// The kernel template: {T} the storage type of x, the weight and the product, {V} elements per
// 16 bytes, {R} ranges, {N} tensor operands (inputs then outputs), and the epilogue's loads,
// call and stores.
constexpr const char* kKernelTemplate = R"KERNEL(
__device__ __forceinline__ uint4 sp_ld_stream(const void* p) {{
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {{%0, %1, %2, %3}}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}}
__device__ __forceinline__ void sp_unpack(const uint4& raw, float (&f)[{V}]) {{
  const {T}* e = (const {T}*)&raw;
#pragma unroll
  for (int i = 0; i < {V}; ++i) f[i] = {to_float};
}}
__device__ __forceinline__ float sp_warp_sum(float v) {{
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}}

{prologue}
template <int MT>
__device__ __forceinline__ void sp_gemv_epilogue(const Params& p) {{
  __shared__ float red[8][MT];
  __shared__ float tile[MT][8];
  __shared__ float sp_r[MT];
  __shared__ int last;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int cpb = (int)p.cols_per_block;
  const int vr = cpb * {R};  // weight rows per block: each column's row of every range
  const int per_row = 8 / vr;
  const int vrow = warp / per_row, sub = warp % per_row;
  const bool active = vrow < vr;
  const int r = vrow / cpb, jj = vrow % cpb;
  const long long k0 = (long long)blockIdx.y * p.k_per_split;
  const long long k1 = min(p.k, k0 + p.k_per_split);
  // A tile's weight lines into L2: the first tile's while the kernel before this one drains
  // and the prologue below reads x, each next one's while this block reads the current one.
  const auto prefetch = [&](long long t) {{
    const long long j = t * cpb + jj;
    if (!active || t >= p.tiles || j >= p.n) return;
    const char* wrow = p.w + (p.col[r] + j) * p.w_ns * (long long)sizeof({T});
    for (long long b = k0 * (long long)sizeof({T}) + (long long)(sub * 32 + lane) * 128;
         b < k1 * (long long)sizeof({T}); b += (long long)per_row * 32 * 128)
      sp_prefetch_l2(wrow + b);
  }};
  prefetch(blockIdx.x);
  sp_dependent_start();
  if (sp_failed(p.err)) return;  // uniform: the word does not change during this kernel
  sp_row_stats<MT>(p, sp_r);
  // The block's tiles (gridDim.x apart: fewer blocks than tiles keep the prologue's cost to
  // one per block); every iteration is uniform over the block, and its barriers also order
  // one iteration's reads of red and tile before the next one's writes.
  for (long long t = blockIdx.x; t < p.tiles; t += gridDim.x) {{
    prefetch(t + gridDim.x);
    const long long j0 = t * cpb;
    float acc[MT];
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[m] = 0.0f;
    if (active && j0 + jj < p.n) {{
      const {T}* x = (const {T}*)p.x;
      const {T}* wrow = (const {T}*)p.w + (p.col[r] + j0 + jj) * p.w_ns;
      const long long step = (long long)per_row * 32 * {V};
      long long kk = k0 + (long long)(sub * 32 + lane) * {V};
      for (; kk + 3 * step < k1; kk += 4 * step) {{
        uint4 raw[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) raw[u] = sp_ld_stream(wrow + kk + u * step);
#pragma unroll
        for (int u = 0; u < 4; ++u) {{
          float wf[{V}];
          sp_unpack(raw[u], wf);
#pragma unroll
          for (int m = 0; m < MT; ++m) {{
            if (m >= p.m) break;
            float xf[{V}];
            sp_load_x(p, x, m, kk + u * step, sp_r[m], xf);
#pragma unroll
            for (int i = 0; i < {V}; ++i) acc[m] = fmaf(xf[i], wf[i], acc[m]);
          }}
        }}
      }}
      for (; kk < k1; kk += step) {{
        float wf[{V}];
        sp_unpack(sp_ld_stream(wrow + kk), wf);
#pragma unroll
        for (int m = 0; m < MT; ++m) {{
          if (m >= p.m) break;
          float xf[{V}];
          sp_load_x(p, x, m, kk, sp_r[m], xf);
#pragma unroll
          for (int i = 0; i < {V}; ++i) acc[m] = fmaf(xf[i], wf[i], acc[m]);
        }}
      }}
    }}
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[m] = sp_warp_sum(acc[m]);
    if (lane == 0) {{
#pragma unroll
      for (int m = 0; m < MT; ++m) red[warp][m] = acc[m];
    }}
    __syncthreads();
    for (int idx = threadIdx.x; idx < MT * vr; idx += blockDim.x) {{
      const int m = idx / vr, v = idx % vr;
      float s = 0.0f;
      for (int q = 0; q < per_row; ++q) s += red[v * per_row + q][m];
      tile[m][v] = s;
    }}
    __syncthreads();
    if (p.splits > 1) {{
      // Partials [split][m][range][j]; the tile's last block sums them in split order.
      const long long plane = p.m * {R} * p.n;
      float* mine = p.partials + (long long)blockIdx.y * plane;
      for (int idx = threadIdx.x; idx < p.m * vr; idx += blockDim.x) {{
        const int m = idx / vr, v = idx % vr;
        const long long j = j0 + v % cpb;
        if (j < p.n) mine[(m * {R} + v / cpb) * p.n + j] = tile[m][v];
      }}
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) {{
        const unsigned arrived = atomicAdd(&p.counters[t], 1u);
        last = arrived == (unsigned)(p.splits - 1);
        if (last) p.counters[t] = 0;
      }}
      __syncthreads();
      if (!last) return;
      __threadfence();
      for (int idx = threadIdx.x; idx < p.m * vr; idx += blockDim.x) {{
        const int m = idx / vr, v = idx % vr;
        const long long j = j0 + v % cpb;
        if (j >= p.n) continue;
        float s = 0.0f;
        for (long long q = 0; q < p.splits; ++q)
          s += __ldcg(p.partials + q * plane + (m * {R} + v / cpb) * p.n + j);
        tile[m][v] = s;
      }}
      __syncthreads();
    }}
    // The epilogue: one thread per (row, column).
    for (int idx = threadIdx.x; idx < p.m * cpb; idx += blockDim.x) {{
      const int m = idx / cpb, c = idx % cpb;
      const long long j = j0 + c;
      if (j >= p.n) continue;
{ranges}{loads}    compute(p, (long long)m * p.n + j{args});
{stores}    }}
  }}
}}
)KERNEL";

// x as the product reads it: its 16 bytes at (m, k) as floats; with an RMSNorm prologue each
// element is normalised as the fused norm kernel does (norm.cu), rounding where the exported
// chain rounds: the statistics' dtype, the cast, the weight's product in x's dtype.
constexpr const char* kPlainX = R"PLAIN(
template <int MT>
__device__ __forceinline__ void sp_row_stats(const Params& p, float* r) {{}}
__device__ __forceinline__ void sp_load_x(const Params& p, const {T}* x, long long m, long long k,
                                          float r, float (&f)[{V}]) {{
  sp_unpack(*(const uint4*)(x + m * p.x_rs + k), f);
}}
)PLAIN";

constexpr const char* kNormX = R"NORM(
__device__ __forceinline__ float sp_stat(float v) {{ return {stat}; }}
__device__ __forceinline__ float sp_cast(float v) {{ return {cast}; }}
__device__ __forceinline__ float sp_out(float v) {{ return {out}; }}
// x's 16 bytes at (m, k), normalised.
__device__ __forceinline__ void sp_norm_chunk(const Params& p, const {T}* x, long long m,
                                              long long k, float r, float (&f)[{V}]) {{
  sp_unpack(*(const uint4*)(x + m * p.x_rs + k), f);
  float w[{V}];
  if (p.nw) sp_unpack(*(const uint4*)((const {T}*)p.nw + k), w);
#pragma unroll
  for (int i = 0; i < {V}; ++i) {{
    const float y = sp_cast(sp_stat(sp_stat(f[i]) * r));
    f[i] = sp_out(p.nw ? y * w[i] : y);
  }}
}}
// Where its rows fit in 32 KB, x is normalised once per block into shared memory, in x's dtype
// (the chain's last rounding is to it: the staged values are exact): each weight chunk then
// costs one shared-memory load, not x's and the norm weight's loads and the rounding chain
// (which every warp repeated for every weight row it read; the gate/up kernel read its weights
// at 1.46 TB/s on an H100 where the plain GEMV reads 2.0).
__device__ __forceinline__ uint4* sp_stage() {{
  __shared__ uint4 stage[2048];
  return stage;
}}
__device__ __forceinline__ bool sp_staged(const Params& p) {{ return p.m * p.k <= 2048LL * {V}; }}
// Each row's rsqrt(mean(x^2) + eps) before any weight is read, by the whole block: each thread
// sums 16-byte chunks of the row (a decode row of 2048 halves is one chunk a thread), the
// warps' sums meet in shared memory. (It replaced a warp per row, element by element; on an
// H100 that changed the gate/up kernel's time by less than 1%, so the statistics were not
// what held it at 1.46 TB/s.) The launch has 8 warps (__launch_bounds__(256) below).
template <int MT>
__device__ __forceinline__ void sp_row_stats(const Params& p, float* r) {{
  __shared__ float part[MT][8];
  const {T}* x = (const {T}*)p.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int m = 0; m < MT; ++m) {{
    if (m >= p.m) break;
    float s = 0.0f;
    for (long long k = (long long)threadIdx.x * {V}; k < p.k; k += (long long)blockDim.x * {V}) {{
      float f[{V}];
      sp_unpack(*(const uint4*)(x + m * p.x_rs + k), f);
#pragma unroll
      for (int i = 0; i < {V}; ++i) {{
        const float xf = sp_stat(f[i]);
        s += sp_stat(xf * xf);
      }}
    }}
    s = sp_warp_sum(s);
    if (lane == 0) part[m][warp] = s;
  }}
  __syncthreads();
  for (int m = threadIdx.x; m < p.m; m += blockDim.x) {{
    float s = 0.0f;
    for (int w = 0; w < 8; ++w) s += part[m][w];
    const float mean = sp_stat(s / (float)p.k);
    r[m] = sp_stat(1.0f / sqrtf(sp_stat(mean + p.eps)));
  }}
  __syncthreads();
  if (!sp_staged(p)) return;
  uint4* stage = sp_stage();
  for (long long i = (long long)threadIdx.x * {V}; i < p.m * p.k; i += (long long)blockDim.x * {V}) {{
    const long long m = i / p.k;
    float f[{V}];
    sp_norm_chunk(p, x, m, i - m * p.k, r[m], f);
    uint4 raw;
    {T}* e = ({T}*)&raw;
#pragma unroll
    for (int j = 0; j < {V}; ++j) e[j] = {to_t};
    stage[i / {V}] = raw;
  }}
  __syncthreads();
}}
__device__ __forceinline__ void sp_load_x(const Params& p, const {T}* x, long long m, long long k,
                                          float r, float (&f)[{V}]) {{
  if (sp_staged(p)) {{
    sp_unpack(sp_stage()[(m * p.k + k) / {V}], f);
    return;
  }}
  sp_norm_chunk(p, x, m, k, r, f);
}}
)NORM";

}  // namespace

const char* gemv_epilogue_kernel_name(int row_tile) {
  switch (row_tile) {
    case 1:
      return "splice_gemv_epilogue_1";
    case 2:
      return "splice_gemv_epilogue_2";
    case 4:
      return "splice_gemv_epilogue_4";
    case 8:
      return "splice_gemv_epilogue_8";
    default:
      return "splice_gemv_epilogue_16";
  }
}

Result<std::string> generate_gemv_epilogue_source(const GemvEpilogueShape& shape) {
  const ir::PointwiseProgram& p = shape.program;
  SPLICE_TRY(ir::validate(p));
  SPLICE_CHECK_OR_RETURN(shape.is_range.size() == p.inputs.size(), ErrorKind::kInternal,
                         "a GEMV epilogue marks {} of its {} inputs", shape.is_range.size(),
                         p.inputs.size());
  SPLICE_CHECK_OR_RETURN(shape.dtype == DType::kFloat16 || shape.dtype == DType::kBFloat16 ||
                             shape.dtype == DType::kFloat32,
                         ErrorKind::kUnsupportedOp, "a GEMV epilogue over {} products",
                         dtype_name(shape.dtype));
  int ranges = 0, tensors = 0;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    if (!shape.is_range[k]) {
      ++tensors;
      continue;
    }
    ++ranges;
    SPLICE_CHECK_OR_RETURN(p.inputs[k].dtype == shape.dtype, ErrorKind::kInternal,
                           "a GEMV epilogue reads the {} product as {}", dtype_name(shape.dtype),
                           dtype_name(p.inputs[k].dtype));
  }
  const int operands = tensors + static_cast<int>(p.outputs.size());
  SPLICE_CHECK_OR_RETURN(
      ranges >= 1 && ranges <= kMaxEpilogueRanges && operands <= kMaxEpilogueOperands &&
          p.constants.size() <= static_cast<size_t>(kMaxPointwiseConstants),
      ErrorKind::kUnsupportedOp, "a GEMV epilogue of {} ranges, {} operands and {} constants",
      ranges, operands, p.constants.size());
  const char* t = pointwise_storage_type(shape.dtype);
  const int vec = 16 / static_cast<int>(dtype_size(shape.dtype));

  std::string s = "// splice GEMV epilogue kernel (generated)\n";
  s += pointwise_preamble();
  s += fmt::format(
      "struct Params {{\n  const char* x;\n  const char* w;\n  const char* bias;\n"
      "  float* partials;\n  unsigned* counters;\n"
      "  long long m, n, k, x_rs, w_ns, bias_s, k_per_split, splits, cols_per_block, tiles;\n"
      "  long long col[{R}];\n  char* ptr[{N}];\n  long long rs[{N}];\n  long long cs[{N}];\n"
      "  long long* err;\n  float alpha, beta;\n  const char* nw;\n  float eps, unused;\n"
      "  long long consts[{C}];\n}};\n",
      fmt::arg("R", ranges), fmt::arg("N", std::max(operands, 1)),
      fmt::arg("C", std::max<size_t>(p.constants.size(), 1)));
  SPLICE_ASSIGN_OR_RETURN(std::string compute, pointwise_compute_function(p));
  s += compute;

  // Per element: the ranges rounded as a stored product, the tensors read at (m, j).
  std::string range_code, loads, args, stores;
  const std::string to_t = convert_expression(DType::kFloat32, shape.dtype, "v");
  const std::string bias_f =
      convert_expression(shape.dtype, DType::kFloat32, fmt::format("((const {}*)p.bias)[n]", t));
  for (int k = 0, r = 0, operand = 0; k < static_cast<int>(p.inputs.size()); ++k) {
    if (shape.is_range[k]) {
      range_code += fmt::format(
          "    {t} a{k};\n    {{\n      float v = tile[m][{r} * cpb + c] * p.alpha;\n"
          "      const long long n = (p.col[{r}] + j) * p.bias_s;\n"
          "      if (p.bias) v += p.beta * {bias};\n      a{k} = {to_t};\n    }}\n",
          fmt::arg("t", t), fmt::arg("k", k), fmt::arg("r", r), fmt::arg("bias", bias_f),
          fmt::arg("to_t", to_t));
      ++r;
    } else {
      const char* it = pointwise_storage_type(p.inputs[k].dtype);
      loads += fmt::format(
          "    const {t} a{k} = *(const {t}*)(p.ptr[{o}] + (m * p.rs[{o}] + j * p.cs[{o}]) * "
          "(long long)sizeof({t}));\n",
          fmt::arg("t", it), fmt::arg("k", k), fmt::arg("o", operand));
      ++operand;
    }
    args += fmt::format(", a{}", k);
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const char* ot = pointwise_storage_type(p.outputs[k].dtype);
    const int o = tensors + static_cast<int>(k);
    loads += fmt::format("    {} r{};\n", ot, k);
    args += fmt::format(", r{}", k);
    stores += fmt::format(
        "    *({t}*)(p.ptr[{o}] + (m * p.rs[{o}] + j * p.cs[{o}]) * (long long)sizeof({t})) = "
        "r{k};\n",
        fmt::arg("t", ot), fmt::arg("o", o), fmt::arg("k", k));
  }
  std::string prologue;
  if (shape.norm) {
    auto round = [&](DType d) {
      return convert_expression(d, DType::kFloat32, convert_expression(DType::kFloat32, d, "v"));
    };
    prologue = fmt::format(
        kNormX, fmt::arg("T", t), fmt::arg("V", vec), fmt::arg("stat", round(shape.norm->stat)),
        fmt::arg("cast", round(shape.norm->cast)), fmt::arg("out", round(shape.dtype)),
        fmt::arg("to_t", convert_expression(DType::kFloat32, shape.dtype, "f[j]")));
  } else {
    prologue = fmt::format(kPlainX, fmt::arg("T", t), fmt::arg("V", vec));
  }
  s += fmt::format(kKernelTemplate, fmt::arg("T", t), fmt::arg("V", vec), fmt::arg("R", ranges),
                   fmt::arg("prologue", prologue),
                   fmt::arg("to_float", convert_expression(shape.dtype, DType::kFloat32, "e[i]")),
                   fmt::arg("ranges", range_code), fmt::arg("loads", loads), fmt::arg("args", args),
                   fmt::arg("stores", stores));
  for (int mt : kRowTiles)
    s += fmt::format(
        "extern \"C\" __global__ void __launch_bounds__(256) {}(const Params p) {{ "
        "sp_gemv_epilogue<{}>(p); }}\n",
        gemv_epilogue_kernel_name(mt), mt);
  return s;
}

}  // namespace splice::cuda
