// Scaled dot-product attention in every form export produces: scaled_dot_product_attention,
// _scaled_dot_product_flash_attention_for_cpu (what the CPU decomposition records), and the
// CUDA-exported flash / efficient / cudnn forms. All compute softmax(q·kᵀ·scale + mask)·v in
// float (double for float64), with BLAS for q·kᵀ and p·v over blocks of query rows, and round
// the output once to the query's dtype.
//
// Semantics (PyTorch's CPU flash kernel, which eager sdpa uses on CPU): q (..., L, E),
// k (..., S, E), v (..., S, Ev); the batch dims broadcast; scale defaults to 1/sqrt(E) and is
// applied to q·kᵀ before the mask is added; is_causal keeps j <= i (tril(ones(L, S)), aligned
// top-left); a bool mask keeps True, a float mask is added; masks broadcast to (..., L, S).
// Grouped KV heads: when k/v have fewer heads (dim -3) than q and divide them, each kv head
// serves Hq/Hkv consecutive q heads (repeat_interleave); the plain op does so only with
// enable_gqa, the fused forms always. A fully masked row gives output 0 and logsumexp 0, as the
// CPU flash kernel does (the old math path gave NaN). The extra outputs of the CUDA forms
// (cum_seq_*, philox/rng state, debug masks) have the shapes and dtypes of the ops' meta
// functions and hold zeros; uint64 rng state is returned as int64, which splice has no
// uint64 dtype for. dropout_p must be 0 (inference).
#include "backends/cpu/blas_setup.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

struct AttentionInputs {
  Tensor q, k, v;
  std::optional<Tensor> mask;
  double dropout_p = 0.0;
  bool causal = false;
  std::optional<double> scale;
  bool gqa = false;  // repeat_interleave k/v heads up to q's head count
};

struct AttentionResult {
  Tensor out;  // batch + [L, Ev], the query's dtype
  Tensor lse;  // batch + [L], float32
  Shape batch;
};

// Per output batch dim, t's stride there (0 where t lacks the dim or has size 1); t's batch
// dims are its leading rank-2 dims, aligned right.
Shape batch_strides(const Tensor& t, const Shape& batch) {
  const int64_t tb = t.dim() - 2, ob = static_cast<int64_t>(batch.size());
  Shape s(ob, 0);
  for (int64_t d = 0; d < tb; ++d) {
    if (t.size(d) != 1) s[ob - tb + d] = t.stride(d);
  }
  return s;
}

// Checks the head counts of a grouped k or v and returns the group size (q heads per kv head);
// `batch` gets the head dim widened to q's count so the batch dims can broadcast.
Result<int64_t> head_group(std::string_view op, const char* name, const Tensor& q, const Tensor& t,
                           bool gqa, Shape& batch) {
  if (!gqa || q.dim() < 3 || t.dim() < 3) return int64_t{1};
  const int64_t hq = q.size(q.dim() - 3), ht = t.size(t.dim() - 3);
  if (ht == hq || ht == 1) return int64_t{1};
  KCHECK(ht > 0 && hq % ht == 0, ErrorKind::kShapeMismatch,
         "{} has {} heads, which do not divide the query's {} heads", name, ht, hq);
  batch[batch.size() - 1] = hq;
  return hq / ht;
}

// c[m,n] = a[m,k] · b (b is [k,n], or [n,k] used transposed with tb); row-major, contiguous.
template <typename M>
void gemm(bool tb, int64_t m, int64_t n, int64_t k, const M* a, const M* b, M* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, M(0));
    return;
  }
  const auto b_trans = tb ? CblasTrans : CblasNoTrans;
  const int64_t ldb = tb ? k : n;
  if constexpr (std::is_same_v<M, float>) {
    blas().sgemm(CblasRowMajor, CblasNoTrans, b_trans, m, n, k, 1.0f, a, k, b, ldb, 0.0f, c, n);
  } else {
    blas().dgemm(CblasRowMajor, CblasNoTrans, b_trans, m, n, k, 1.0, a, k, b, ldb, 0.0, c, n);
  }
}

