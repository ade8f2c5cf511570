// Matmul, softmax, normalisation and attention on the CUDA backend: mm, bmm, addmm, matmul and
// linear through the session's cuBLASLt runner (matmul.h: fp32 without TF32, fp16/bf16 with
// fp32 accumulation, algorithm cached per shape, fixed workspace), softmax/log_softmax
// (softmax.h), layer/RMS/group norm (norm.h) and scaled dot-product attention (attention.h) in
// every form export records, the CUDA-export forms (_scaled_dot_product_{flash,efficient,
// cudnn}_attention) with their extra outputs, all with the CPU kernels' output shapes and
// dtypes (cpu/attention.cc) and all on the device, so a CUDA graph can record them.
#include <cmath>

#include "backends/cuda/attention.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/matmul.h"
#include "backends/cuda/matmul_exec.h"
#include "backends/cuda/norm.h"
#include "backends/cuda/softmax.h"
#include "tensor/indexing.h"

namespace splice::cuda::glue {

namespace {

Result<Shape> broadcast_batch(std::string_view op, const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    SPLICE_CHECK_OR_RETURN(x == y || x == 1 || y == 1, ErrorKind::kShapeMismatch,
                           "{}: batch shapes {} and {} do not broadcast", op, shape_string(a),
                           shape_string(b));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Result<Outputs> run_matmul(Ctx& ctx, MatmulArgs& m, const Tensor& out) {
  SPLICE_ASSIGN_OR_RETURN(m.out, dev(ctx.op(), out));
  SPLICE_ASSIGN_OR_RETURN(size_t bytes, MatmulRunner::scratch_bytes(m));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(bytes));
  SPLICE_TRY(ctx.session().matmul().run(m, scratch, ctx.stream()));
  return Outputs{out};
}

// mm(self, mat2), bmm(self, mat2), matmul(self, other).
template <MatmulKind kKind>
Result<Outputs> mm_like(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor x, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor y, a.tensor(1));
  Shape shape;
  if constexpr (kKind == MatmulKind::kMatmul) {
    SPLICE_CHECK_OR_RETURN(x.dim() >= 1 && y.dim() >= 1, ErrorKind::kShapeMismatch,
                           "{}: both arguments to matmul need to be at least 1D, got {}D and {}D",
                           op, x.dim(), y.dim());
    const Shape xb(x.sizes().begin(), x.sizes().end() - std::min<int64_t>(x.dim(), 2));
    const Shape yb(y.sizes().begin(), y.sizes().end() - std::min<int64_t>(y.dim(), 2));
    SPLICE_ASSIGN_OR_RETURN(shape, broadcast_batch(op, xb, yb));
    if (x.dim() >= 2) shape.push_back(x.size(x.dim() - 2));
    if (y.dim() >= 2) shape.push_back(y.size(y.dim() - 1));
  } else {
    const int64_t rank = kKind == MatmulKind::kMm ? 2 : 3;
    SPLICE_CHECK_OR_RETURN(x.dim() == rank && y.dim() == rank, ErrorKind::kShapeMismatch,
                           "{}: expects {}-D tensors, got shapes {} and {}", op, rank,
                           shape_string(x.sizes()), shape_string(y.sizes()));
    shape = x.sizes();
    shape.back() = y.size(rank - 1);
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(x.dtype(), shape));
  MatmulArgs m;
  m.kind = kKind;
  SPLICE_ASSIGN_OR_RETURN(m.a, dev(op, x));
  SPLICE_ASSIGN_OR_RETURN(m.b, dev(op, y));
  return run_matmul(ctx, m, out);
}

// addmm(self, mat1, mat2, *, beta=1, alpha=1).
Result<Outputs> addmm(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor x, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor y, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Scalar beta, a.scalar_or(3, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(4, Scalar(int64_t{1})));
  SPLICE_CHECK_OR_RETURN(x.dim() == 2 && y.dim() == 2, ErrorKind::kShapeMismatch,
                         "{}: mat1 and mat2 must be matrices, got shapes {} and {}", op,
                         shape_string(x.sizes()), shape_string(y.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(x.dtype(), {x.size(0), y.size(1)}));
  MatmulArgs m;
  m.kind = MatmulKind::kAddmm;
  SPLICE_ASSIGN_OR_RETURN(m.a, dev(op, x));
  SPLICE_ASSIGN_OR_RETURN(m.b, dev(op, y));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor c, dev(op, self));
  m.c = &c;
  m.beta = beta.to_double();
  m.alpha = alpha.to_double();
  return run_matmul(ctx, m, out);
}

// linear(input, weight, bias=None).
Result<Outputs> linear(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor weight, a.tensor(1));
  SPLICE_CHECK_OR_RETURN(input.dim() >= 1 && (weight.dim() == 1 || weight.dim() == 2),
                         ErrorKind::kShapeMismatch,
                         "{}: input {} and weight {} cannot be multiplied", op,
                         shape_string(input.sizes()), shape_string(weight.sizes()));
  Shape shape(input.sizes().begin(), input.sizes().end() - 1);
  if (weight.dim() == 2) shape.push_back(weight.size(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(input.dtype(), shape));
  MatmulArgs m;
  m.kind = MatmulKind::kLinear;
  SPLICE_ASSIGN_OR_RETURN(m.a, dev(op, input));
  SPLICE_ASSIGN_OR_RETURN(m.b, dev(op, weight));
  DeviceTensor bias;
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(Tensor b, a.tensor(2));
    SPLICE_ASSIGN_OR_RETURN(bias, dev(op, b));
    m.c = &bias;
  }
  return run_matmul(ctx, m, out);
}

