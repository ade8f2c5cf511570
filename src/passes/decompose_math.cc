// Decompositions of the CompositeImplicit math ops (decompositions.h), following torch/_refs and
// torch/_decomp:
//   einsum: repeated subscripts become diagonals; operands are contracted left to right, each
//     pair permuted and broadcast to [batch, own, summed] / [batch, summed, own], reshaped to
//     3-d for one bmm (ATen's sumproduct_pair), subscripts summed out as soon as nothing later
//     needs them, then permuted to the output order;
//   baddbmm: beta * self + alpha * bmm(batch1, batch2), self left out when beta is 0 (factors
//     truncated to integers for integer tensors);
//   outer: unsqueeze(self, 1) * vec2;
//   linalg_vector_norm (and norm.Scalar / norm.ScalarOpt_dim through it): count of non-zeros
//     (ord 0), amax/amin of |x| (±inf), else (sum |x|^ord)^(1/ord) in the computation dtype
//     (sqrt for ord 2, as eager's kernel);
//   std_mean: var_mean and sqrt; group_norm: native_group_norm with N, C and HxW;
//   zero: zeros_like; min.other: minimum; max.other: maximum; diff: cat of
//     prepend/self/append, then n slice differences (logical_xor for bool), as ATen's
//     diff_helper;
//   square: pow(self, 2);
//   pow.Tensor_Scalar with exponent 2, 0.5, -0.5, -1, 3 or -2: the multiplies, sqrt, rsqrt or
//     reciprocal ATen's pow kernels compute instead of pow (not a composite: eager's results).
#include <algorithm>
#include <cmath>
#include <map>

#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// ---- einsum ----

constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

std::vector<int> parse_term(std::string_view term) {
  std::vector<int> ids;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      ids.push_back(kEllipsis);
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      ids.push_back(c - 'A');
    } else {
      ids.push_back(26 + (c - 'a'));
    }
  }
  return ids;
}

