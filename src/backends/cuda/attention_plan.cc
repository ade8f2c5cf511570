// Attention launch planning (see attention_plan.h). Mirrors the CPU kernel's checks and
// broadcasting (cpu/attention.cc), then lays the problem out as units (one K/V
// matrix each) of G * L query rows for the kernels.
#include "backends/cuda/attention_plan.h"

#include <algorithm>
#include <cmath>

#include "tensor/tensor.h"

namespace splice::cuda {

namespace {

Shape shape_of(const DeviceTensor& t) {
  return Shape(t.sizes.begin(), t.sizes.begin() + std::clamp(t.rank, 0, kMaxDims));
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Strides of t's leading `t_batch` dims over the output batch (right-aligned; 0 where t lacks
// the dim or has size 1). The last (head) dim may differ when `grouped`: its stride is kept.
Result<std::vector<int64_t>> batch_strides_of(std::string_view op, const char* name,
                                              const DeviceTensor& t, int t_batch,
                                              const Shape& batch, bool grouped) {
  std::vector<int64_t> out(batch.size(), 0);
  const int lead = static_cast<int>(batch.size()) - t_batch;
  for (int i = 0; i < t_batch; ++i) {
    const int64_t size = t.sizes[i];
    const int bd = lead + i;
    const bool head = bd == static_cast<int>(batch.size()) - 1;
    if (size == batch[bd]) {
      out[bd] = size == 1 ? 0 : t.strides[i];
    } else if (size == 1) {
      out[bd] = 0;
    } else if (head && grouped) {
      out[bd] = t.strides[i];
    } else {
      return make_error(ErrorKind::kShapeMismatch,
                        "{}: {} of shape {} does not broadcast to the batch shape {}", op, name,
                        shape_string(shape_of(t)), shape_string(batch));
    }
  }
  return out;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace

const char* attn_kernel_name(AttnKernel k) {
  switch (k) {
    case AttnKernel::kMma:
      return "mma";
    case AttnKernel::kDecode:
      return "decode";
    case AttnKernel::kSimt:
      break;
  }
  return "simt";
}

Result<AttnPlan> plan_attention(const AttentionArgs& args, int sm_count,
                                const KernelScratch& scratch) {
  constexpr std::string_view op = "scaled_dot_product_attention";
  const DeviceTensor &q = args.q, &k = args.k, &v = args.v;
  for (const DeviceTensor* t : {&q, &k, &v, &args.out, args.mask, args.lse}) {
    if (!t) continue;
    SPLICE_CHECK_OR_RETURN(t->rank >= 0 && t->rank <= kMaxDims, ErrorKind::kShapeMismatch,
                           "{}: operand of rank {} exceeds {}", op, t->rank, kMaxDims);
  }
  SPLICE_CHECK_OR_RETURN(q.rank >= 2 && k.rank >= 2 && v.rank >= 2, ErrorKind::kShapeMismatch,
                         "{}: query, key and value must be at least 2-D, got shapes {}, {} and {}",
                         op, shape_string(shape_of(q)), shape_string(shape_of(k)),
                         shape_string(shape_of(v)));
  SPLICE_CHECK_OR_RETURN(is_floating(q.dtype) && k.dtype == q.dtype && v.dtype == q.dtype,
                         ErrorKind::kShapeMismatch,
                         "{}: query, key and value must have the same floating dtype, got {}, {} "
                         "and {}",
                         op, dtype_name(q.dtype), dtype_name(k.dtype), dtype_name(v.dtype));
  SPLICE_CHECK_OR_RETURN(args.dropout_p == 0.0, ErrorKind::kBadInput,
                         "{}: dropout_p = {} is not supported (inference only: export the model "
                         "in eval mode)",
                         op, args.dropout_p);
  const int64_t L = q.sizes[q.rank - 2], E = q.sizes[q.rank - 1];
  const int64_t S = k.sizes[k.rank - 2], Ev = v.sizes[v.rank - 1];
  SPLICE_CHECK_OR_RETURN(
      k.sizes[k.rank - 1] == E && v.sizes[v.rank - 2] == S, ErrorKind::kShapeMismatch,
      "{}: key {} and value {} do not fit query {} (key needs last dim {}, "
      "value {} rows)",
      op, shape_string(shape_of(k)), shape_string(shape_of(v)), shape_string(shape_of(q)), E, S);
  SPLICE_CHECK_OR_RETURN(E <= kMaxHeadDim && Ev <= kMaxHeadDim, ErrorKind::kUnsupportedOp,
                         "{}: head dims E={} and Ev={} exceed the CUDA kernel's limit of {}", op, E,
                         Ev, kMaxHeadDim);
  // Batch dims, with grouped KV heads widened to q's head count for broadcasting.
  Shape qb(q.sizes.begin(), q.sizes.begin() + q.rank - 2);
  Shape kb(k.sizes.begin(), k.sizes.begin() + k.rank - 2);
  Shape vb(v.sizes.begin(), v.sizes.begin() + v.rank - 2);
  const auto group_of = [&](const char* name, const DeviceTensor& t, Shape& tb) -> Result<int64_t> {
    if (!args.gqa || q.rank < 3 || t.rank < 3) return int64_t{1};
    const int64_t hq = q.sizes[q.rank - 3], ht = t.sizes[t.rank - 3];
    if (ht == hq || ht == 1) return int64_t{1};
    SPLICE_CHECK_OR_RETURN(ht > 0 && hq % ht == 0, ErrorKind::kShapeMismatch,
                           "{}: {} has {} heads, which do not divide the query's {} heads", op,
                           name, ht, hq);
    tb.back() = hq;
    return hq / ht;
  };
  SPLICE_ASSIGN_OR_RETURN(const int64_t k_group, group_of("key", k, kb));
  SPLICE_ASSIGN_OR_RETURN(const int64_t v_group, group_of("value", v, vb));
  auto batch_opt = broadcast(qb, kb);
  if (batch_opt) batch_opt = broadcast(*batch_opt, vb);
  SPLICE_CHECK_OR_RETURN(batch_opt.has_value(), ErrorKind::kShapeMismatch,
                         "{}: the batch dims of query {}, key {} and value {} do not broadcast", op,
                         shape_string(shape_of(q)), shape_string(shape_of(k)),
                         shape_string(shape_of(v)));
  const Shape batch = *batch_opt;
  const int nb = static_cast<int>(batch.size());
  SPLICE_CHECK_OR_RETURN(nb <= kAttnMaxBatchDims, ErrorKind::kShapeMismatch,
                         "{}: {} batch dims exceed {}", op, nb, kAttnMaxBatchDims);
  Shape out_shape = batch;
  out_shape.insert(out_shape.end(), {L, Ev});
  SPLICE_CHECK_OR_RETURN(shape_of(args.out) == out_shape && args.out.dtype == q.dtype,
                         ErrorKind::kShapeMismatch, "{}: the output is {} {}, expected {} {}", op,
                         dtype_name(args.out.dtype), shape_string(shape_of(args.out)),
                         dtype_name(q.dtype), shape_string(out_shape));
  Shape full = batch;
  full.insert(full.end(), {L, S});
  // Mask strides over batch + (L, S).
  std::vector<int64_t> mask_strides(full.size(), 0);
  if (args.mask) {
    const DeviceTensor& m = *args.mask;
    SPLICE_CHECK_OR_RETURN(m.dtype == DType::kBool || is_floating(m.dtype), ErrorKind::kBadInput,
                           "{}: attn_mask must be bool or floating point, got {}", op,
                           dtype_name(m.dtype));
    bool fits = m.rank <= static_cast<int>(full.size());
    for (int i = 0; fits && i < m.rank; ++i) {
      const int fd = static_cast<int>(full.size()) - m.rank + i;
      if (m.sizes[i] == full[fd])
        mask_strides[fd] = m.sizes[i] == 1 ? 0 : m.strides[i];
      else
        fits = m.sizes[i] == 1;
    }
    SPLICE_CHECK_OR_RETURN(fits, ErrorKind::kShapeMismatch,
                           "{}: attn_mask of shape {} does not broadcast to the scores' shape {}",
                           op, shape_string(shape_of(m)), shape_string(full));
  }
  int64_t lse_width = 0;
  if (args.lse) {
    const DeviceTensor& l = *args.lse;
    Shape lse_batch(l.sizes.begin(), l.sizes.begin() + std::max(l.rank - 1, 0));
    lse_width = l.rank >= 1 ? l.sizes[l.rank - 1] : 0;
    SPLICE_CHECK_OR_RETURN(
        l.dtype == DType::kFloat32 && l.rank == nb + 1 && lse_batch == batch && lse_width >= L,
        ErrorKind::kShapeMismatch, "{}: logsumexp output is {} {}, expected f32 {} + [W >= {}]", op,
        dtype_name(l.dtype), shape_string(shape_of(l)), shape_string(batch), L);
  }
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> qs,
                          batch_strides_of(op, "query", q, q.rank - 2, batch, false));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> ks,
                          batch_strides_of(op, "key", k, k.rank - 2, batch, k_group > 1));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> vs,
                          batch_strides_of(op, "value", v, v.rank - 2, batch, v_group > 1));