// _softmax/_log_softmax(self, dim, half_to_float) (kInt false) and softmax.int/log_softmax.int
// (self, dim, dtype=None).
template <bool kLog, bool kInt>
Result<Outputs> softmax_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  DType dtype = self.dtype();
  if constexpr (kInt) {
    SPLICE_ASSIGN_OR_RETURN(auto d, a.opt_dtype(2));
    dtype = d.value_or(dtype);
  } else {
    SPLICE_ASSIGN_OR_RETURN(bool half_to_float, a.boolean_or(2, false));
    if (half_to_float && (dtype == DType::kFloat16 || dtype == DType::kBFloat16))
      dtype = DType::kFloat32;
  }
  SPLICE_CHECK_OR_RETURN(is_floating(dtype), ErrorKind::kBadInput,
                         "{}: softmax is not implemented for {} tensors", op, dtype_name(dtype));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(dtype, self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_TRY(softmax(s, dim, kLog, o, ctx.stream()));
  return Outputs{out};
}

Result<std::optional<DeviceTensor>> opt_dev(Ctx& ctx, const Args& a, size_t i) {
  if (a.is_none(i)) return std::optional<DeviceTensor>();
  SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(i));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(ctx.op(), t));
  return std::optional<DeviceTensor>(d);
}

const DeviceTensor* ptr(const std::optional<DeviceTensor>& d) { return d ? &*d : nullptr; }

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd) and
// layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True).
template <bool kStats>
Result<Outputs> layer_norm_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto norm_shape, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(auto weight, opt_dev(ctx, a, 2));
  SPLICE_ASSIGN_OR_RETURN(auto bias, opt_dev(ctx, a, 3));
  double eps = 1e-5;
  if (!a.is_none(4)) {
    SPLICE_ASSIGN_OR_RETURN(Scalar e, a.scalar(4));
    eps = e.to_double();
  }
  const int64_t axis = input.dim() - static_cast<int64_t>(norm_shape.size());
  SPLICE_CHECK_OR_RETURN(axis >= 0, ErrorKind::kShapeMismatch,
                         "{}: normalized_shape {} does not match the trailing dims of {}", op,
                         shape_string(norm_shape), shape_string(input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(input.dtype(), input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor in, dev(op, input));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  if constexpr (kStats) {
    Shape stat = input.sizes();
    for (int64_t d = axis; d < input.dim(); ++d) stat[d] = 1;
    SPLICE_ASSIGN_OR_RETURN(Tensor mean, ctx.fresh(input.dtype(), stat));
    SPLICE_ASSIGN_OR_RETURN(Tensor rstd, ctx.fresh(input.dtype(), stat));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor m, dev(op, mean));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor r, dev(op, rstd));
    SPLICE_TRY(layer_norm(in, norm_shape, ptr(weight), ptr(bias), eps, o, &m, &r, ctx.stream()));
    return Outputs{out, mean, rstd};
  } else {
    SPLICE_TRY(
        layer_norm(in, norm_shape, ptr(weight), ptr(bias), eps, o, nullptr, nullptr, ctx.stream()));
    return Outputs{out};
  }
}

