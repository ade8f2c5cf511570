// Shape rules of the matrix products, normalisations and attention: mm/bmm/addmm/baddbmm with
// their inner dims required equal, matmul's 1-d/2-d/batched cases with broadcast batch dims,
// linear, outer, einsum (subscripts, ellipsis, implicit output, size-1 broadcasting);
// (log_)softmax, layer/rms/group norm and their native forms (statistics in the input's dtype,
// or the computation dtype where PyTorch keeps it: _fused_rms_norm's rstd, native_layer_norm's
// statistics on CUDA); scaled_dot_product_attention and the kernels it exports as, with the
// auxiliary outputs their meta functions give.
#include "ir/shape_rules_util.h"

#include <algorithm>
#include <map>

namespace splice::ir::rules {

namespace {

Result<void> require_rank(RuleArgs& a, const TensorType& t, int64_t rank, std::string_view what) {
  if (t.rank() != rank) return a.error("{} must be a {}-D tensor, got {}-D", what, rank, t.rank());
  return ok_result();
}

Result<void> require_same_dtype(RuleArgs& a, const TensorType& x, const TensorType& y,
                                std::string_view what) {
  if (x.dtype != y.dtype)
    return a.error("{} must have the same dtype, got {} and {}", what, dtype_name(x.dtype),
                   dtype_name(y.dtype));
  return ok_result();
}

Result<Outputs> mm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* x, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* y, a.tensor("mat2"));
  SPLICE_TRY(require_rank(a, *x, 2, "self"));
  SPLICE_TRY(require_rank(a, *y, 2, "mat2"));
  SPLICE_TRY(require_same_dtype(a, *x, *y, "mm's operands"));
  SPLICE_TRY(a.require_equal(x->sizes[1], y->sizes[0],
                             fmt::format("mat1 and mat2 shapes cannot be multiplied ({} and {})",
                                         sizes_string(x->sizes), sizes_string(y->sizes))));
  return one(x->dtype, {x->sizes[0], y->sizes[1]});
}

Result<Outputs> bmm_of(RuleArgs& a, const TensorType& x, const TensorType& y) {
  SPLICE_TRY(require_rank(a, x, 3, "batch1"));
  SPLICE_TRY(require_rank(a, y, 3, "batch2"));
  SPLICE_TRY(require_same_dtype(a, x, y, "bmm's operands"));
  SPLICE_TRY(a.require_equal(x.sizes[0], y.sizes[0],
                             fmt::format("bmm batch sizes differ ({} and {})",
                                         sizes_string(x.sizes), sizes_string(y.sizes))));
  SPLICE_TRY(a.require_equal(x.sizes[2], y.sizes[1],
                             fmt::format("bmm shapes cannot be multiplied ({} and {})",
                                         sizes_string(x.sizes), sizes_string(y.sizes))));
  return one(x.dtype, {x.sizes[0], x.sizes[1], y.sizes[2]});
}

Result<Outputs> bmm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* x, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* y, a.tensor("mat2"));
  return bmm_of(a, *x, *y);
}

Result<Outputs> addmm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* x, a.tensor("mat1"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* y, a.tensor("mat2"));
  SPLICE_TRY(require_rank(a, *x, 2, "mat1"));
  SPLICE_TRY(require_rank(a, *y, 2, "mat2"));
  SPLICE_TRY(require_same_dtype(a, *x, *y, "addmm's mat1 and mat2"));
  SPLICE_TRY(a.require_equal(x->sizes[1], y->sizes[0],
                             fmt::format("mat1 and mat2 shapes cannot be multiplied ({} and {})",
                                         sizes_string(x->sizes), sizes_string(y->sizes))));
  Sizes out = {x->sizes[0], y->sizes[1]};
  SPLICE_TRY(require_expandable(a, self->sizes, out, "addmm's self"));
  return one(x->dtype, std::move(out));
}

Result<Outputs> baddbmm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* x, a.tensor("batch1"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* y, a.tensor("batch2"));
  SPLICE_TRY(require_same_dtype(a, *self, *x, "baddbmm's self and batch1"));
  SPLICE_ASSIGN_OR_RETURN(Outputs prod, bmm_of(a, *x, *y));
  SPLICE_TRY(require_expandable(a, self->sizes, prod[0].tensor.sizes, "baddbmm's self"));
  return prod;
}