  AttnPlan plan;
  AttnParams& p = plan.params;
  p.q = q.data;
  p.k = k.data;
  p.v = v.data;
  p.mask = args.mask ? args.mask->data : nullptr;
  p.mask_dtype = args.mask ? args.mask->dtype : DType::kBool;
  p.out = args.out.data;
  p.lse = args.lse ? static_cast<float*>(args.lse->data) : nullptr;
  p.dtype = q.dtype;
  p.causal = args.causal;
  p.scale = args.scale.value_or(1.0 / std::sqrt(static_cast<double>(E)));
  p.L = L;
  p.S = S;
  p.E = E;
  p.Ev = Ev;
  p.lse_width = lse_width;
  // One unit per K/V matrix: the G q heads of a KV head share it.
  p.G = k_group == v_group && k_group > 1 && nb >= 1 ? k_group : 1;
  p.R = p.G * L;
  p.nb = nb;
  const std::vector<int64_t> os(args.out.strides.begin(), args.out.strides.begin() + nb);
  std::vector<int64_t> ls(nb, 0);
  if (args.lse) ls.assign(args.lse->strides.begin(), args.lse->strides.begin() + nb);
  const std::vector<int64_t>* per_tensor[kAttnTensors] = {&qs, &ks, &vs, &mask_strides, &os, &ls};
  for (int d = 0; d < nb; ++d) {
    p.batch_sizes[d] = d == nb - 1 ? batch[d] / p.G : batch[d];
    for (int t = 0; t < kAttnTensors; ++t) p.batch_strides[t][d] = (*per_tensor[t])[d];
  }
  p.head_div[kAttnK] = p.G > 1 ? p.G : k_group;
  p.head_div[kAttnV] = p.G > 1 ? p.G : v_group;
  p.units = 1;
  for (int d = 0; d < nb; ++d) p.units *= p.batch_sizes[d];
  if (p.G > 1) {
    p.q_hs = qs[nb - 1];
    p.m_hs = mask_strides[nb - 1];
    p.o_hs = os[nb - 1];
    p.lse_hs = ls[nb - 1];
  }
  p.q_ls = q.strides[q.rank - 2];
  p.q_es = q.strides[q.rank - 1];
  p.k_ss = k.strides[k.rank - 2];
  p.k_es = k.strides[k.rank - 1];
  p.v_ss = v.strides[v.rank - 2];
  p.v_es = v.strides[v.rank - 1];
  p.m_ls = mask_strides[nb];
  p.m_ss = mask_strides[nb + 1];
  p.o_ls = args.out.strides[nb];
  p.o_es = args.out.strides[nb + 1];
  if (args.lse) p.lse_ls = args.lse->strides[nb];
  plan.lse_pad = args.lse && lse_width > L && p.units > 0;
  plan.empty = p.units == 0 || L == 0 || Ev == 0;
  if (plan.empty) return plan;

