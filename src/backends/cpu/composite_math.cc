// The CompositeImplicit math ops that the training IR keeps: einsum (any equation: implicit or
// explicit output, ellipsis, repeated subscripts as diagonals, size-1 broadcasting; contracted
// pairwise left to right through permute + reshape + bmm, as ATen's sumproduct_pair does),
// baddbmm, outer, the vector norms (linalg_vector_norm, norm.Scalar, norm.ScalarOpt_dim),
// std_mean and group_norm / native_group_norm. Reductions accumulate in double and round once
// to the result dtype.
#include <cmath>
#include <limits>

#include "backends/cpu/args.h"
#include "tensor/convert.h"
#include "backends/cpu/composite.h"
#include "tensor/dtype_dispatch.h"
#include "backends/cpu/iter.h"
#include "backends/cpu/reduce_plan.h"
#include "support/checked_math.h"

namespace splice::cpu {

namespace {

// ---- einsum ---------------------------------------------------------------------------------

// Subscript ids: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (so an implicit output sorts upper case
// first, as PyTorch does); ellipsis dims get kLetters + k, right-aligned across operands.
constexpr int kLetters = 52;
constexpr int kEllipsisMark = -1;

int subscript_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}
char subscript_char(int id) {
  return id < 26 ? static_cast<char>('A' + id) : static_cast<char>('a' + id - 26);
}

// One term of the equation: subscript ids with kEllipsisMark where "..." stands.
Result<std::vector<int>> parse_term(std::string_view op, std::string_view term) {
  std::vector<int> ids;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      KCHECK(!ellipsis && term.substr(i, 3) == "...", ErrorKind::kBadInput,
             "einsum(): found '.' in '{}' that is not part of a single ellipsis ('...')", term);
      ellipsis = true;
      ids.push_back(kEllipsisMark);
      i += 2;
      continue;
    }
    const int id = subscript_id(term[i]);
    KCHECK(id >= 0, ErrorKind::kBadInput,
           "einsum(): invalid subscript given at index {} in '{}' (subscripts must be in [a-zA-Z])",
           i, term);
    ids.push_back(id);
  }
  return ids;
}

// An operand during contraction: a tensor and one distinct subscript per dim.
struct Term {
  Tensor t;
  std::vector<int> ids;
};

bool contains(const std::vector<int>& v, int id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

// Sums `term` over the subscripts for which drop(id) holds.
template <typename Pred>
Result<Term> sum_out(std::string_view op, Term term, Pred&& drop) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < term.ids.size(); ++d) {
    if (drop(term.ids[d]))
      dims.push_back(static_cast<int64_t>(d));
    else
      kept.push_back(term.ids[d]);
  }
  if (dims.empty()) return term;
  SPLICE_ASSIGN_OR_RETURN(
      Tensor t, run_kernel1(op, "aten.sum.dim_IntList", {term.t, dims, false, std::monostate{}}));
  return Term{t, kept};
}

// The size of each subscript across operands: equal, or 1 where it broadcasts.
using SizeMap = std::vector<int64_t>;

int64_t product(const std::vector<int>& ids, const SizeMap& sizes) {
  int64_t p = 1;
  for (int id : ids) p *= sizes[id];  // sizes come from real tensors: no overflow
  return p;
}

// `t` (dims labelled `ids`) permuted to `order` and broadcast to the subscripts' full sizes.
Result<Tensor> arrange(std::string_view op, const Term& term, const std::vector<int>& order,
                       const SizeMap& sizes) {
  std::vector<int64_t> perm;
  Shape full;
  for (int id : order) {
    perm.push_back(std::find(term.ids.begin(), term.ids.end(), id) - term.ids.begin());
    full.push_back(sizes[id]);
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor p, run_kernel1(op, "aten.permute.default", {term.t, perm}));
  return run_kernel1(op, "aten.expand.default", {p, full, false});
}