bool contains(const std::vector<int>& v, int id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

// An operand during contraction: a value and one distinct subscript per dim.
struct Term {
  Value* v;
  std::vector<int> ids;
};

class Einsum {
 public:
  Einsum(Rewriter& rw, Node* node) : rw_(rw), node_(node), sizes_(rw, node) {}

  Result<bool> run() {
    const Arg& eq_arg = node_->arg("equation");
    const Arg& list = node_->arg("tensors");
    if (!eq_arg.is<std::string>() || !list.is<std::vector<Value*>>()) return false;
    std::string eq;
    for (char c : eq_arg.as<std::string>())
      if (c != ' ') eq.push_back(c);
    const auto& tensors = list.as<std::vector<Value*>>();
    const size_t arrow = eq.find("->");
    const std::string_view lhs = std::string_view(eq).substr(0, arrow);
    std::vector<std::vector<int>> terms;
    for (size_t start = 0;;) {
      const size_t comma = lhs.find(',', start);
      terms.push_back(parse_term(lhs.substr(start, comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    // The shape rule has checked the equation against the operands; the result dtype is the
    // operands' promoted one, which bmm needs on both sides.
    const DType dtype = node_->output() ? node_->output()->type().dtype : tensors[0]->type().dtype;
    int64_t ellipsis_dims = 0;
    std::vector<int64_t> own_ellipsis;
    for (size_t i = 0; i < terms.size(); ++i) {
      const bool has = contains(terms[i], kEllipsis);
      own_ellipsis.push_back(tensors[i]->type().rank() -
                             (static_cast<int64_t>(terms[i].size()) - (has ? 1 : 0)));
      if (has) ellipsis_dims = std::max(ellipsis_dims, own_ellipsis.back());
    }
    std::vector<int> count(kLetters + ellipsis_dims, 0);
    std::vector<Term> ops;
    for (size_t i = 0; i < terms.size(); ++i) {
      std::vector<int> ids;
      for (int id : terms[i]) {
        if (id != kEllipsis) {
          ids.push_back(id);
          continue;
        }
        for (int64_t k = ellipsis_dims - own_ellipsis[i]; k < ellipsis_dims; ++k)
          ids.push_back(kLetters + static_cast<int>(k));
      }
      for (int id : ids) ++count[id];
      Value* v = tensors[i];
      if (v->type().dtype != dtype) {
        SPLICE_ASSIGN_OR_RETURN(v, insert(OpId::_to_copy, {Arg{v}}, {{"dtype", Arg{dtype}}}));
      }
      SPLICE_ASSIGN_OR_RETURN(Term t, diagonals(Term{v, ids}));
      ops.push_back(std::move(t));
    }
    for (const Term& t : ops) {
      for (size_t d = 0; d < t.ids.size(); ++d) {
        const int id = t.ids[d];
        const bool known = sizes_of_.count(id) > 0;
        if (known && sizes_of_.at(id).expr.constant() != 1) continue;
        SPLICE_ASSIGN_OR_RETURN(Size s, sizes_.dim(t.v, static_cast<int64_t>(d)));
        if (!known || s.expr.constant() != 1) sizes_of_.insert_or_assign(id, s);
      }
    }
    std::vector<int> out_ids;
    if (arrow != std::string::npos) {
      for (int id : parse_term(std::string_view(eq).substr(arrow + 2))) {
        if (id != kEllipsis) {
          out_ids.push_back(id);
          continue;
        }
        for (int64_t k = 0; k < ellipsis_dims; ++k)
          out_ids.push_back(kLetters + static_cast<int>(k));
      }
    } else {
      for (int64_t k = 0; k < ellipsis_dims; ++k) out_ids.push_back(kLetters + static_cast<int>(k));
      for (int id = 0; id < kLetters; ++id)
        if (count[id] == 1) out_ids.push_back(id);
    }
    Term acc = ops[0];
    for (size_t i = 1; i < ops.size(); ++i) {
      std::vector<int> keep = out_ids;
      for (size_t j = i + 1; j < ops.size(); ++j)
        keep.insert(keep.end(), ops[j].ids.begin(), ops[j].ids.end());
      const Term& b = ops[i];
      SPLICE_ASSIGN_OR_RETURN(
          acc, sum_out(acc, [&](int id) { return !contains(keep, id) && !contains(b.ids, id); }));
      SPLICE_ASSIGN_OR_RETURN(Term tb, sum_out(b, [&](int id) {
                                return !contains(keep, id) && !contains(acc.ids, id);
                              }));
      SPLICE_ASSIGN_OR_RETURN(acc, contract(acc, tb, keep));
    }
    SPLICE_ASSIGN_OR_RETURN(acc, sum_out(acc, [&](int id) { return !contains(out_ids, id); }));
    SPLICE_ASSIGN_OR_RETURN(Value * out, permute(acc, out_ids));
    SPLICE_TRY(replace_outputs(rw_, node_, {out}));
    return true;
  }

 private:
  Result<Value*> insert(ir::OpId target, std::vector<Arg> args, const NamedArgs& named = {}) {
    return rw_.insert_value(node_, target, std::move(args), named, part_name(*node_, target));
  }

  // Repeated subscripts within an operand take the diagonal (moved to the last dim).
  Result<Term> diagonals(Term t) {
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < t.ids.size() && !again; ++p) {
        for (size_t q = p + 1; q < t.ids.size() && !again; ++q) {
          if (t.ids[p] != t.ids[q]) continue;
          const int id = t.ids[p];
          SPLICE_ASSIGN_OR_RETURN(t.v, insert(OpId::diagonal, {Arg{t.v}, Arg{int64_t{0}},
                                                               Arg{int64_t(p)}, Arg{int64_t(q)}}));
          t.ids.erase(t.ids.begin() + q);
          t.ids.erase(t.ids.begin() + p);
          t.ids.push_back(id);
          again = true;
        }
      }
    }
    return t;
  }

  // Sums `t` over the subscripts for which drop(id) holds, keeping its dtype.
  template <typename Pred>
  Result<Term> sum_out(Term t, Pred&& drop) {
    std::vector<ir::SymIntArg> dims;
    std::vector<int> kept;
    for (size_t d = 0; d < t.ids.size(); ++d) {
      if (drop(t.ids[d])) {
        dims.push_back(int64_t(d));
      } else {
        kept.push_back(t.ids[d]);
      }
    }
    if (dims.empty()) return t;
    SPLICE_ASSIGN_OR_RETURN(t.v, insert(OpId::sum_dim_IntList, {Arg{t.v}, Arg{dims}, Arg{false}},
                                        {{"dtype", Arg{t.v->type().dtype}}}));
    t.ids = std::move(kept);
    return t;
  }

  Result<Value*> permute(const Term& t, const std::vector<int>& order) {
    std::vector<ir::SymIntArg> perm;
    bool identity = true;
    for (size_t i = 0; i < order.size(); ++i) {
      const int64_t at = std::find(t.ids.begin(), t.ids.end(), order[i]) - t.ids.begin();
      perm.push_back(at);
      identity = identity && at == static_cast<int64_t>(i);
    }
    if (identity) return t.v;
    return insert(OpId::permute, {Arg{t.v}, Arg{perm}});
  }

  // `t` permuted to `order` and broadcast to every subscript's full size.
  Result<Value*> arrange(const Term& t, const std::vector<int>& order) {
    SPLICE_ASSIGN_OR_RETURN(Value * v, permute(t, order));
    std::vector<ir::SymIntArg> full;
    bool expand = false;
    for (size_t d = 0; d < order.size(); ++d) {
      const Size& s = sizes_of_.at(order[d]);
      if (rw_.env().provably_equal(v->type().sizes[d], s.expr)) {
        full.push_back(int64_t{-1});
      } else {
        full.push_back(s.arg);
        expand = true;
      }
    }
    if (!expand) return v;
    return insert(OpId::expand, {Arg{v}, Arg{full}});
  }

  Result<Size> product(const std::vector<int>& ids) {
    std::vector<Size> s;
    for (int id : ids) s.push_back(sizes_of_.at(id));
    return sizes_.product(s);
  }

  // a and b contracted over their shared subscripts not in `keep`; shared ones in `keep` are
  // batch dims. The result's dims: batch, a's own, b's own.
  Result<Term> contract(const Term& a, const Term& b, const std::vector<int>& keep) {
    std::vector<int> batch, summed, a_own, b_own;
    for (int id : a.ids) {
      if (contains(b.ids, id)) {
        (contains(keep, id) ? batch : summed).push_back(id);
      } else {
        a_own.push_back(id);
      }
    }
    for (int id : b.ids)
      if (!contains(a.ids, id)) b_own.push_back(id);
    std::vector<int> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), a_own.begin(), a_own.end());
    a_order.insert(a_order.end(), summed.begin(), summed.end());
    b_order.insert(b_order.end(), summed.begin(), summed.end());
    b_order.insert(b_order.end(), b_own.begin(), b_own.end());
    SPLICE_ASSIGN_OR_RETURN(Value * ta, arrange(a, a_order));
    SPLICE_ASSIGN_OR_RETURN(Value * tb, arrange(b, b_order));
    SPLICE_ASSIGN_OR_RETURN(Size nb, product(batch));
    SPLICE_ASSIGN_OR_RETURN(Size m, product(a_own));
    SPLICE_ASSIGN_OR_RETURN(Size k, product(summed));
    SPLICE_ASSIGN_OR_RETURN(Size n, product(b_own));
    SPLICE_ASSIGN_OR_RETURN(Value * a3, insert(OpId::reshape, {Arg{ta}, Arg{to_list({nb, m, k})}}));
    SPLICE_ASSIGN_OR_RETURN(Value * b3, insert(OpId::reshape, {Arg{tb}, Arg{to_list({nb, k, n})}}));
    SPLICE_ASSIGN_OR_RETURN(Value * c, insert(OpId::bmm, {Arg{a3}, Arg{b3}}));
    std::vector<int> ids = batch;
    ids.insert(ids.end(), a_own.begin(), a_own.end());
    ids.insert(ids.end(), b_own.begin(), b_own.end());
    std::vector<Size> out;
    for (int id : ids) out.push_back(sizes_of_.at(id));
    SPLICE_ASSIGN_OR_RETURN(Value * r, insert(OpId::reshape, {Arg{c}, Arg{to_list(out)}}));
    return Term{r, ids};
  }

  Rewriter& rw_;
  Node* node_;
  SizeBuilder sizes_;
  std::map<int, Size> sizes_of_;  // each subscript's full (broadcast) size
};

Result<bool> einsum(Rewriter& rw, Node* node) { return Einsum(rw, node).run(); }

// ---- baddbmm, outer ----

// A Scalar argument's constant value, if it has one.
std::optional<double> number(const Arg& a) {
  if (a.is<bool>()) return a.as<bool>() ? 1.0 : 0.0;
  if (a.is<int64_t>()) return static_cast<double>(a.as<int64_t>());
  if (a.is<double>()) return a.as<double>();
  return std::nullopt;
}

Result<bool> baddbmm(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  Value* b1 = tensor_arg(*node, "batch1");
  Value* b2 = tensor_arg(*node, "batch2");
  if (self == nullptr || b1 == nullptr || b2 == nullptr) return false;
  SPLICE_ASSIGN_OR_RETURN(Value * result, rw.insert_value(node, OpId::bmm, {Arg{b1}, Arg{b2}}, {},
                                                          part_name(*node, OpId::bmm)));
  Arg alpha = node->arg("alpha");
  Arg beta = node->arg("beta");
  // Integer tensors take integer factors: torch/_decomp's baddbmm truncates them first.
  if (!is_floating(self->type().dtype)) {
    for (Arg* factor : {&alpha, &beta}) {
      if (factor->is<double>()) {
        *factor = Arg{static_cast<int64_t>(std::trunc(factor->as<double>()))};
      } else if (factor->is<Value*>() && factor->as<Value*>()->kind() == ir::ValueKind::kSymFloat) {
        return make_error(ErrorKind::kUnsupportedOp,
                          "{}: a symbolic float alpha or beta on integer tensors is not supported",
                          node_label(*node));
      }
    }
  }
  if (number(alpha) != 1.0) {
    SPLICE_ASSIGN_OR_RETURN(result, rw.insert_value(node, OpId::mul_Tensor, {Arg{result}, alpha},
                                                    {}, part_name(*node, OpId::mul_Tensor)));
  }
  // beta == 0 ignores self, NaN and inf included.
  if (number(beta) != 0.0) {
    Value* scaled = self;
    if (number(beta) != 1.0) {
      SPLICE_ASSIGN_OR_RETURN(scaled, rw.insert_value(node, OpId::mul_Tensor, {Arg{self}, beta}, {},
                                                      part_name(*node, OpId::mul_Tensor)));
    }
    SPLICE_ASSIGN_OR_RETURN(result,
                            rw.insert_value(node, OpId::add_Tensor, {Arg{scaled}, Arg{result}}, {},
                                            part_name(*node, OpId::add_Tensor)));
  }
  SPLICE_TRY(replace_outputs(rw, node, {result}));
  return true;
}

Result<bool> outer(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  Value* vec2 = tensor_arg(*node, "vec2");
  if (self == nullptr || vec2 == nullptr) return false;
  SPLICE_ASSIGN_OR_RETURN(Value * column,
                          rw.insert_value(node, OpId::unsqueeze, {Arg{self}, Arg{int64_t{1}}}, {},
                                          part_name(*node, OpId::unsqueeze)));
  SPLICE_TRY(rw.replace(node, OpId::mul_Tensor, {Arg{column}, Arg{vec2}}));
  return true;
}

// ---- norms ----

Result<bool> vector_norm(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const Arg& ord_arg = node->arg("ord");
  const std::optional<double> ord = number(ord_arg);
  if (!ord)
    return make_error(ErrorKind::kUnsupportedOp, "{}: a symbolic norm order is not supported",
                      node_label(*node));
  const Arg& dim = node->arg("dim");
  const Arg& keepdim = node->arg("keepdim");
  const DType result = node->output() ? node->output()->type().dtype : self->type().dtype;
  auto insert = [&](ir::OpId target, std::vector<Arg> args, const NamedArgs& named = {}) {
    return rw.insert_value(node, target, std::move(args), named, part_name(*node, target));
  };
  auto to_dtype = [&](Value* v, DType d) -> Result<Value*> {
    if (v->type().dtype == d) return v;
    return insert(OpId::_to_copy, {Arg{v}}, {{"dtype", Arg{d}}});
  };
  Value* x = self;
  Value* out = nullptr;
  if (*ord == 0.0) {
    // The count of non-zero elements.
    SPLICE_ASSIGN_OR_RETURN(Value * nonzero, insert(OpId::ne_Scalar, {Arg{x}, Arg{int64_t{0}}}));
    SPLICE_ASSIGN_OR_RETURN(
        out, insert(OpId::sum_dim_IntList, {Arg{nonzero}, dim, keepdim}, {{"dtype", Arg{result}}}));
  } else if (std::isinf(*ord)) {
    SPLICE_ASSIGN_OR_RETURN(Value * magnitude, insert(OpId::abs, {Arg{x}}));
    const Arg dims = dim.is_none() ? Arg{std::vector<ir::SymIntArg>{}} : dim;
    SPLICE_ASSIGN_OR_RETURN(
        out, insert(*ord > 0 ? OpId::amax : OpId::amin, {Arg{magnitude}, dims, keepdim}));
    SPLICE_ASSIGN_OR_RETURN(out, to_dtype(out, result));
  } else {
    // In the computation dtype (float32 for half types), as torch/_refs.linalg.vector_norm.
    const DType compute =
        result == DType::kFloat16 || result == DType::kBFloat16 ? DType::kFloat32 : result;
    SPLICE_ASSIGN_OR_RETURN(x, to_dtype(x, compute));
    const bool even = std::fmod(*ord, 2.0) == 0.0;
    if (!even) {
      SPLICE_ASSIGN_OR_RETURN(x, insert(OpId::abs, {Arg{x}}));
    }
    if (*ord != 1.0) {
      SPLICE_ASSIGN_OR_RETURN(x, insert(OpId::pow_Tensor_Scalar, {Arg{x}, ord_arg}));
    }
    SPLICE_ASSIGN_OR_RETURN(out, insert(OpId::sum_dim_IntList, {Arg{x}, dim, keepdim}));
    if (*ord == 2.0) {
      SPLICE_ASSIGN_OR_RETURN(out, insert(OpId::sqrt, {Arg{out}}));
    } else if (*ord != 1.0) {
      SPLICE_ASSIGN_OR_RETURN(out, insert(OpId::pow_Tensor_Scalar, {Arg{out}, Arg{1.0 / *ord}}));
    }
    SPLICE_ASSIGN_OR_RETURN(out, to_dtype(out, result));
  }
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// norm.Scalar(self, p) and norm.ScalarOpt_dim(self, p?, dim, keepdim): linalg_vector_norm.
Result<bool> norm(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  const Arg& p = node->arg("p");
  const Arg ord = p.is_none() ? Arg{int64_t{2}} : p;
  const bool with_dims = node->op().find_arg("dim").has_value();
  SPLICE_TRY(rw.replace(node, OpId::linalg_vector_norm,
                        {Arg{self}, ord, with_dims ? node->arg("dim") : Arg{Arg::None{}},
                         with_dims ? node->arg("keepdim") : Arg{false}}));
  return true;
}

// std_mean: (sqrt(var), mean) of var_mean with the same correction.
Result<bool> std_mean(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  Arg correction;
  if (node->op().find_arg("unbiased")) {
    const Arg& unbiased = node->arg("unbiased");
    correction = Arg{int64_t{unbiased.is<bool>() && !unbiased.as<bool>() ? 0 : 1}};
  } else {
    correction = node->arg("correction");
  }
  SPLICE_ASSIGN_OR_RETURN(Node * vm,
                          rw.insert(node, OpId::var_mean_correction, {Arg{self}, node->arg("dim")},
                                    {{"correction", correction}, {"keepdim", node->arg("keepdim")}},
                                    part_name(*node, OpId::var_mean_correction)));
  SPLICE_ASSIGN_OR_RETURN(Value * sd, rw.insert_value(node, OpId::sqrt, {Arg{vm->output(0)}}, {},
                                                      part_name(*node, OpId::sqrt)));
  SPLICE_TRY(replace_outputs(rw, node, {sd, vm->output(1)}));
  return true;
}

// group_norm(input, num_groups, weight, bias, eps): native_group_norm over [N, C, HxW].
Result<bool> group_norm(Rewriter& rw, Node* node) {
  Value* input = tensor_arg(*node, "input");
  if (input == nullptr) return false;
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(input));
  SPLICE_ASSIGN_OR_RETURN(Size hxw, sizes.product(std::vector<Size>(dims.begin() + 2, dims.end())));
  SPLICE_TRY(rw.replace(node, OpId::native_group_norm,
                        {Arg{input}, node->arg("weight"), node->arg("bias"), to_arg(dims[0]),
                         to_arg(dims[1]), to_arg(hxw), node->arg("num_groups"), node->arg("eps")}));
  return true;
}

// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
// cudnn_enabled): with the input's statistics (nn.InstanceNorm*d's default) each (sample,
// channel) plane normalised over its own elements, which is native_group_norm with one channel a
// group (C groups); with running statistics the eval batch norm (decomposed in turn). Input
// statistics that would also update running ones (track_running_stats in training) are refused:
// the buffers would change.
Result<bool> instance_norm(Rewriter& rw, Node* node) {
  Value* input = tensor_arg(*node, "input");
  if (input == nullptr) return false;
  const bool use_input_stats = node->arg("use_input_stats").as<bool>();
  const bool running =
      tensor_arg(*node, "running_mean") != nullptr || tensor_arg(*node, "running_var") != nullptr;
  if (!use_input_stats) {
    SPLICE_TRY(rw.replace(node, OpId::batch_norm,
                          {Arg{input}, node->arg("weight"), node->arg("bias"),
                           node->arg("running_mean"), node->arg("running_var"), Arg{false},
                           node->arg("momentum"), node->arg("eps"), Arg{false}}));
    return true;
  }
  if (running)
    return make_error(ErrorKind::kUnsupportedOp,
                      "{}: instance_norm updating running statistics (training mode) is not "
                      "supported",
                      node_label(*node));
  // native_group_norm's group count is an int: the channels must be static.
  const auto channels = static_size(input->type(), 1);
  if (!channels)
    return make_error(ErrorKind::kUnsupportedOp, "{}: instance_norm over a symbolic channel count",
                      node_label(*node));
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(input));
  SPLICE_ASSIGN_OR_RETURN(Size hxw, sizes.product(std::vector<Size>(dims.begin() + 2, dims.end())));
  SPLICE_TRY(rw.replace(node, OpId::native_group_norm,
                        {Arg{input}, node->arg("weight"), node->arg("bias"), to_arg(dims[0]),
                         to_arg(dims[1]), to_arg(hxw), Arg{*channels}, node->arg("eps")}));
  return true;
}