// matmul's shapes (torch.matmul): 1-d operands gain a dim that is dropped again; batch dims
// broadcast.
Result<Sizes> matmul_sizes(RuleArgs& a, const TensorType& x, const TensorType& y) {
  const int64_t d1 = x.rank(), d2 = y.rank();
  if (d1 == 0 || d2 == 0)
    return a.error("both arguments to matmul need to be at least 1D, but they are {}D and {}D", d1,
                   d2);
  Sizes xs = x.sizes, ys = y.sizes;
  if (d1 == 1) xs.insert(xs.begin(), SymExpr(1));
  if (d2 == 1) ys.push_back(SymExpr(1));
  SPLICE_TRY(a.require_equal(xs.back(), ys[ys.size() - 2],
                             fmt::format("matmul shapes cannot be multiplied ({} and {})",
                                         sizes_string(x.sizes), sizes_string(y.sizes))));
  const Sizes xb(xs.begin(), xs.end() - 2), yb(ys.begin(), ys.end() - 2);
  SPLICE_ASSIGN_OR_RETURN(Sizes out, broadcast(a, {&xb, &yb}));
  if (d1 >= 2) out.push_back(xs[xs.size() - 2]);
  if (d2 >= 2) out.push_back(ys.back());
  return out;
}

Result<Outputs> matmul(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* x, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* y, a.tensor("other"));
  SPLICE_TRY(require_same_dtype(a, *x, *y, "matmul's operands"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, matmul_sizes(a, *x, *y));
  return one(x->dtype, std::move(out));
}

// linear(input, weight, bias) = input @ weight.T (+ bias).
Result<Outputs> linear(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* weight, a.tensor("weight"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* bias, a.optional_tensor("bias"));
  if (weight->rank() != 1 && weight->rank() != 2)
    return a.error("linear: weight must be 1-D or 2-D, got {}-D", weight->rank());
  TensorType wt = *weight;
  if (wt.rank() == 2) std::swap(wt.sizes[0], wt.sizes[1]);
  SPLICE_TRY(require_same_dtype(a, *input, *weight, "linear's input and weight"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, matmul_sizes(a, *input, wt));
  if (bias) SPLICE_TRY(require_expandable(a, bias->sizes, out, "linear's bias"));
  return one(input->dtype, std::move(out));
}

Result<Outputs> outer(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Operand x, a.operand("self"));
  SPLICE_ASSIGN_OR_RETURN(Operand y, a.operand("vec2"));
  if (!x.tensor || !y.tensor) return a.error("outer needs two tensors");
  SPLICE_TRY(require_rank(a, *x.tensor, 1, "outer's self"));
  SPLICE_TRY(require_rank(a, *y.tensor, 1, "outer's vec2"));
  return one(result_dtype({x, y}, Promotion::kDefault), {x.tensor->sizes[0], y.tensor->sizes[0]});
}

// ---- einsum ----

// Subscript ids: letters 0-51; ellipsis dims kLetters + k (right-aligned).
constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

int subscript_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}

Result<std::vector<int>> parse_term(RuleArgs& a, std::string_view term) {
  std::vector<int> ids;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (ellipsis || term.substr(i, 3) != "...")
        return a.error("einsum(): found '.' in '{}' that is not part of a single ellipsis", term);
      ellipsis = true;
      ids.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int id = subscript_id(term[i]);
    if (id < 0) return a.error("einsum(): invalid subscript '{}' in '{}'", term[i], term);
    ids.push_back(id);
  }
  return ids;
}