// a and b contracted over their shared subscripts that are not in `keep`; shared subscripts in
// `keep` are batch dims. The result's dims are batch, then a's own, then b's own subscripts.
Result<Term> contract(std::string_view op, const Term& a, const Term& b,
                      const std::vector<int>& keep, const SizeMap& sizes) {
  std::vector<int> batch, summed, a_own, b_own;
  for (int id : a.ids) {
    if (contains(b.ids, id))
      (contains(keep, id) ? batch : summed).push_back(id);
    else
      a_own.push_back(id);
  }
  for (int id : b.ids)
    if (!contains(a.ids, id)) b_own.push_back(id);
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), a_own.begin(), a_own.end());
  a_order.insert(a_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), b_own.begin(), b_own.end());
  SPLICE_ASSIGN_OR_RETURN(Tensor ta, arrange(op, a, a_order, sizes));
  SPLICE_ASSIGN_OR_RETURN(Tensor tb, arrange(op, b, b_order, sizes));
  const int64_t nb = product(batch, sizes), m = product(a_own, sizes);
  const int64_t k = product(summed, sizes), n = product(b_own, sizes);
  SPLICE_ASSIGN_OR_RETURN(Tensor a3,
                          run_kernel1(op, "aten.reshape.default", {ta, Shape{nb, m, k}}));
  SPLICE_ASSIGN_OR_RETURN(Tensor b3,
                          run_kernel1(op, "aten.reshape.default", {tb, Shape{nb, k, n}}));
  SPLICE_ASSIGN_OR_RETURN(Tensor c, run_kernel1(op, "aten.bmm.default", {a3, b3}));
  std::vector<int> ids = batch;
  ids.insert(ids.end(), a_own.begin(), a_own.end());
  ids.insert(ids.end(), b_own.begin(), b_own.end());
  Shape out_sizes;
  for (int id : ids) out_sizes.push_back(sizes[id]);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, run_kernel1(op, "aten.reshape.default", {c, out_sizes}));
  return Term{out, ids};
}