// rms_norm(input, normalized_shape, weight=None, eps=None) and _fused_rms_norm(input,
// normalized_shape, weight, eps) -> (out, rstd).
template <bool kRstd>
Result<Outputs> rms_norm_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto norm_shape, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(auto weight, opt_dev(ctx, a, 2));
  std::optional<double> eps;
  if (!a.is_none(3)) {
    SPLICE_ASSIGN_OR_RETURN(Scalar e, a.scalar(3));
    eps = e.to_double();
  }
  const int64_t axis = input.dim() - static_cast<int64_t>(norm_shape.size());
  SPLICE_CHECK_OR_RETURN(axis >= 0, ErrorKind::kShapeMismatch,
                         "{}: normalized_shape {} does not match the trailing dims of {}", op,
                         shape_string(norm_shape), shape_string(input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(input.dtype(), input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor in, dev(op, input));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  if constexpr (kRstd) {
    Shape stat = input.sizes();
    for (int64_t d = axis; d < input.dim(); ++d) stat[d] = 1;
    const DType acc = input.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    SPLICE_ASSIGN_OR_RETURN(Tensor rstd, ctx.fresh(acc, stat));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor r, dev(op, rstd));
    SPLICE_TRY(rms_norm(in, norm_shape, ptr(weight), eps, o, &r, ctx.stream()));
    return Outputs{out, rstd};
  } else {
    SPLICE_TRY(rms_norm(in, norm_shape, ptr(weight), eps, o, nullptr, ctx.stream()));
    return Outputs{out};
  }
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (out, mean, rstd).
Result<Outputs> group_norm_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto weight, opt_dev(ctx, a, 1));
  SPLICE_ASSIGN_OR_RETURN(auto bias, opt_dev(ctx, a, 2));
  SPLICE_ASSIGN_OR_RETURN(int64_t n, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(int64_t c, a.integer(4));
  SPLICE_ASSIGN_OR_RETURN(int64_t hxw, a.integer(5));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer(6));
  SPLICE_ASSIGN_OR_RETURN(Scalar eps, a.scalar(7));
  SPLICE_CHECK_OR_RETURN(n >= 0 && groups > 0, ErrorKind::kShapeMismatch,
                         "{}: N={} and group={} must be positive", op, n, groups);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(input.dtype(), input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor mean, ctx.fresh(input.dtype(), {n, groups}));
  SPLICE_ASSIGN_OR_RETURN(Tensor rstd, ctx.fresh(input.dtype(), {n, groups}));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor in, dev(op, input));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor m, dev(op, mean));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor r, dev(op, rstd));
  SPLICE_TRY(group_norm(in, ptr(weight), ptr(bias), n, c, hxw, groups, eps.to_double(), o, &m, &r,
                        ctx.stream()));
  return Outputs{out, mean, rstd};
}