Result<Outputs> einsum(RuleArgs& a) {
  auto equation = a.string("equation");
  if (!equation) return a.error("einsum(): the equation must be a string");
  SPLICE_ASSIGN_OR_RETURN(auto tensors, a.tensor_list("tensors"));
  if (tensors.empty()) return a.error("einsum(): must provide at least one operand");
  std::string eq;
  for (char c : *equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string_view lhs = std::string_view(eq).substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    SPLICE_ASSIGN_OR_RETURN(auto ids, parse_term(a, lhs.substr(start, comma - start)));
    terms.push_back(std::move(ids));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (terms.size() != tensors.size())
    return a.error("einsum(): the equation '{}' has {} operands, but {} tensors were given", eq,
                   terms.size(), tensors.size());
  // Each subscript's size: equal across operands, or 1 where it broadcasts.
  std::vector<std::optional<SymExpr>> sizes(kLetters + 64);
  std::vector<int> count(kLetters + 64, 0);
  int64_t ellipsis_dims = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const bool has = std::find(terms[i].begin(), terms[i].end(), kEllipsis) != terms[i].end();
    const int64_t letters = static_cast<int64_t>(terms[i].size()) - (has ? 1 : 0);
    if (has ? letters > tensors[i]->rank() : letters != tensors[i]->rank())
      return a.error(
          "einsum(): the number of subscripts in the equation ({}) does not match the "
          "number of dimensions ({}) for operand {}",
          letters, tensors[i]->rank(), i);
    if (has) ellipsis_dims = std::max(ellipsis_dims, tensors[i]->rank() - letters);
  }
  if (ellipsis_dims > 64) return a.error("einsum(): too many ellipsis dims");
  for (size_t i = 0; i < terms.size(); ++i) {
    const TensorType& t = *tensors[i];
    const int64_t letters = static_cast<int64_t>(terms[i].size()) -
                            (std::count(terms[i].begin(), terms[i].end(), kEllipsis) ? 1 : 0);
    const int64_t own_ellipsis = t.rank() - letters;
    int64_t d = 0;
    std::map<int, SymExpr> here;  // this operand's size of each subscript
    for (int id : terms[i]) {
      std::vector<int> ids;
      if (id == kEllipsis) {
        for (int64_t k = ellipsis_dims - own_ellipsis; k < ellipsis_dims; ++k)
          ids.push_back(kLetters + static_cast<int>(k));
      } else {
        ids.push_back(id);
      }
      for (int sid : ids) {
        const SymExpr& s = t.sizes[d++];
        ++count[sid];  // every occurrence: `ii` (a trace) is not an implicit output
        if (auto it = here.find(sid); it != here.end()) {
          // A repeated subscript takes a diagonal: its sizes must agree.
          SPLICE_TRY(a.require_equal(it->second, s,
                                     fmt::format("einsum(): a subscript is repeated for operand "
                                                 "{} but the sizes don't match, {} != {}",
                                                 i, it->second.to_string(), s.to_string())));
          continue;
        }
        here.emplace(sid, s);
        if (!sizes[sid] || a.env().decide(SymExpr::make(SymOp::kEq, {*sizes[sid], 1})) == true) {
          sizes[sid] = s;
        } else if (!a.env().provably_equal(*sizes[sid], s) &&
                   a.env().decide(SymExpr::make(SymOp::kEq, {s, 1})) != true) {
          SPLICE_TRY(a.require_equal(*sizes[sid], s,
                                     fmt::format("einsum(): operand {} has size {} for a "
                                                 "subscript that is {} elsewhere",
                                                 i, s.to_string(), sizes[sid]->to_string())));
        }
      }
    }
  }
  std::vector<int> out_ids;
  if (arrow != std::string::npos) {
    SPLICE_ASSIGN_OR_RETURN(auto rhs, parse_term(a, std::string_view(eq).substr(arrow + 2)));
    for (int id : rhs) {
      if (id == kEllipsis) {
        for (int64_t k = 0; k < ellipsis_dims; ++k)
          out_ids.push_back(kLetters + static_cast<int>(k));
        continue;
      }
      if (count[id] == 0)
        return a.error(
            "einsum(): output subscript {} does not appear in the equation for any "
            "input operand",
            id);
      if (std::find(out_ids.begin(), out_ids.end(), id) != out_ids.end())
        return a.error("einsum(): output subscript {} appears more than once in the output", id);
      out_ids.push_back(id);
    }
  } else {
    for (int64_t k = 0; k < ellipsis_dims; ++k) out_ids.push_back(kLetters + static_cast<int>(k));
    for (int id = 0; id < kLetters; ++id)
      if (count[id] == 1) out_ids.push_back(id);
  }
  Sizes out;
  for (int id : out_ids) out.push_back(sizes[id].value_or(SymExpr(1)));
  std::vector<Operand> ops;
  for (const TensorType* t : tensors) ops.push_back(Operand{t, NumberKind::kInt});
  return one(result_dtype(ops, Promotion::kDefault), std::move(out));
}