// ---- zero, min.other, diff ----

// zero(self): zeros_like(self) (torch/_refs.zero).
Result<bool> zero(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  SPLICE_TRY(rw.replace(node, OpId::zeros_like, {Arg{self}}));
  return true;
}

// min.other(self, other): minimum(self, other), the same kernel under another name; max.other
// (XGLM's attention-mask clamp, torch.max(a, b)) maximum.
Result<bool> min_other(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  Value* other = tensor_arg(*node, "other");
  if (self == nullptr || other == nullptr) return false;
  SPLICE_TRY(rw.replace(node, node->op_id() == OpId::max_other ? OpId::maximum : OpId::minimum,
                        {Arg{self}, Arg{other}}));
  return true;
}

// diff(self, n, dim, prepend, append) as ATen's diff_helper: cat(prepend, self, append) along
// dim, then min(n, length) times x[1:] - x[:-1] along dim (logical_xor for bool, which has no
// subtraction). n == 0 is a copy of self, prepend and append ignored.
Result<bool> diff(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  const std::optional<int64_t> n = constant_int(node->arg("n"));
  const std::optional<int64_t> dim_arg = constant_int(node->arg("dim"));
  if (self == nullptr || !n || !dim_arg) return false;
  const std::optional<int64_t> dim = wrap_dim(*dim_arg, self->type().rank());
  if (!dim) return false;  // the shape rule has refused it already
  if (*n == 0) {
    SPLICE_TRY(rw.replace(node, OpId::clone, {Arg{self}}));
    return true;
  }
  std::vector<Value*> parts;
  if (Value* p = tensor_arg(*node, "prepend")) parts.push_back(p);
  parts.push_back(self);
  if (Value* a = tensor_arg(*node, "append")) parts.push_back(a);
  Value* x = self;
  if (parts.size() > 1) {
    SPLICE_ASSIGN_OR_RETURN(x, rw.insert_value(node, OpId::cat, {Arg{parts}, Arg{*dim}}, {},
                                               part_name(*node, OpId::cat)));
  }
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(Size length, sizes.dim(x, *dim));
  // ATen stops at length 0 when n exceeds the length, deciding it on the size.
  int64_t steps = *n;
  if (rw.env().decide(SymExpr::make(SymOp::kGe, {length.expr, *n})) != true) {
    if (rw.env().decide(SymExpr::make(SymOp::kLt, {length.expr, *n})) != true)
      return make_error(ErrorKind::kUnsupportedOp,
                        "{}: whether n={} exceeds the length {} along dim {} is only known when "
                        "the program runs",
                        node_label(*node), *n, length.expr.to_string(), *dim);
    steps = *length.expr.constant();
  }
  const bool is_bool = x->type().dtype == DType::kBool;
  for (int64_t i = 0; i < steps; ++i) {
    SPLICE_ASSIGN_OR_RETURN(Size out_len, sizes.sub(length, SizeBuilder::constant(i + 1)));
    SPLICE_ASSIGN_OR_RETURN(
        Value * hi, rw.insert_value(node, OpId::slice_Tensor, {Arg{x}, Arg{*dim}, Arg{int64_t{1}}},
                                    {}, part_name(*node, OpId::slice_Tensor)));
    SPLICE_ASSIGN_OR_RETURN(
        Value * lo, rw.insert_value(node, OpId::slice_Tensor,
                                    {Arg{x}, Arg{*dim}, Arg{int64_t{0}}, to_arg(out_len)}, {},
                                    part_name(*node, OpId::slice_Tensor)));
    const OpId op = is_bool ? OpId::logical_xor : OpId::sub_Tensor;
    SPLICE_ASSIGN_OR_RETURN(
        x, rw.insert_value(node, op, {Arg{hi}, Arg{lo}}, {}, part_name(*node, op)));
  }
  SPLICE_TRY(replace_outputs(rw, node, {x}));
  return true;
}