// einsum(str equation, Tensor[] tensors, *, int[]? path=None); path (an optimisation hint) is
// ignored: operands are contracted left to right.
Result<Outputs> einsum(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(auto equation_opt, a.opt_string(0));
  KCHECK(equation_opt.has_value(), ErrorKind::kBadInput, "the equation must not be None");
  SPLICE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, a.tensor_list(1));
  KCHECK(!tensors.empty(), ErrorKind::kBadInput, "einsum(): must provide at least one operand");
  std::string eq;
  for (char c : *equation_opt)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string_view lhs = std::string_view(eq).substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    SPLICE_ASSIGN_OR_RETURN(auto ids, parse_term(op, lhs.substr(start, comma - start)));
    terms.push_back(std::move(ids));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  KCHECK(terms.size() == tensors.size(), ErrorKind::kBadInput,
         "einsum(): the equation '{}' has {} operands, but {} tensors were given", eq, terms.size(),
         tensors.size());

  // Expand each ellipsis into right-aligned ellipsis subscripts.
  int64_t ellipsis_dims = 0;
  std::vector<int64_t> operand_ellipsis(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const bool has = contains(terms[i], kEllipsisMark);
    const int64_t letters = static_cast<int64_t>(terms[i].size()) - (has ? 1 : 0);
    const int64_t rank = tensors[i].dim();
    KCHECK(has ? letters <= rank : letters == rank, ErrorKind::kShapeMismatch,
           "einsum(): the number of subscripts in the equation ({}) does not match the number "
           "of dimensions ({}) for operand {}{}",
           letters, rank, i, has ? "" : " and no ellipsis was given");
    operand_ellipsis[i] = has ? rank - letters : 0;
    ellipsis_dims = std::max(ellipsis_dims, operand_ellipsis[i]);
  }
  std::vector<int> count(kLetters + ellipsis_dims, 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int> ids;
    for (int id : terms[i]) {
      if (id != kEllipsisMark) {
        ids.push_back(id);
        continue;
      }
      for (int64_t k = ellipsis_dims - operand_ellipsis[i]; k < ellipsis_dims; ++k)
        ids.push_back(kLetters + static_cast<int>(k));
    }
    for (int id : ids) ++count[id];
    terms[i] = std::move(ids);
  }

  // The output subscripts: explicit, or the ellipsis then every letter used exactly once.
  std::vector<int> out_ids;
  if (arrow != std::string::npos) {
    SPLICE_ASSIGN_OR_RETURN(auto rhs, parse_term(op, std::string_view(eq).substr(arrow + 2)));
    for (int id : rhs) {
      if (id == kEllipsisMark) {
        for (int64_t k = 0; k < ellipsis_dims; ++k)
          out_ids.push_back(kLetters + static_cast<int>(k));
        continue;
      }
      KCHECK(count[id] > 0, ErrorKind::kBadInput,
             "einsum(): output subscript {} does not appear in the equation for any input operand",
             subscript_char(id));
      KCHECK(!contains(out_ids, id), ErrorKind::kBadInput,
             "einsum(): output subscript {} appears more than once in the output",
             subscript_char(id));
      out_ids.push_back(id);
    }
  } else {
    for (int64_t k = 0; k < ellipsis_dims; ++k) out_ids.push_back(kLetters + static_cast<int>(k));
    for (int id = 0; id < kLetters; ++id)
      if (count[id] == 1) out_ids.push_back(id);
  }

  // Repeated subscripts within an operand become diagonals; then every subscript's size.
  std::vector<Term> ops;
  SizeMap sizes(count.size(), 1);
  std::vector<bool> sized(count.size(), false);
  for (size_t i = 0; i < terms.size(); ++i) {
    Term term{tensors[i], terms[i]};
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < term.ids.size() && !again; ++p) {
        for (size_t q = p + 1; q < term.ids.size() && !again; ++q) {
          if (term.ids[p] != term.ids[q]) continue;
          KCHECK(term.t.size(p) == term.t.size(q), ErrorKind::kShapeMismatch,
                 "einsum(): subscript {} is repeated for operand {} but the sizes don't match, "
                 "{} != {}",
                 subscript_char(term.ids[p]), i, term.t.size(p), term.t.size(q));
          const int id = term.ids[p];
          SPLICE_ASSIGN_OR_RETURN(term.t, diagonal_view(op, term.t, 0, p, q));
          term.ids.erase(term.ids.begin() + q);
          term.ids.erase(term.ids.begin() + p);
          term.ids.push_back(id);
          again = true;
        }
      }
    }
    for (size_t d = 0; d < term.ids.size(); ++d) {
      const int id = term.ids[d];
      const int64_t s = term.t.size(d);
      if (s == 1) continue;
      KCHECK(!sized[id] || sizes[id] == s, ErrorKind::kShapeMismatch,
             "einsum(): subscript {} has size {} for operand {} which does not broadcast with "
             "previously seen size {}",
             id < kLetters ? std::string(1, subscript_char(id)) : std::string("..."), s, i,
             sizes[id]);
      sizes[id] = s;
      sized[id] = true;
    }
    ops.push_back(std::move(term));
  }

  // Contract left to right, summing each subscript out as soon as nothing later needs it.
  auto needed_after = [&](size_t i) {
    std::vector<int> keep = out_ids;
    for (size_t j = i + 1; j < ops.size(); ++j)
      keep.insert(keep.end(), ops[j].ids.begin(), ops[j].ids.end());
    return keep;
  };
  Term acc = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    const std::vector<int> keep = needed_after(i);
    const Term& b = ops[i];
    SPLICE_ASSIGN_OR_RETURN(
        acc, sum_out(op, acc, [&](int id) { return !contains(keep, id) && !contains(b.ids, id); }));
    SPLICE_ASSIGN_OR_RETURN(Term tb, sum_out(op, b, [&](int id) {
                              return !contains(keep, id) && !contains(acc.ids, id);
                            }));
    SPLICE_ASSIGN_OR_RETURN(acc, contract(op, acc, tb, keep, sizes));
  }
  SPLICE_ASSIGN_OR_RETURN(acc, sum_out(op, acc, [&](int id) { return !contains(out_ids, id); }));
  std::vector<int64_t> perm;
  for (int id : out_ids)
    perm.push_back(std::find(acc.ids.begin(), acc.ids.end(), id) - acc.ids.begin());
  SPLICE_ASSIGN_OR_RETURN(Tensor out, run_kernel1(op, "aten.permute.default", {acc.t, perm}));
  // A new contiguous tensor, never a view of an operand ('ij->ji' is a permuted input).
  bool shares = false;
  for (const Tensor& t : tensors) shares = shares || t.storage() == out.storage();
  if (shares || !out.is_contiguous()) out = contiguous_copy(out);
  return Outputs{out};
}

// ---- baddbmm, outer -------------------------------------------------------------------------