// Where an attention form reads its arguments: positions in its schema (src/ir/op_list.inc),
// -1 where the form has no such argument (no mask; no enable_gqa: the fused forms always group
// KV heads).
struct SdpaPositions {
  int mask, dropout, causal, scale, gqa;
};
// scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
// is_causal=False, *, scale=None, enable_gqa=False) -> output
constexpr SdpaPositions kSdpa{3, 4, 5, 6, 7};
// _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0,
// is_causal=False, *, attn_mask=None, scale=None) -> (output, logsumexp)
constexpr SdpaPositions kFlashForCpu{5, 3, 4, 6, -1};
// _scaled_dot_product_flash_attention(query, key, value, dropout_p=0.0, is_causal=False,
// return_debug_mask=False, *, scale=None) -> (output, logsumexp, cum_seq_q, cum_seq_k, max_q,
// max_k, rng_state, unused, debug_attn_mask)
constexpr SdpaPositions kFlash{-1, 3, 4, 6, -1};
// _scaled_dot_product_efficient_attention(query, key, value, attn_bias, compute_log_sumexp,
// dropout_p=0.0, is_causal=False, *, scale=None) -> (output, log_sumexp, philox_seed,
// philox_offset)
constexpr SdpaPositions kEfficient{3, 5, 6, 7, -1};
// _scaled_dot_product_cudnn_attention(query, key, value, attn_bias, compute_log_sumexp,
// dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None) -> (output,
// logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, philox_seed, philox_offset, debug_attn_mask)
constexpr SdpaPositions kCudnn{3, 5, 6, 8, -1};

// The float32 logsumexp a form returns, as the CPU kernels shape it (cpu/attention.cc).
enum class LseLayout {
  kNone,
  kRows,      // batch + [L]
  kPadded32,  // batch + [ceil(L / 32) * 32], +inf past L (the efficient form)
  kColumn,    // batch + [L, 1] (the cudnn form)
};

struct SdpaResult {
  Tensor out;  // batch + [L, Ev], q's dtype (output 0: the planned destination when it fits)
  Tensor lse;  // undefined for LseLayout::kNone
  Shape batch;
  int64_t L = 0, S = 0;
};

// The attention every form computes, its arguments read at `at`.
Result<SdpaResult> run_sdpa(Ctx& ctx, const Args& a, const SdpaPositions& at, LseLayout layout) {
  const std::string_view op = ctx.op();
  SPLICE_ASSIGN_OR_RETURN(Tensor q, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor k, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor v, a.tensor(2));
  AttentionArgs p;
  std::optional<DeviceTensor> mask;
  if (at.mask >= 0) {
    SPLICE_ASSIGN_OR_RETURN(mask, opt_dev(ctx, a, at.mask));
  }
  SPLICE_ASSIGN_OR_RETURN(Scalar dropout, a.scalar_or(at.dropout, Scalar(0.0)));
  p.dropout_p = dropout.to_double();
  SPLICE_ASSIGN_OR_RETURN(p.causal, a.boolean_or(at.causal, false));
  if (!a.is_none(at.scale)) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, a.scalar(at.scale));
    p.scale = s.to_double();
  }
  if (at.gqa >= 0) {
    SPLICE_ASSIGN_OR_RETURN(p.gqa, a.boolean_or(at.gqa, false));
  } else {
    p.gqa = true;
  }
  SPLICE_CHECK_OR_RETURN(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, ErrorKind::kShapeMismatch,
                         "{}: query, key and value need at least 2 dims", op);
  // Batch dims: q's broadcast with k's and v's, their head dim (-3) taken as q's (grouped
  // heads serve several q heads; the launcher checks that they divide).
  auto batch_of = [&](const Tensor& t) {
    Shape b(t.sizes().begin(), t.sizes().end() - 2);
    if (b.size() >= 1 && q.dim() >= 3 && b.back() != 1) b.back() = q.size(q.dim() - 3);
    return b;
  };
  SdpaResult r;
  SPLICE_ASSIGN_OR_RETURN(r.batch, broadcast_batch(op, batch_of(q), batch_of(k)));
  SPLICE_ASSIGN_OR_RETURN(r.batch, broadcast_batch(op, r.batch, batch_of(v)));
  r.L = q.size(q.dim() - 2);
  r.S = k.size(k.dim() - 2);
  Shape out_shape = r.batch;
  out_shape.insert(out_shape.end(), {r.L, v.size(v.dim() - 1)});
  SPLICE_ASSIGN_OR_RETURN(r.out, ctx.output(q.dtype(), out_shape));
  SPLICE_ASSIGN_OR_RETURN(p.q, dev(op, q));
  SPLICE_ASSIGN_OR_RETURN(p.k, dev(op, k));
  SPLICE_ASSIGN_OR_RETURN(p.v, dev(op, v));
  SPLICE_ASSIGN_OR_RETURN(p.out, dev(op, r.out));
  p.mask = ptr(mask);
  DeviceTensor lse_dev;
  if (layout != LseLayout::kNone) {
    // The kernels write batch + [W] rows (W >= L, +inf past L); the cudnn form's [L, 1] is
    // handed to them as its [L] view of the same memory.
    Shape rows = r.batch;
    rows.push_back(layout == LseLayout::kPadded32 ? (r.L + 31) / 32 * 32 : r.L);
    Shape lse_shape = rows;
    if (layout == LseLayout::kColumn) lse_shape.push_back(1);
    SPLICE_ASSIGN_OR_RETURN(r.lse, ctx.fresh(DType::kFloat32, lse_shape));
    SPLICE_ASSIGN_OR_RETURN(lse_dev,
                            dev(op, r.lse.view_as(rows, contiguous_strides(rows), r.lse.offset())));
    p.lse = &lse_dev;
  }
  SPLICE_ASSIGN_OR_RETURN(size_t bytes, attention_scratch_bytes(p));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(bytes));
  SPLICE_TRY(attention(p, scratch, ctx.stream()));
  return r;
}