template <typename M>
void attention_loop(const AttentionInputs& p, const Tensor& q, const Tensor& k, const Tensor& v,
                    const std::optional<Tensor>& mask, const Shape& batch, int64_t k_group,
                    int64_t v_group, M scale, const Tensor& out, const Tensor& lse) {
  const int64_t L = q.size(q.dim() - 2), E = q.size(q.dim() - 1);
  const int64_t S = k.size(k.dim() - 2), Ev = v.size(v.dim() - 1);
  const Shape qs = batch_strides(q, batch), ks = batch_strides(k, batch),
              vs = batch_strides(v, batch);
  Shape full = batch;
  full.insert(full.end(), {L, S});
  const Shape ms = mask ? broadcast_strides(*mask, full) : Shape(full.size(), 0);
  const int64_t nb = static_cast<int64_t>(batch.size());
  const M* pq = q.data<M>();
  const M* pk = k.data<M>();
  const M* pv = v.data<M>();
  const bool mask_bool = mask && mask->dtype() == DType::kBool;
  const bool* pmb = mask_bool ? mask->data<bool>() : nullptr;
  const M* pmf = mask && !mask_bool ? mask->data<M>() : nullptr;
  M* po = out.data<M>();
  float* pl = lse.data<float>();
  const M neg_inf = -std::numeric_limits<M>::infinity();
  // Query rows per block: about 4 MiB of scores at most, at least one row.
  const int64_t block = std::clamp<int64_t>((int64_t{1} << 20) / std::max<int64_t>(S, 1), 1, 256);
  std::vector<M> scores(std::min(block, L) * S), inv_sum(block);
  Shape coord(nb, 0);
  const int64_t batch_numel = shape_numel(batch);
  for (int64_t b = 0; b < batch_numel; ++b) {
    int64_t qo = 0, ko = 0, vo = 0, mo = 0;
    for (int64_t d = 0; d < nb; ++d) {
      // Only the head dim (the last batch dim) can be grouped.
      const int64_t kc = d == nb - 1 ? coord[d] / k_group : coord[d];
      const int64_t vc = d == nb - 1 ? coord[d] / v_group : coord[d];
      qo += coord[d] * qs[d];
      ko += kc * ks[d];
      vo += vc * vs[d];
      mo += coord[d] * ms[d];
    }
    // Blocks of query rows: scores = Q·Kᵀ (q, k, v blocks are contiguous), softmax in
    // place, out = P·V, so memory stays rows x S rather than L x S.
    for (int64_t i0 = 0; i0 < L; i0 += block) {
      const int64_t rows = std::min(block, L - i0);
      gemm<M>(true, rows, S, E, pq + qo + i0 * E, pk + ko, scores.data());
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r;
        M* row = scores.data() + r * S;
        M max = neg_inf;
        for (int64_t j = 0; j < S; ++j) {
          const int64_t moff = mo + i * ms[nb] + j * ms[nb + 1];
          M s = neg_inf;
          if (!(p.causal && j > i) && !(pmb && !pmb[moff])) {
            s = row[j] * scale;
            if (pmf) s += pmf[moff];
          }
          row[j] = s;
          if (s > max) max = s;
        }
        // Masked keys get weight exp(-inf) = 0 but still meet v in the GEMM, so a NaN or inf
        // in v propagates as it does in PyTorch.
        M sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          row[j] = max == neg_inf ? M(0) : std::exp(row[j] - max);
          sum += row[j];
        }
        // A fully masked row: max -inf → 0 and sum 0 → 1, so output 0 and logsumexp 0.
        if (max == neg_inf) max = 0;
        if (sum == M(0)) sum = 1;
        inv_sum[r] = M(1) / sum;
        pl[b * L + i] = static_cast<float>(max + std::log(sum));
      }
      M* ob = po + (b * L + i0) * Ev;
      gemm<M>(false, rows, Ev, S, scores.data(), pv + vo, ob);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t e = 0; e < Ev; ++e) ob[r * Ev + e] *= inv_sum[r];
    }
    for (int64_t d = nb - 1; d >= 0; --d) {
      if (++coord[d] < batch[d]) break;
      coord[d] = 0;
    }
  }
}