// baddbmm(self, batch1, batch2, *, beta=1, alpha=1) = beta * self + alpha * (batch1 @ batch2),
// self broadcast to the product's shape; beta == 0 ignores self (NaN included), as PyTorch.
Result<Outputs> baddbmm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor b1, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor b2, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Scalar beta, a.scalar_or(3, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(4, Scalar(int64_t{1})));
  KCHECK(self.dtype() == b1.dtype(), ErrorKind::kShapeMismatch,
         "expected self and batch1 to have the same dtype, but got {} != {}",
         dtype_name(self.dtype()), dtype_name(b1.dtype()));
  SPLICE_ASSIGN_OR_RETURN(Tensor prod, run_kernel1(op, "aten.bmm.default", {b1, b2}));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, self.sizes(), prod.sizes()));
  KCHECK(shape == prod.sizes(), ErrorKind::kShapeMismatch,
         "self of shape {} does not broadcast to the product's shape {}",
         shape_string(self.sizes()), shape_string(prod.sizes()));
  Tensor out = empty(prod.dtype(), prod.sizes());
  const Tensor s = broadcast_to(self, prod.sizes());
  bool ok = true;
  dispatch_dtype(prod.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      const double be = beta.to_double(), al = alpha.to_double();
      binary_loop<T, T, T>(out, s, prod, [&](T x, T p) {
        const double r = al * static_cast<double>(to_opmath(p));
        return cast_value<T>(be == 0.0 ? r : be * static_cast<double>(to_opmath(x)) + r);
      });
    } else if constexpr (is_int_v<T>) {
      // Integer scalars wrap like int64 arithmetic; a float beta/alpha is truncated first.
      const int64_t be = beta.is_double() ? static_cast<int64_t>(beta.to_double()) : beta.to_int();
      const int64_t al =
          alpha.is_double() ? static_cast<int64_t>(alpha.to_double()) : alpha.to_int();
      binary_loop<T, T, T>(out, s, prod, [&](T x, T p) {
        const uint64_t r = static_cast<uint64_t>(al) * static_cast<uint64_t>(int64_t{p});
        if (be == 0) return static_cast<T>(static_cast<int64_t>(r));
        return static_cast<T>(static_cast<int64_t>(
            static_cast<uint64_t>(be) * static_cast<uint64_t>(int64_t{x}) + r));
      });
    } else {
      ok = false;
    }
  });
  KCHECK(ok, ErrorKind::kBadInput, "not implemented for {} tensors", dtype_name(prod.dtype()));
  return Outputs{out};
}

// outer(self, vec2): self[:, None] * vec2, with mul's type promotion.
Result<Outputs> outer(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor vec2, a.tensor(1));
  KCHECK(self.dim() == 1, ErrorKind::kShapeMismatch,
         "outer: expected 1-D argument self, but got {}-D", self.dim());
  KCHECK(vec2.dim() == 1, ErrorKind::kShapeMismatch,
         "outer: expected 1-D argument vec2, but got {}-D", vec2.dim());
  const Tensor column = self.view_as({self.size(0), 1}, {self.stride(0), 1}, self.offset());
  return run_kernel(op, "aten.mul.Tensor", {column, vec2});
}

// ---- norms, std_mean ------------------------------------------------------------------------

// The ord-norm of |x| over `dims`: max (inf), min (-inf), count of non-zeros (0), sum (1),
// sqrt of the sum of squares (2), else (sum |x|^ord)^(1/ord); NaN propagates through max/min.
Result<Outputs> vector_norm_impl(std::string_view op, const Tensor& self, double ord,
                                 const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                                 std::optional<DType> dtype) {
  KCHECK(is_floating(self.dtype()), ErrorKind::kBadInput,
         "expected a floating point tensor as input, got {}", dtype_name(self.dtype()));
  KCHECK(!dtype || is_floating(*dtype), ErrorKind::kBadInput,
         "dtype should be floating point, got {}", dtype_name(*dtype));
  const Tensor in = to_dtype(self, dtype.value_or(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduce(op, in, dims, keepdim));
  KCHECK(plan.count > 0 || (ord >= 0 && !std::isinf(ord)), ErrorKind::kShapeMismatch,
         "cannot compute the {} norm on an empty tensor because the operation does not have an "
         "identity",
         ord);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, in.dtype(), plan.out_shape));
  const double init = ord == -std::numeric_limits<double>::infinity()
                          ? std::numeric_limits<double>::infinity()
                          : 0.0;
  std::vector<double> acc(out.numel(), init);
  const std::array<const int64_t*, 2> strides = {in.strides().data(), plan.acc_strides.data()};
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      const T* p = in.data<T>();
      for_each_offset<2>(in.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        const double v = std::fabs(static_cast<double>(to_opmath(p[o[0]])));
        double& r = acc[o[1]];
        if (std::isinf(ord)) {
          if (std::isnan(v) || (ord > 0 ? v > r : v < r)) r = v;
        } else if (ord == 0.0) {
          r += v != 0.0 ? 1.0 : 0.0;
        } else if (ord == 1.0) {
          r += v;
        } else if (ord == 2.0) {
          r += v * v;
        } else {
          r += std::pow(v, ord);
        }
      });
      for (size_t i = 0; i < acc.size(); ++i) {
        double r = acc[i];
        if (ord == 2.0) {
          r = std::sqrt(r);
        } else if (!std::isinf(ord) && ord != 0.0 && ord != 1.0) {
          r = std::pow(r, 1.0 / ord);
        }
        out.data<T>()[i] = cast_value<T>(r);
      }
    }
  });
  return Outputs{out};
}