// ---- softmax ----

Result<Outputs> softmax_internal(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(bool half_to_float, a.boolean("half_to_float"));
  if (half_to_float && self->dtype != DType::kFloat16 && self->dtype != DType::kBFloat16)
    return a.error("half_to_float is True but the input is {}, expected half or bfloat16",
                   dtype_name(self->dtype));
  return one(half_to_float ? DType::kFloat32 : self->dtype, self->sizes);
}

Result<Outputs> softmax(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  return one(a.dtype("dtype").value_or(self->dtype), self->sizes);
}

// ---- normalisation ----

// Checks normalized_shape against the input's trailing dims and weight/bias shapes; returns
// the statistics' shape (the normalised dims kept as 1).
Result<Sizes> norm_stats_sizes(RuleArgs& a, const TensorType& input, const Sizes& normalized,
                               std::initializer_list<std::string_view> params) {
  if (normalized.empty()) return a.error("expected normalized_shape to be at least 1-dimensional");
  const int64_t n = static_cast<int64_t>(normalized.size());
  if (input.rank() < n)
    return a.error("given normalized_shape={}, expected an input with shape [*, {}], got {}",
                   sizes_string(normalized), sizes_string(normalized), sizes_string(input.sizes));
  const int64_t axis = input.rank() - n;
  for (int64_t i = 0; i < n; ++i)
    SPLICE_TRY(a.require_equal(input.sizes[axis + i], normalized[i],
                               fmt::format("given normalized_shape={}, expected an input with "
                                           "shape [*, {}], got {}",
                                           sizes_string(normalized), sizes_string(normalized),
                                           sizes_string(input.sizes))));
  for (std::string_view p : params) {
    SPLICE_ASSIGN_OR_RETURN(const TensorType* t, a.optional_tensor(p));
    if (!t) continue;
    if (t->rank() != n)
      return a.error("expected {} of shape {}, got {}", p, sizes_string(normalized),
                     sizes_string(t->sizes));
    for (int64_t i = 0; i < n; ++i)
      SPLICE_TRY(a.require_equal(t->sizes[i], normalized[i],
                                 fmt::format("expected {} of shape {}, got {}", p,
                                             sizes_string(normalized), sizes_string(t->sizes))));
  }
  Sizes stats(input.sizes.begin(), input.sizes.begin() + axis);
  stats.insert(stats.end(), n, SymExpr(1));
  return stats;
}

Result<Outputs> layer_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(Sizes normalized, a.sym_list("normalized_shape"));
  SPLICE_TRY(norm_stats_sizes(a, *input, normalized, {"weight", "bias"}));
  return same_as(*input);
}

Result<Outputs> native_layer_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(Sizes normalized, a.sym_list("normalized_shape"));
  SPLICE_ASSIGN_OR_RETURN(Sizes stats, norm_stats_sizes(a, *input, normalized, {"weight", "bias"}));
  // The statistics are the input's dtype on CPU and the computation dtype elsewhere.
  OutputType stat = tensor_out(input->dtype, stats);
  if (computation_dtype(input->dtype) != input->dtype)
    stat.other_device_dtype = computation_dtype(input->dtype);
  return Outputs{OutputType::of(*input), stat, stat};
}

Result<Outputs> rms_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(Sizes normalized, a.sym_list("normalized_shape"));
  SPLICE_TRY(norm_stats_sizes(a, *input, normalized, {"weight"}));
  return same_as(*input);
}

Result<Outputs> fused_rms_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(Sizes normalized, a.sym_list("normalized_shape"));
  SPLICE_ASSIGN_OR_RETURN(Sizes stats, norm_stats_sizes(a, *input, normalized, {"weight"}));
  return Outputs{OutputType::of(*input), tensor_out(computation_dtype(input->dtype), stats)};
}