Result<AttentionResult> attention(std::string_view op, const AttentionInputs& p) {
  const Tensor &q = p.q, &k = p.k, &v = p.v;
  KCHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, ErrorKind::kShapeMismatch,
         "query, key and value must be at least 2-D, got shapes {}, {} and {}",
         shape_string(q.sizes()), shape_string(k.sizes()), shape_string(v.sizes()));
  KCHECK(is_floating(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype(),
         ErrorKind::kShapeMismatch,
         "query, key and value must have the same floating dtype, got {}, {} and {}",
         dtype_name(q.dtype()), dtype_name(k.dtype()), dtype_name(v.dtype()));
  KCHECK(p.dropout_p == 0.0, ErrorKind::kBadInput,
         "dropout_p = {} is not supported (inference only: export the model in eval mode)",
         p.dropout_p);
  const int64_t L = q.size(q.dim() - 2), E = q.size(q.dim() - 1);
  const int64_t S = k.size(k.dim() - 2), Ev = v.size(v.dim() - 1);
  KCHECK(k.size(k.dim() - 1) == E && v.size(v.dim() - 2) == S, ErrorKind::kShapeMismatch,
         "key {} and value {} do not fit query {} (key needs last dim {}, value {} rows)",
         shape_string(k.sizes()), shape_string(v.sizes()), shape_string(q.sizes()), E,
         k.size(k.dim() - 2));
  constexpr int64_t kBlasMax = 2147483647;  // OpenBLAS's blasint is 32-bit here
  KCHECK(L <= kBlasMax && S <= kBlasMax && E <= kBlasMax && Ev <= kBlasMax,
         ErrorKind::kShapeMismatch, "attention dims L={} S={} E={} Ev={} exceed the BLAS limit", L,
         S, E, Ev);
  Shape qb(q.sizes().begin(), q.sizes().end() - 2), kb(k.sizes().begin(), k.sizes().end() - 2),
      vb(v.sizes().begin(), v.sizes().end() - 2);
  SPLICE_ASSIGN_OR_RETURN(int64_t k_group, head_group(op, "key", q, k, p.gqa, kb));
  SPLICE_ASSIGN_OR_RETURN(int64_t v_group, head_group(op, "value", q, v, p.gqa, vb));
  SPLICE_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(op, qb, kb));
  SPLICE_ASSIGN_OR_RETURN(batch, broadcast_shapes(op, batch, vb));
  Shape full = batch;
  full.insert(full.end(), {L, S});
  if (p.mask) {
    SPLICE_ASSIGN_OR_RETURN(Shape mb, broadcast_shapes(op, p.mask->sizes(), full));
    KCHECK(mb == full, ErrorKind::kShapeMismatch,
           "attn_mask of shape {} does not broadcast to the scores' shape {}",
           shape_string(p.mask->sizes()), shape_string(full));
  }
  Shape out_shape = batch, lse_shape = batch;
  out_shape.insert(out_shape.end(), {L, Ev});
  lse_shape.push_back(L);
  const DType acc = q.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, acc, out_shape));
  SPLICE_ASSIGN_OR_RETURN(Tensor lse, new_tensor(op, DType::kFloat32, lse_shape));
  std::optional<Tensor> mask;
  if (p.mask) {
    mask = p.mask->dtype() == DType::kBool ? contiguous_copy(*p.mask) : cast_copy(*p.mask, acc);
  }
  const double scale = p.scale.value_or(1.0 / std::sqrt(static_cast<double>(E)));
  const Tensor qc = cast_copy(q, acc), kc = cast_copy(k, acc), vc = cast_copy(v, acc);
  if (acc == DType::kFloat64) {
    attention_loop<double>(p, qc, kc, vc, mask, batch, k_group, v_group, scale, out, lse);
  } else {
    attention_loop<float>(p, qc, kc, vc, mask, batch, k_group, v_group, static_cast<float>(scale),
                          out, lse);
  }
  return AttentionResult{to_dtype(out, q.dtype()), lse, batch};
}

Result<std::optional<Tensor>> opt_tensor(const Args& a, size_t i) {
  if (a.is_none(i)) return std::optional<Tensor>();
  SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(i));
  return std::optional<Tensor>(t);
}