// linalg_vector_norm(self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, dtype=None)
Result<Outputs> linalg_vector_norm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar ord, a.scalar_or(1, Scalar(int64_t{2})));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.opt_int_list(2));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(3, false));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(4));
  return vector_norm_impl(op, self, ord.to_double(), dims, keepdim, dtype);
}

// norm.ScalarOpt_dim(self, Scalar? p, int[1] dim, bool keepdim=False) (p None is 2) and
// norm.Scalar(self, Scalar p=2) (every dim).
template <bool kDims>
Result<Outputs> norm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar p, a.scalar_or(1, Scalar(int64_t{2})));
  std::optional<std::vector<int64_t>> dims;
  bool keepdim = false;
  if constexpr (kDims) {
    SPLICE_ASSIGN_OR_RETURN(dims, a.opt_int_list(2));
    SPLICE_ASSIGN_OR_RETURN(keepdim, a.boolean_or(3, false));
  }
  return vector_norm_impl(op, self, p.to_double(), dims, keepdim, std::nullopt);
}

// std_mean.correction(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)
// and std_mean.dim(self, int[1]? dim, bool unbiased=True, bool keepdim=False): (std, mean)
// from the std and var_mean kernels (each rounds once from double).
template <bool kUnbiasedForm>
Result<Outputs> std_mean(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  const KernelArg dims = a.is_none(1) ? KernelArg{std::monostate{}} : args[1];
  KernelArg correction = std::monostate{};
  if constexpr (kUnbiasedForm) {
    SPLICE_ASSIGN_OR_RETURN(bool unbiased, a.boolean_or(2, true));
    correction = int64_t{unbiased ? 1 : 0};
  } else {
    if (!a.is_none(2)) correction = args[2];
  }
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(3, false));
  SPLICE_ASSIGN_OR_RETURN(
      Tensor sd, run_kernel1(op, "aten.std.correction", {self, dims, correction, keepdim}));
  SPLICE_ASSIGN_OR_RETURN(Outputs var_mean, run_kernel(op, "aten.var_mean.correction",
                                                       {self, dims, correction, keepdim}));
  return Outputs{sd, var_mean.at(1)};
}

// ---- group_norm -----------------------------------------------------------------------------