// group_norm's checks: input [N, C, *] with C divisible by the groups; weight/bias of C.
Result<void> check_groups(RuleArgs& a, const TensorType& input, const SymExpr& channels,
                          int64_t groups) {
  if (input.rank() < 2)
    return a.error("expected at least 2 dimensions for input tensor but received {}", input.rank());
  if (groups <= 0) return a.error("num_groups must be positive, got {}", groups);
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kEq, {py_mod(channels, groups), 0}),
                       fmt::format("expected number of channels in input to be divisible by "
                                   "num_groups, but got input of shape {} and num_groups={}",
                                   sizes_string(input.sizes), groups)));
  for (std::string_view p : {"weight", "bias"}) {
    SPLICE_ASSIGN_OR_RETURN(const TensorType* t, a.optional_tensor(p));
    if (t)
      SPLICE_TRY(a.require_equal(a.env().simplify(numel(t->sizes)), channels,
                                 fmt::format("expected {} to have {} elements, got shape {}", p,
                                             channels.to_string(), sizes_string(t->sizes))));
  }
  return ok_result();
}

Result<Outputs> group_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer("num_groups"));
  if (input->rank() < 2)
    return a.error("expected at least 2 dimensions for input tensor but received {}",
                   input->rank());
  SPLICE_TRY(check_groups(a, *input, input->sizes[1], groups));
  return same_as(*input);
}

Result<Outputs> native_group_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr n, a.sym_int("N"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr c, a.sym_int("C"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr hxw, a.sym_int("HxW"));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer("group"));
  SPLICE_TRY(check_groups(a, *input, c, groups));
  SPLICE_TRY(a.require_equal(
      a.env().simplify(n * c * hxw), a.env().simplify(numel(input->sizes)),
      fmt::format("N={} C={} HxW={} do not match an input of shape {}", n.to_string(),
                  c.to_string(), hxw.to_string(), sizes_string(input->sizes))));
  const Sizes stats = {n, SymExpr(groups)};
  return Outputs{OutputType::of(*input), tensor_out(input->dtype, stats),
                 tensor_out(input->dtype, stats)};
}

// ---- attention ----

struct Qkv {
  const TensorType* q;
  const TensorType* k;
  const TensorType* v;
};

Result<Qkv> attention_operands(RuleArgs& a, bool four_d) {
  Qkv t;
  SPLICE_ASSIGN_OR_RETURN(t.q, a.tensor("query"));
  SPLICE_ASSIGN_OR_RETURN(t.k, a.tensor("key"));
  SPLICE_ASSIGN_OR_RETURN(t.v, a.tensor("value"));
  if (t.q->dtype != t.k->dtype || t.q->dtype != t.v->dtype)
    return a.error("expected query, key and value to have the same dtype, got {}, {} and {}",
                   dtype_name(t.q->dtype), dtype_name(t.k->dtype), dtype_name(t.v->dtype));
  for (const TensorType* x : {t.q, t.k, t.v}) {
    if (four_d ? x->rank() != 4 : x->rank() < 2)
      return a.error("attention expects {} query, key and value, got shapes {}, {} and {}",
                     four_d ? "4-D" : "at least 2-D", sizes_string(t.q->sizes),
                     sizes_string(t.k->sizes), sizes_string(t.v->sizes));
  }
  SPLICE_TRY(a.require_equal(t.q->sizes.back(), t.k->sizes.back(),
                             fmt::format("attention: query {} and key {} must have the same head "
                                         "dim",
                                         sizes_string(t.q->sizes), sizes_string(t.k->sizes))));
  SPLICE_TRY(a.require_equal(t.k->sizes[t.k->rank() - 2], t.v->sizes[t.v->rank() - 2],
                             fmt::format("attention: key {} and value {} must have the same "
                                         "sequence length",
                                         sizes_string(t.k->sizes), sizes_string(t.v->sizes))));
  return t;
}