// square(self): pow(self, 2), as ATen defines it (so a bool self squares to int64, and the
// float case becomes x * x below). Nemotron's, Persimmon's and Arcee's squared-ReLU MLPs keep
// it in the training IR.
Result<bool> square(Rewriter& rw, Node* node) {
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) return false;
  SPLICE_TRY(rw.replace(node, OpId::pow_Tensor_Scalar, {Arg{self}, Arg{int64_t{2}}}));
  return true;
}

// pow(x, e) with the exponents ATen's pow kernels compute without pow (PowKernel.cpp on the
// CPU, PowKernel.cu on CUDA), so splice gives eager's bits on both and no pow call: 2 is x * x
// (exact in every floating dtype's compute type); 0.5, -0.5 and -1 are sqrt, rsqrt and
// reciprocal for float, double and bfloat16 (the CPU kernel leaves half to pow, whose -inf and
// -0 differ from sqrt's); 3 and -2 are x * x * x and 1 / (x * x) for float and double (in a
// reduced dtype they round where pow rounds once). Other exponents and dtypes keep the pow.
Result<bool> pow_special_exponent(Rewriter& rw, Node* node) {
  Value* x = tensor_arg(*node, "self");
  const std::optional<double> e = number(node->arg("exponent"));
  if (x == nullptr || !e || node->output() == nullptr) return false;
  const DType dtype = x->type().dtype;
  if (node->output()->type().dtype != dtype) return false;
  const bool full = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  const bool special_unary = full || dtype == DType::kBFloat16;
  if (!special_unary && dtype != DType::kFloat16) return false;  // integers: pow
  auto op = [&](OpId target, std::vector<Arg> args) {
    return rw.insert_value(node, target, std::move(args), {}, part_name(*node, target));
  };
  Value* result = nullptr;
  if (*e == 2.0 || ((*e == 3.0 || *e == -2.0) && full)) {
    SPLICE_ASSIGN_OR_RETURN(result, op(OpId::mul_Tensor, {Arg{x}, Arg{x}}));
    if (*e == 3.0) {
      SPLICE_ASSIGN_OR_RETURN(result, op(OpId::mul_Tensor, {Arg{result}, Arg{x}}));
    } else if (*e == -2.0) {
      SPLICE_ASSIGN_OR_RETURN(result, op(OpId::reciprocal, {Arg{result}}));
    }
  } else if (special_unary && (*e == 0.5 || *e == -0.5 || *e == -1.0)) {
    const OpId target = *e == 0.5 ? OpId::sqrt : *e == -0.5 ? OpId::rsqrt : OpId::reciprocal;
    SPLICE_ASSIGN_OR_RETURN(result, op(target, {Arg{x}}));
  } else {
    return false;
  }
  SPLICE_TRY(replace_outputs(rw, node, {result}));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::einsum, einsum},
    {OpId::baddbmm, baddbmm},
    {OpId::outer, outer},
    {OpId::linalg_vector_norm, vector_norm},
    {OpId::norm_Scalar, norm},
    {OpId::norm_ScalarOpt_dim, norm},
    {OpId::std_mean_correction, std_mean},
    {OpId::std_mean_dim, std_mean},
    {OpId::group_norm, group_norm},
    {OpId::instance_norm, instance_norm},
    {OpId::zero, zero},
    {OpId::min_other, min_other},
    {OpId::max_other, min_other},
    {OpId::diff, diff},
    {OpId::square, square},
    {OpId::pow_Tensor_Scalar, pow_special_exponent, /*partial=*/true},
};

}  // namespace

std::span<const Entry> math_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