// (out, mean, rstd) of group norm over input viewed as [N, C, HxW] with `groups` groups of
// C / groups channels; mean and rstd are [N, groups]. Statistics in double (biased variance).
Result<Outputs> group_norm_impl(std::string_view op, const Tensor& input,
                                const std::optional<Tensor>& weight,
                                const std::optional<Tensor>& bias, int64_t n, int64_t c,
                                int64_t hxw, int64_t groups, double eps) {
  KCHECK(is_floating(input.dtype()), ErrorKind::kBadInput,
         "expected a floating point input, got {}", dtype_name(input.dtype()));
  KCHECK(groups > 0 && c % groups == 0, ErrorKind::kShapeMismatch,
         "expected number of channels in input to be divisible by num_groups, but got input of "
         "shape {} and num_groups={}",
         shape_string(input.sizes()), groups);
  const auto nc = checked_mul(n, c);
  const auto total = nc ? checked_mul(*nc, hxw) : std::nullopt;
  KCHECK(n >= 0 && c >= 0 && hxw >= 0 && total && *total == input.numel(),
         ErrorKind::kShapeMismatch, "N={} C={} HxW={} do not match an input of shape {}", n, c, hxw,
         shape_string(input.sizes()));
  for (const auto* p : {&weight, &bias}) {
    KCHECK(!*p || (*p)->numel() == c, ErrorKind::kShapeMismatch,
           "expected weight and bias to have {} elements, got shape {}", c,
           shape_string((*p)->sizes()));
  }
  const Tensor x = input.is_contiguous() ? input : contiguous_copy(input);
  const Tensor w = weight ? cast_copy(*weight, DType::kFloat64) : Tensor();
  const Tensor b = bias ? cast_copy(*bias, DType::kFloat64) : Tensor();
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, input.dtype(), input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor mean_t, new_tensor(op, input.dtype(), {n, groups}));
  SPLICE_ASSIGN_OR_RETURN(Tensor rstd_t, new_tensor(op, input.dtype(), {n, groups}));
  const int64_t cg = c / groups;
  const int64_t count = cg * hxw;
  dispatch_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      const T* px = x.data<T>();
      T* po = out.data<T>();
      const double* pw = weight ? w.data<double>() : nullptr;
      const double* pb = bias ? b.data<double>() : nullptr;
      for (int64_t i = 0; i < n * groups; ++i) {
        const int64_t base = i * count;  // groups are contiguous runs of cg * hxw elements
        double sum = 0.0;
        for (int64_t j = 0; j < count; ++j) sum += static_cast<double>(to_opmath(px[base + j]));
        const double mean = sum / static_cast<double>(count);
        double m2 = 0.0;
        for (int64_t j = 0; j < count; ++j) {
          const double d = static_cast<double>(to_opmath(px[base + j])) - mean;
          m2 += d * d;
        }
        const double rstd = 1.0 / std::sqrt(m2 / static_cast<double>(count) + eps);
        mean_t.data<T>()[i] = cast_value<T>(mean);
        rstd_t.data<T>()[i] = cast_value<T>(rstd);
        const int64_t c0 = (i % groups) * cg;
        for (int64_t j = 0; j < count; ++j) {
          const int64_t ch = c0 + j / hxw;
          double y = (static_cast<double>(to_opmath(px[base + j])) - mean) * rstd;
          if (pw) y *= pw[ch];
          if (pb) y += pb[ch];
          po[base + j] = cast_value<T>(y);
        }
      }
    }
  });
  return Outputs{out, mean_t, rstd_t};
}

Result<std::optional<Tensor>> opt_tensor(const Args& a, size_t i) {
  if (a.is_none(i)) return std::optional<Tensor>();
  SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(i));
  return std::optional<Tensor>(t);
}

// group_norm(input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05,
// bool cudnn_enabled=True): input is [N, C, *].
Result<Outputs> group_norm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto weight, opt_tensor(a, 2));
  SPLICE_ASSIGN_OR_RETURN(auto bias, opt_tensor(a, 3));
  SPLICE_ASSIGN_OR_RETURN(Scalar eps, a.scalar_or(4, Scalar(1e-5)));
  KCHECK(input.dim() >= 2, ErrorKind::kShapeMismatch,
         "expected at least 2 dimensions for input tensor but received {}", input.dim());
  int64_t hxw = 1;
  for (int64_t d = 2; d < input.dim(); ++d) hxw *= input.size(d);  // <= numel: no overflow
  SPLICE_ASSIGN_OR_RETURN(
      Outputs all, group_norm_impl(op, input, weight, bias, input.size(0), input.size(1), hxw,
                                   groups, eps.to_double()));
  return Outputs{all[0]};
}

// native_group_norm(input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW,
// int group, float eps) -> (out, mean, rstd)
Result<Outputs> native_group_norm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto weight, opt_tensor(a, 1));
  SPLICE_ASSIGN_OR_RETURN(auto bias, opt_tensor(a, 2));
  SPLICE_ASSIGN_OR_RETURN(int64_t n, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(int64_t c, a.integer(4));
  SPLICE_ASSIGN_OR_RETURN(int64_t hxw, a.integer(5));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer(6));
  SPLICE_ASSIGN_OR_RETURN(Scalar eps, a.scalar(7));
  return group_norm_impl(op, input, weight, bias, n, c, hxw, groups, eps.to_double());
}

}  // namespace

std::span<const KernelEntry> composite_math_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::einsum, einsum>(),
      entry<OpId::baddbmm, baddbmm>(),
      entry<OpId::outer, outer>(),
      entry<OpId::linalg_vector_norm, linalg_vector_norm>(),
      entry<OpId::norm_ScalarOpt_dim, norm<true>>(),
      entry<OpId::norm_Scalar, norm<false>>(),
      entry<OpId::std_mean_correction, std_mean<false>>(),
      entry<OpId::std_mean_dim, std_mean<true>>(),
      entry<OpId::group_norm, group_norm>(),
      entry<OpId::native_group_norm, native_group_norm>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