// scaled_dot_product_attention: query's shape with value's head dim.
Result<Outputs> sdpa(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Qkv t, attention_operands(a, false));
  Sizes out = t.q->sizes;
  out.back() = t.v->sizes.back();
  return one(t.q->dtype, std::move(out));
}

Result<Outputs> flash_for_cpu(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Qkv t, attention_operands(a, true));
  const Sizes& q = t.q->sizes;
  return Outputs{OutputType::of(*t.q), tensor_out(DType::kFloat32, {q[0], q[1], q[2]})};
}

Result<Outputs> flash(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Qkv t, attention_operands(a, true));
  const Sizes& q = t.q->sizes;
  SPLICE_ASSIGN_OR_RETURN(bool debug, a.boolean("return_debug_mask"));
  // The debug mask's key length is a kernel block size; only its presence is checked.
  OutputType mask = debug ? OutputType::unknown() : tensor_out(t.q->dtype, {SymExpr(0)});
  return Outputs{OutputType::of(*t.q),
                 tensor_out(DType::kFloat32, {q[0], q[1], q[2]}),
                 OutputType::unknown(),  // cum_seq_q: None
                 OutputType::unknown(),  // cum_seq_k: None
                 OutputType::scalar(ValueKind::kSymInt, q[2]),
                 OutputType::scalar(ValueKind::kSymInt, t.k->sizes[2]),
                 OutputType::unknown(),  // rng seed: uint64, which splice does not represent
                 OutputType::unknown(),  // rng offset
                 mask};
}

Result<Outputs> efficient(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Qkv t, attention_operands(a, true));
  const Sizes& q = t.q->sizes;
  SPLICE_ASSIGN_OR_RETURN(bool lse, a.boolean("compute_log_sumexp"));
  const SymExpr lse_len = lse ? a.env().simplify(ceil_div(q[2], 32) * 32) : SymExpr(0);
  return Outputs{tensor_out(t.q->dtype, {q[0], q[1], q[2], t.v->sizes[3]}),
                 tensor_out(DType::kFloat32, {q[0], q[1], lse_len}), tensor_out(DType::kInt64, {}),
                 tensor_out(DType::kInt64, {})};
}

Result<Outputs> cudnn(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Qkv t, attention_operands(a, true));
  const Sizes& q = t.q->sizes;
  return Outputs{tensor_out(t.q->dtype, {q[0], q[1], q[2], t.v->sizes[3]}),
                 tensor_out(DType::kFloat32, {q[0], q[1], q[2], SymExpr(1)}),
                 OutputType::unknown(),
                 OutputType::unknown(),
                 OutputType::scalar(ValueKind::kSymInt, q[2]),
                 OutputType::scalar(ValueKind::kSymInt, t.k->sizes[2]),
                 tensor_out(DType::kInt64, {}),
                 tensor_out(DType::kInt64, {}),
                 OutputType::unknown()};
}

constexpr RuleEntry kEntries[] = {
    {OpId::mm, mm},
    {OpId::bmm, bmm},
    {OpId::addmm, addmm},
    {OpId::baddbmm, baddbmm},
    {OpId::matmul, matmul},
    {OpId::linear, linear},
    {OpId::outer, outer},
    {OpId::einsum, einsum},
    {OpId::_softmax, softmax_internal},
    {OpId::_log_softmax, softmax_internal},
    {OpId::softmax_int, softmax},
    {OpId::log_softmax_int, softmax},
    {OpId::layer_norm, layer_norm},
    {OpId::native_layer_norm, native_layer_norm},
    {OpId::rms_norm, rms_norm},
    {OpId::_fused_rms_norm, fused_rms_norm},
    {OpId::group_norm, group_norm},
    {OpId::native_group_norm, native_group_norm},
    {OpId::scaled_dot_product_attention, sdpa},
    {OpId::_scaled_dot_product_flash_attention_for_cpu, flash_for_cpu},
    {OpId::_scaled_dot_product_flash_attention, flash},
    {OpId::_scaled_dot_product_efficient_attention, efficient},
    {OpId::_scaled_dot_product_cudnn_attention, cudnn},
};

}  // namespace

std::span<const RuleEntry> nn_rules() { return kEntries; }

}  // namespace splice::ir::rules