  // Kernel choice. Decode shapes (few query rows per K/V matrix) are bound by reading K and V:
  // the decode kernel reads them once per unit by 16-byte loads. Else tensor cores for 16-bit
  // inputs with a supported head dim, unit stride along it, 16-byte aligned rows and enough
  // query rows to fill a warp's 16. Else the CUDA-core kernel.
  const int64_t es = dtype_size(p.dtype);
  const auto aligned16 = [&](const void* ptr, std::initializer_list<int64_t> strides) {
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0) return false;
    for (int64_t s : strides)
      if ((s * es) % 16 != 0) return false;
    return true;
  };
  const auto batch_aligned16 = [&](std::initializer_list<int> tensors) {
    for (int d = 0; d < nb; ++d)
      for (int t : tensors)
        if ((p.batch_strides[t][d] * es) % 16 != 0) return false;
    return true;
  };
  const int64_t vec = 16 / es;
  const AttnDecodeSmem decode_smem = attn_decode_smem(p.R, E, Ev, es, 64);
  const char* not_decode = nullptr;
  if (p.dtype == DType::kFloat64)
    not_decode = "float64";
  else if (L > kDecodeMaxQueries || p.R > kDecodeMaxRows)
    not_decode = "more query rows per KV head than decode has";
  else if (E > kDecodeMaxHeadDim || Ev > kDecodeMaxHeadDim || E % vec != 0 || Ev % vec != 0 ||
           p.R * (Ev / vec) > kAttnDecodeThreads)
    not_decode = "head dims not a multiple of 16 bytes or over 256";
  else if (p.k_es != 1 || p.v_es != 1 || !aligned16(p.k, {p.k_ss}) || !aligned16(p.v, {p.v_ss}) ||
           !batch_aligned16({kAttnK, kAttnV}))
    not_decode = "K/V rows not 16-byte aligned with unit stride";
  else if (decode_smem.total > (160 << 10))
    not_decode = "too much shared memory";
  bool mma = (p.dtype == DType::kFloat16 || p.dtype == DType::kBFloat16) && E == Ev &&
             (E == 32 || E == 64 || E == 80 || E == 96 || E == 128) && p.q_es == 1 && p.k_es == 1 &&
             p.v_es == 1 && p.R >= 16;
  if (mma) {
    std::initializer_list<int64_t> q_strides = {p.q_ls, p.q_hs};
    std::initializer_list<int64_t> k_strides = {p.k_ss};
    std::initializer_list<int64_t> v_strides = {p.v_ss};
    mma = aligned16(p.q, q_strides) && aligned16(p.k, k_strides) && aligned16(p.v, v_strides) &&
          batch_aligned16({kAttnQ, kAttnK, kAttnV});
  }
  if (not_decode == nullptr) {
    plan.kernel = AttnKernel::kDecode;
    plan.reason = "decode: few query rows per KV head; K/V read once by 16-byte loads";
    plan.head_dim_bound = static_cast<int>(std::max(E, Ev));
    // Keys per tile: K + V of a tile at most kAttnDecodeLoads 16-byte loads per thread.
    plan.key_tile = std::clamp<int64_t>(
        (int64_t{kAttnDecodeLoads} * kAttnDecodeThreads * 16) / ((E + Ev) * es) / 8 * 8, 8, 64);
    plan.threads = kAttnDecodeThreads;
    p.rows_per_block = p.R;
    plan.smem_bytes = static_cast<size_t>(attn_decode_smem(p.R, E, Ev, es, plan.key_tile).total);
  } else if (mma) {
    plan.kernel = AttnKernel::kMma;
    plan.reason = "tensor cores: 16-bit, head dim 32..128, >= 16 rows per KV head";
    plan.head_dim_bound = static_cast<int>(E);
    plan.key_tile = kMmaKeys;
    plan.threads = 128;
    p.rows_per_block = kMmaRows;
    plan.smem_bytes = static_cast<size_t>(3 * kMmaRows * (E + 8) * es);
  } else {
    plan.kernel = AttnKernel::kSimt;
    plan.reason = not_decode;
    const int64_t e_max = std::max(E, Ev);
    plan.head_dim_bound = e_max <= 128 ? 128 : e_max <= 256 ? 256 : 1024;
    // At most 32 keys a tile: a lane scores one key.
    plan.key_tile = std::clamp<int64_t>((40 << 10) / std::max<int64_t>((E + Ev) * es, 1), 1, 32);
    plan.threads = kSimtWarps * 32;
    p.rows_per_block = kSimtWarps;
    const int64_t acc = p.dtype == DType::kFloat64 ? 8 : 4;
    plan.smem_bytes =
        static_cast<size_t>(attn_simt_smem(E, Ev, es, acc, plan.key_tile, kSimtWarps).total);
  }
  p.tiles_per_unit = ceil_div(p.R, p.rows_per_block);