Result<std::optional<double>> opt_double(const Args& a, size_t i) {
  if (a.is_none(i)) return std::optional<double>();
  SPLICE_ASSIGN_OR_RETURN(Scalar s, a.scalar(i));
  return std::optional<double>(s.to_double());
}

Result<AttentionInputs> read_qkv(const Args& a) {
  AttentionInputs p;
  SPLICE_ASSIGN_OR_RETURN(p.q, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(p.k, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(p.v, a.tensor(2));
  return p;
}

Tensor int64_scalar(int64_t v) {
  Tensor t = empty(DType::kInt64, {});
  *t.data<int64_t>() = v;
  return t;
}

Result<Outputs> sdpa(std::string_view op, std::span<const KernelArg> args) {
  // (query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
  //  enable_gqa=False)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(AttentionInputs p, read_qkv(a));
  SPLICE_ASSIGN_OR_RETURN(p.mask, opt_tensor(a, 3));
  SPLICE_ASSIGN_OR_RETURN(Scalar dropout, a.scalar_or(4, Scalar(0.0)));
  p.dropout_p = dropout.to_double();
  SPLICE_ASSIGN_OR_RETURN(p.causal, a.boolean_or(5, false));
  SPLICE_ASSIGN_OR_RETURN(p.scale, opt_double(a, 6));
  SPLICE_ASSIGN_OR_RETURN(p.gqa, a.boolean_or(7, false));
  SPLICE_ASSIGN_OR_RETURN(AttentionResult r, attention(op, p));
  return Outputs{r.out};
}

Result<Outputs> flash_cpu(std::string_view op, std::span<const KernelArg> args) {
  // (query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None)
  //   -> (output, logsumexp)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(AttentionInputs p, read_qkv(a));
  SPLICE_ASSIGN_OR_RETURN(Scalar dropout, a.scalar_or(3, Scalar(0.0)));
  p.dropout_p = dropout.to_double();
  SPLICE_ASSIGN_OR_RETURN(p.causal, a.boolean_or(4, false));
  SPLICE_ASSIGN_OR_RETURN(p.mask, opt_tensor(a, 5));
  SPLICE_ASSIGN_OR_RETURN(p.scale, opt_double(a, 6));
  p.gqa = true;
  SPLICE_ASSIGN_OR_RETURN(AttentionResult r, attention(op, p));
  return Outputs{r.out, r.lse};
}

Result<Outputs> flash_cuda(std::string_view op, std::span<const KernelArg> args) {
  // (query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None)
  //   -> (output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, rng_state, unused,
  //       debug_attn_mask)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(AttentionInputs p, read_qkv(a));
  SPLICE_ASSIGN_OR_RETURN(Scalar dropout, a.scalar_or(3, Scalar(0.0)));
  p.dropout_p = dropout.to_double();
  SPLICE_ASSIGN_OR_RETURN(p.causal, a.boolean_or(4, false));
  SPLICE_ASSIGN_OR_RETURN(bool debug_mask, a.boolean_or(5, false));
  SPLICE_ASSIGN_OR_RETURN(p.scale, opt_double(a, 6));
  p.gqa = true;
  SPLICE_ASSIGN_OR_RETURN(AttentionResult r, attention(op, p));
  const int64_t L = p.q.size(p.q.dim() - 2), S = p.k.size(p.k.dim() - 2);
  Shape debug_shape{0};
  if (debug_mask) {
    // The meta function's padded key length for the debug mask.
    const int64_t block = p.q.size(p.q.dim() - 1) > 64 ? 128 : 256;
    const int64_t width = S <= 128 ? 128 : S <= 256 ? 256 : (L + block - 1) / block;
    debug_shape = r.batch;
    debug_shape.insert(debug_shape.end(), {L, width});
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor debug, new_tensor(op, p.q.dtype(), debug_shape));
  return Outputs{r.out,
                 r.lse,
                 empty(DType::kInt64, {0}),
                 empty(DType::kInt64, {0}),
                 int64_scalar(L),
                 int64_scalar(S),
                 empty(DType::kInt64, {2}),
                 empty(DType::kInt64, {}),
                 debug};
}

Result<Outputs> efficient(std::string_view op, std::span<const KernelArg> args) {
  // (query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *,
  //  scale=None) -> (output, log_sumexp, philox_seed, philox_offset)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(AttentionInputs p, read_qkv(a));
  SPLICE_ASSIGN_OR_RETURN(p.mask, opt_tensor(a, 3));
  SPLICE_ASSIGN_OR_RETURN(bool compute_lse, a.boolean_or(4, false));
  SPLICE_ASSIGN_OR_RETURN(Scalar dropout, a.scalar_or(5, Scalar(0.0)));
  p.dropout_p = dropout.to_double();
  SPLICE_ASSIGN_OR_RETURN(p.causal, a.boolean_or(6, false));
  SPLICE_ASSIGN_OR_RETURN(p.scale, opt_double(a, 7));
  p.gqa = true;
  SPLICE_ASSIGN_OR_RETURN(AttentionResult r, attention(op, p));
  // log_sumexp is (..., ceil(L / 32) * 32) when requested, else (..., 0); the padding rows
  // hold +inf as the CUDA kernel writes them.
  const int64_t L = p.q.size(p.q.dim() - 2);
  const int64_t width = compute_lse ? (L + 31) / 32 * 32 : 0;
  Shape lse_shape = r.batch;
  lse_shape.push_back(width);
  SPLICE_ASSIGN_OR_RETURN(Tensor lse, new_tensor(op, DType::kFloat32, lse_shape));
  float* pl = lse.data<float>();
  const float* src = r.lse.data<float>();
  for (int64_t b = 0, nb = shape_numel(r.batch); width > 0 && b < nb; ++b) {
    for (int64_t i = 0; i < width; ++i)
      pl[b * width + i] = i < L ? src[b * L + i] : std::numeric_limits<float>::infinity();
  }
  return Outputs{r.out, lse, int64_scalar(0), int64_scalar(0)};
}

Result<Outputs> cudnn(std::string_view op, std::span<const KernelArg> args) {
  // (query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False,
  //  return_debug_mask=False, *, scale=None) -> (output, logsumexp, cum_seq_q, cum_seq_k,
  //  max_q, max_k, philox_seed, philox_offset, debug_attn_mask)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(AttentionInputs p, read_qkv(a));
  SPLICE_ASSIGN_OR_RETURN(p.mask, opt_tensor(a, 3));
  SPLICE_ASSIGN_OR_RETURN(Scalar dropout, a.scalar_or(5, Scalar(0.0)));
  p.dropout_p = dropout.to_double();
  SPLICE_ASSIGN_OR_RETURN(p.causal, a.boolean_or(6, false));
  SPLICE_ASSIGN_OR_RETURN(p.scale, opt_double(a, 8));
  p.gqa = true;
  SPLICE_ASSIGN_OR_RETURN(AttentionResult r, attention(op, p));
  const int64_t L = p.q.size(p.q.dim() - 2), S = p.k.size(p.k.dim() - 2);
  // logsumexp is (..., L, 1) in the meta function.
  Shape lse_shape = r.lse.sizes();
  lse_shape.push_back(1);
  const Tensor lse = r.lse.view_as(lse_shape, contiguous_strides(lse_shape), r.lse.offset());
  return Outputs{r.out,
                 lse,
                 empty(DType::kInt64, {0}),
                 empty(DType::kInt64, {0}),
                 int64_scalar(L),
                 int64_scalar(S),
                 int64_scalar(0),
                 int64_scalar(0),
                 empty(p.q.dtype(), {0})};
}

}  // namespace

std::span<const KernelEntry> attention_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::scaled_dot_product_attention, sdpa>().accepting(DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_flash_attention_for_cpu, flash_cpu>().accepting(
          DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_flash_attention, flash_cuda>().accepting(
          DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_efficient_attention, efficient>().accepting(
          DTypeSet::floating()),
      entry<OpId::_scaled_dot_product_cudnn_attention, cudnn>().accepting(DTypeSet::floating()),
  };
  return kEntries;
}

}  // namespace splice::cpu