// An extra output of the CUDA forms: a new device tensor with every element `value` (the CPU
// kernels' zeros, and max_q / max_k as 0-d int64 tensors). A fill kernel, not a copy from the
// host, so a CUDA graph can record it.
Result<Tensor> filled(Ctx& ctx, DType dtype, const Shape& sizes, int64_t value) {
  SPLICE_ASSIGN_OR_RETURN(Tensor t, ctx.fresh(dtype, sizes));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, dev(ctx.op(), t));
  SPLICE_TRY(fill(d, Scalar(value), ctx.launch()));
  return t;
}

Result<Outputs> sdpa(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(SdpaResult r, run_sdpa(ctx, a, kSdpa, LseLayout::kNone));
  return Outputs{r.out};
}

Result<Outputs> sdpa_flash_for_cpu(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(SdpaResult r, run_sdpa(ctx, a, kFlashForCpu, LseLayout::kRows));
  return Outputs{r.out, r.lse};
}

// The CUDA forms' extra outputs have the shapes and dtypes of the ops' meta functions and hold
// zeros (no dropout: no rng state), as the CPU kernels' do; max_q and max_k are L and S.
Result<Outputs> sdpa_flash(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(bool debug_mask, a.boolean_or(5, false));
  SPLICE_ASSIGN_OR_RETURN(SdpaResult r, run_sdpa(ctx, a, kFlash, LseLayout::kRows));
  SPLICE_ASSIGN_OR_RETURN(Tensor q, a.tensor(0));
  Shape debug_shape{0};
  if (debug_mask) {
    // The meta function's padded key length for the debug mask.
    const int64_t block = q.size(q.dim() - 1) > 64 ? 128 : 256;
    const int64_t width = r.S <= 128 ? 128 : r.S <= 256 ? 256 : (r.L + block - 1) / block;
    debug_shape = r.batch;
    debug_shape.insert(debug_shape.end(), {r.L, width});
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor cum_seq_q, filled(ctx, DType::kInt64, {0}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor cum_seq_k, filled(ctx, DType::kInt64, {0}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor max_q, filled(ctx, DType::kInt64, {}, r.L));
  SPLICE_ASSIGN_OR_RETURN(Tensor max_k, filled(ctx, DType::kInt64, {}, r.S));
  SPLICE_ASSIGN_OR_RETURN(Tensor rng_state, filled(ctx, DType::kInt64, {2}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor unused, filled(ctx, DType::kInt64, {}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor debug, filled(ctx, q.dtype(), debug_shape, 0));
  return Outputs{r.out, r.lse, cum_seq_q, cum_seq_k, max_q, max_k, rng_state, unused, debug};
}

Result<Outputs> sdpa_efficient(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(bool compute_lse, a.boolean_or(4, false));
  SPLICE_ASSIGN_OR_RETURN(
      SdpaResult r,
      run_sdpa(ctx, a, kEfficient, compute_lse ? LseLayout::kPadded32 : LseLayout::kNone));
  if (!compute_lse) {
    // log_sumexp is batch + [0] when not requested.
    Shape none = r.batch;
    none.push_back(0);
    SPLICE_ASSIGN_OR_RETURN(r.lse, ctx.fresh(DType::kFloat32, none));
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor seed, filled(ctx, DType::kInt64, {}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor offset, filled(ctx, DType::kInt64, {}, 0));
  return Outputs{r.out, r.lse, seed, offset};
}

// compute_log_sumexp is not read: the CPU kernel returns logsumexp (batch + [L, 1]) always.
Result<Outputs> sdpa_cudnn(Ctx& ctx, std::span<const KernelArg> args) {
  Args a(ctx.op(), args);
  SPLICE_ASSIGN_OR_RETURN(SdpaResult r, run_sdpa(ctx, a, kCudnn, LseLayout::kColumn));
  SPLICE_ASSIGN_OR_RETURN(Tensor q, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor cum_seq_q, filled(ctx, DType::kInt64, {0}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor cum_seq_k, filled(ctx, DType::kInt64, {0}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor max_q, filled(ctx, DType::kInt64, {}, r.L));
  SPLICE_ASSIGN_OR_RETURN(Tensor max_k, filled(ctx, DType::kInt64, {}, r.S));
  SPLICE_ASSIGN_OR_RETURN(Tensor seed, filled(ctx, DType::kInt64, {}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor offset, filled(ctx, DType::kInt64, {}, 0));
  SPLICE_ASSIGN_OR_RETURN(Tensor debug, filled(ctx, q.dtype(), {0}, 0));
  return Outputs{r.out, r.lse, cum_seq_q, cum_seq_k, max_q, max_k, seed, offset, debug};
}

}  // namespace

std::span<const KernelEntry> nn_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::mm, mm_like<MatmulKind::kMm>>().accepting(backend::kNonBoolDTypes),
      entry<OpId::bmm, mm_like<MatmulKind::kBmm>>().accepting(backend::kNonBoolDTypes),
      entry<OpId::matmul, mm_like<MatmulKind::kMatmul>>().accepting(backend::kNonBoolDTypes),
      entry<OpId::addmm, addmm>().accepting(backend::kNonBoolDTypes),
      entry<OpId::linear, linear>().accepting(backend::kNonBoolDTypes),
      entry<OpId::_softmax, softmax_kernel<false, false>>().accepting(DTypeSet::floating()),
      entry<OpId::_log_softmax, softmax_kernel<true, false>>().accepting(DTypeSet::floating()),
      entry<OpId::softmax_int, softmax_kernel<false, true>>(),
      entry<OpId::log_softmax_int, softmax_kernel<true, true>>(),
      entry<OpId::native_layer_norm, layer_norm_kernel<true>>().accepting(DTypeSet::floating()),
      entry<OpId::layer_norm, layer_norm_kernel<false>>().accepting(DTypeSet::floating()),
      entry<OpId::rms_norm, rms_norm_kernel<false>>().accepting(DTypeSet::floating()),
      entry<OpId::_fused_rms_norm, rms_norm_kernel<true>>().accepting(DTypeSet::floating()),
      entry<OpId::native_group_norm, group_norm_kernel>().accepting(DTypeSet::floating()),
  };
  return kEntries;
}

std::span<const KernelEntry> attention_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::scaled_dot_product_attention, sdpa>().accepting(DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_flash_attention_for_cpu, sdpa_flash_for_cpu>().accepting(
          DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_flash_attention, sdpa_flash>().accepting(
          DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_efficient_attention, sdpa_efficient>().accepting(
          DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_cudnn_attention, sdpa_cudnn>().accepting(
          DTypeSet::floating()),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