  // Key splits when the row tiles alone leave the GPU idle (decode), partials in scratch: the
  // decode kernel in multiples of 16 keys (at least 32) for kDecodeBlocksPerSm blocks per SM,
  // the others in multiples of their key tile, at least two tiles, for 2 blocks per SM.
  const bool decode = plan.kernel == AttnKernel::kDecode;
  const int64_t quantum = decode ? kDecodeKeyQuantum : plan.key_tile;
  const int64_t min_split = decode ? kDecodeMinSplitKeys : 2 * plan.key_tile;
  const int64_t blocks = p.units * p.tiles_per_unit;
  const int64_t target =
      (decode ? kDecodeBlocksPerSm : 2) * static_cast<int64_t>(std::max(sm_count, 1));
  int64_t splits = 1;
  if (blocks < target && S > min_split) {
    splits = std::min(ceil_div(target, blocks), ceil_div(S, min_split));
    splits = std::min<int64_t>(splits, 1024);
    // The decode kernel's combine keeps R x splits weights in the shared memory before the row
    // statistics (attention_decode.cu).
    if (decode) {
      const AttnDecodeSmem lay = attn_decode_smem(p.R, E, Ev, es, plan.key_tile);
      splits = std::max<int64_t>(1, std::min(splits, lay.stat / (4 * p.R)));
    }
  }
  const int64_t acc_size = p.dtype == DType::kFloat64 ? 8 : 4;
  const int64_t rows_total = p.units * p.R;
  const auto partial_bytes = [&](int64_t n) {
    const size_t ml = static_cast<size_t>(n * rows_total * 2 * acc_size);
    return scratch_round(ml) + scratch_round(static_cast<size_t>(n * rows_total * Ev * acc_size));
  };
  plan.split_bytes_wanted = splits > 1 ? partial_bytes(splits) : 0;
  while (splits > 1 && (scratch.data == nullptr || partial_bytes(splits) > scratch.bytes))
    splits = splits * 3 / 4;  // fewer splits fit; 1 always works
  p.split_keys =
      splits > 1 ? ceil_div(ceil_div(S, splits), quantum) * quantum : std::max<int64_t>(S, 1);
  p.splits = splits > 1 ? ceil_div(S, p.split_keys) : 1;
  if (p.splits > 1) {
    p.partial_ml = scratch.data;
    p.partial_acc = static_cast<char*>(scratch.data) +
                    scratch_round(static_cast<size_t>(p.splits * rows_total * 2 * acc_size));
    // The decode kernel's blocks count themselves per unit in the scratch counters.
    if (decode && static_cast<size_t>(p.units) <= scratch.counter_count)
      p.counters = scratch.counters;
  }
  return plan;
}

}  // namespace splice::cuda
