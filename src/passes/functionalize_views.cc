// The view ops as the functionalize pass sees them (functionalize.h): whether an op's output
// aliases its input (eager's rule for the ops that view only sometimes: reshape and flatten
// when ATen's computeStride finds strides for the new shape, contiguous when the input is
// already contiguous, `to`/type_as without a dtype change or copy=True, dropout in eval mode),
// the strides of each view (so the next sometimes-view decides as eager does), a view
// replayed on another base, and each view's functional inverse, as torch's FunctionalInverses
// write them: slice_scatter for slice/narrow/split/chunk, select_scatter for select/unbind,
// the inverse transpose or permute (movedim/moveaxis too: a permute moving the dims back),
// squeeze for unsqueeze and back, diagonal_scatter for diagonal, a view to the base's sizes for
// the reshapes, the value itself for aliases. A write into an expanded view (several elements on
// one memory location) is eager's error.
#include <algorithm>
#include <numeric>

#include "passes/functionalize.h"

namespace splice::passes::func {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

bool provably_one(ir::ShapeEnv& env, const SymExpr& s) { return env.provably_equal(s, 1); }

// ATen's computeStride: strides that let a tensor of `old_sizes`/`old_strides` be viewed as
// `new_sizes`, or nullopt when only a copy can — or, with symbolic sizes, when a comparison
// computeStride makes cannot be decided from the shape environment (`decided` then false).
std::optional<std::vector<SymExpr>> compute_stride(ir::ShapeEnv& env,
                                                   const std::vector<SymExpr>& os,
                                                   const std::vector<SymExpr>& ost,
                                                   const std::vector<SymExpr>& ns, bool& decided) {
  decided = true;
  auto holds = [&](SymOp op, const SymExpr& a, const SymExpr& b) -> std::optional<bool> {
    std::optional<bool> r = env.decide(SymExpr::make(op, {a, b}));
    if (!r) decided = false;
    return r;
  };
  std::vector<SymExpr> out(ns.size(), SymExpr(1));
  if (os.empty()) return out;
  SymExpr numel(1);
  for (const SymExpr& s : os) numel = env.simplify(numel * s);
  const std::optional<bool> empty = holds(SymOp::kEq, numel, SymExpr(0));
  if (!empty) return std::nullopt;
  if (*empty) {
    bool same = os.size() == ns.size();
    for (size_t d = 0; same && d < os.size(); ++d) same = env.provably_equal(os[d], ns[d]);
    if (same) return ost;
    // Every stride is as good as another for no elements: contiguous ones.
    SymExpr st(1);
    for (size_t d = ns.size(); d-- > 0;) {
      out[d] = st;
      st = env.simplify(st * SymExpr::make(SymOp::kMax, {ns[d], SymExpr(1)}));
    }
    return out;
  }
  int64_t view_d = static_cast<int64_t>(ns.size()) - 1;
  SymExpr chunk_base_stride = ost.back();
  SymExpr tensor_numel(1), view_numel(1);
  for (int64_t tensor_d = static_cast<int64_t>(os.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel = env.simplify(tensor_numel * os[tensor_d]);
    bool chunk_ends = tensor_d == 0;
    if (!chunk_ends) {
      const std::optional<bool> one = holds(SymOp::kEq, os[tensor_d - 1], SymExpr(1));
      if (!one) return std::nullopt;
      if (!*one) {
        const std::optional<bool> contiguous_with_next =
            holds(SymOp::kEq, ost[tensor_d - 1], env.simplify(tensor_numel * chunk_base_stride));
        if (!contiguous_with_next) return std::nullopt;
        chunk_ends = !*contiguous_with_next;
      }
    }
    if (!chunk_ends) continue;
    while (view_d >= 0) {
      const std::optional<bool> less = holds(SymOp::kLt, view_numel, tensor_numel);
      if (!less) return std::nullopt;
      bool take = *less;
      if (!take) {
        const std::optional<bool> one = holds(SymOp::kEq, ns[view_d], SymExpr(1));
        if (!one) return std::nullopt;
        take = *one;
      }
      if (!take) break;
      out[view_d] = env.simplify(view_numel * chunk_base_stride);
      view_numel = env.simplify(view_numel * ns[view_d]);
      --view_d;
    }
    const std::optional<bool> fits = holds(SymOp::kEq, view_numel, tensor_numel);
    if (!fits || !*fits) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = ost[tensor_d - 1];
      tensor_numel = SymExpr(1);
      view_numel = SymExpr(1);
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

bool is_contiguous(ir::ShapeEnv& env, const std::vector<SymExpr>& sizes,
                   const std::vector<SymExpr>& strides) {
  SymExpr expected(1);
  for (size_t d = sizes.size(); d-- > 0;) {
    if (provably_one(env, sizes[d])) continue;
    if (!env.provably_equal(strides[d], expected)) return false;
    expected = env.simplify(expected * sizes[d]);
  }
  return true;
}

int64_t wrap(int64_t dim, int64_t rank) {
  return wrap_dim(dim, std::max<int64_t>(rank, 1)).value_or(0);
}

int64_t int_arg(const Node& n, std::string_view name, int64_t fallback = 0) {
  return constant_int(n.arg(name)).value_or(fallback);
}

std::vector<int64_t> int_list(const Arg& a) {
  std::vector<int64_t> out;
  if (a.is<std::vector<ir::SymIntArg>>())
    for (const ir::SymIntArg& s : a.as<std::vector<ir::SymIntArg>>())
      out.push_back(std::holds_alternative<int64_t>(s) ? std::get<int64_t>(s) : 0);
  return out;
}

// The strides of a reshape-like view to the output's sizes: computeStride, or nullopt.
// `decided` is false when symbolic sizes left computeStride's choice to the run.
Strides reshaped(ir::ShapeEnv& env, const ir::TensorType& in_type, const Strides& in,
                 const ir::TensorType& out_type, bool* decided = nullptr) {
  if (decided) *decided = in.has_value();
  if (!in) return std::nullopt;
  if (is_contiguous(env, in_type.sizes, *in)) return contiguous_strides(out_type);
  bool d = true;
  Strides s = compute_stride(env, in_type.sizes, *in, out_type.sizes, d);
  if (decided) *decided = d;
  return s;
}

// The kept dims of a squeeze: every dim but the size-1 ones it removes.
std::vector<int64_t> squeezed_dims(ir::ShapeEnv& env, const Node& n) {
  const Value* self = view_base(n);
  const int64_t rank = self->type().rank();
  std::vector<int64_t> dims;
  if (n.op_id() == OpId::squeeze) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  } else if (n.op_id() == OpId::squeeze_dim) {
    dims.push_back(wrap(int_arg(n, "dim"), rank));
  } else {
    for (int64_t d : int_list(n.arg("dim"))) dims.push_back(wrap(d, rank));
  }
  std::vector<int64_t> removed;
  for (int64_t d : dims)
    if (rank > 0 && provably_one(env, self->type().sizes[d])) removed.push_back(d);
  return removed;
}

}  // namespace

// The permutation a movedim/moveaxis view makes (output dim d is input dim perm[d]), as ATen's
// movedim: the source dims at the destinations, the other dims in order in the places left.
std::vector<int64_t> movedim_perm(const Node& n, int64_t rank) {
  auto ints = [](const Arg& a) {
    return a.is<int64_t>() ? std::vector<int64_t>{a.as<int64_t>()} : int_list(a);
  };
  const std::vector<int64_t> src = ints(n.arg("source"));
  const std::vector<int64_t> dst = ints(n.arg("destination"));
  std::vector<int64_t> perm(rank, -1);
  std::vector<bool> used(rank, false);
  for (size_t i = 0; i < src.size() && i < dst.size(); ++i) {
    const int64_t s = wrap(src[i], rank);
    perm[wrap(dst[i], rank)] = s;
    used[s] = true;
  }
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] != -1) continue;
    while (next < rank && used[next]) ++next;
    perm[d] = next++;
  }
  return perm;
}

std::vector<SymExpr> contiguous_strides(const ir::TensorType& type) {
  std::vector<SymExpr> out(type.sizes.size(), SymExpr(1));
  SymExpr st(1);
  for (size_t d = type.sizes.size(); d-- > 0;) {
    out[d] = st;
    st = st * type.sizes[d];
  }
  return out;
}

bool overlaps(ir::ShapeEnv& env, const std::vector<SymExpr>& sizes, const Strides& strides) {
  if (!strides) return false;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (env.provably_equal((*strides)[d], 0) &&
        env.decide(SymExpr::make(SymOp::kGt, {sizes[d], 1})) == true)
      return true;
  return false;
}

Value* view_base(const Node& node) {
  for (const char* name : {"self", "input"})
    if (node.op().find_arg(name)) return tensor_arg(node, name);
  return nullptr;
}

Result<ViewOutcome> classify_view(ir::ShapeEnv& env, const Node& node, const Strides& in) {
  ViewOutcome v;
  const Value* self = view_base(node);
  if (self == nullptr || !self->is_tensor()) return v;
  const ir::TensorType& t = self->type();
  const int64_t rank = t.rank();
  auto out_type = [&](size_t i) -> const ir::TensorType& { return node.output(i)->type(); };
  auto all = [&](Strides s) {
    v.aliases = true;
    v.strides.assign(node.outputs().size(), s);
    return v;
  };
  auto pick = [&](const std::vector<int64_t>& order) -> Strides {
    if (!in) return std::nullopt;
    std::vector<SymExpr> s;
    for (int64_t d : order) s.push_back((*in)[d]);
    return s;
  };
  switch (node.op_id()) {
    case OpId::alias:
    case OpId::detach:
    case OpId::detach_:
      return all(in);
    case OpId::dropout: {
      // Eval mode (or p == 0) returns the input itself.
      const Arg& train = node.arg("train");
      const bool training = !train.is<bool>() || train.as<bool>();
      const Arg& p = node.arg("p");
      const bool zero = p.is<double>() && p.as<double>() == 0.0;
      if (training && !zero) return v;
      return all(in);
    }
    case OpId::to_dtype:
    case OpId::to_dtype_layout:
    case OpId::to_device:
    case OpId::to_other:
    case OpId::type_as: {
      // A view when nothing changes: same dtype, no copy=True (device and layout are splice's
      // one device and strided).
      const bool copy =
          node.op().find_arg("copy") && node.arg("copy").is<bool>() && node.arg("copy").as<bool>();
      if (copy || out_type(0).dtype != t.dtype) return v;
      return all(in);
    }
    case OpId::contiguous:
      if (!in || !is_contiguous(env, t.sizes, *in)) return v;
      return all(in);
    case OpId::view:
    case OpId::_unsafe_view:
    case OpId::view_as:
      return all(reshaped(env, t, in, out_type(0)));
    case OpId::reshape:
    case OpId::reshape_as:
    case OpId::flatten_using_ints:
    case OpId::unflatten_int: {
      bool decided = true;
      Strides s = reshaped(env, t, in, out_type(0), &decided);
      if (!s && !decided) {
        // Unknown strides, or symbolic sizes on a non-contiguous input: eager decides on values
        // splice lacks.
        all(std::nullopt);
        v.undecided = true;
        return v;
      }
      if (!s) return v;  // a copy, as eager's reshape makes
      return all(s);
    }
    case OpId::slice_Tensor:
    case OpId::narrow: {
      const int64_t d = wrap(int_arg(node, "dim"), rank);
      if (!in) return all(std::nullopt);
      std::vector<SymExpr> s = *in;
      if (node.op_id() == OpId::slice_Tensor) s[d] = s[d] * int_arg(node, "step", 1);
      return all(s);
    }
    case OpId::split_Tensor:
    case OpId::split_with_sizes:
    case OpId::chunk:
      return all(in);  // every piece keeps the strides, only sizes change
    case OpId::select_int:
    case OpId::unbind_int: {
      const int64_t d = wrap(int_arg(node, "dim"), rank);
      std::vector<int64_t> order;
      for (int64_t i = 0; i < rank; ++i)
        if (i != d) order.push_back(i);
      return all(pick(order));
    }
    case OpId::transpose_int:
    case OpId::swapaxes:
    case OpId::swapdims:
    case OpId::t: {
      std::vector<int64_t> order(rank);
      std::iota(order.begin(), order.end(), 0);
      if (rank >= 2) {
        int64_t a = 0, b = 1;
        if (node.op_id() == OpId::transpose_int || node.op_id() == OpId::swapdims) {
          a = wrap(int_arg(node, "dim0"), rank);
          b = wrap(int_arg(node, "dim1"), rank);
        } else if (node.op_id() == OpId::swapaxes) {
          a = wrap(int_arg(node, "axis0"), rank);
          b = wrap(int_arg(node, "axis1"), rank);
        }
        std::swap(order[a], order[b]);
      }
      return all(pick(order));
    }
    case OpId::permute: {
      std::vector<int64_t> order;
      for (int64_t d : int_list(node.arg("dims"))) order.push_back(wrap(d, rank));
      return all(pick(order));
    }
    case OpId::unsqueeze: {
      const int64_t d = wrap(int_arg(node, "dim"), rank + 1);
      if (!in) return all(std::nullopt);
      std::vector<SymExpr> s = *in;
      SymExpr st = d < rank ? (*in)[d] * t.sizes[d] : SymExpr(1);
      s.insert(s.begin() + d, env.simplify(st));
      return all(s);
    }
    case OpId::squeeze:
    case OpId::squeeze_dim:
    case OpId::squeeze_dims: {
      const std::vector<int64_t> removed = squeezed_dims(env, node);
      std::vector<int64_t> order;
      for (int64_t i = 0; i < rank; ++i)
        if (std::find(removed.begin(), removed.end(), i) == removed.end()) order.push_back(i);
      return all(pick(order));
    }
    case OpId::expand:
    case OpId::expand_as: {
      if (!in) return all(std::nullopt);
      const ir::TensorType& o = out_type(0);
      const int64_t lead = o.rank() - rank;
      std::vector<SymExpr> s(o.rank(), SymExpr(0));
      for (int64_t d = 0; d < rank; ++d) {
        const bool broadcast =
            provably_one(env, t.sizes[d]) && !provably_one(env, o.sizes[d + lead]);
        s[d + lead] = broadcast ? SymExpr(0) : (*in)[d];
      }
      return all(s);
    }
    case OpId::movedim_int:
    case OpId::movedim_intlist:
    case OpId::moveaxis_int:
    case OpId::moveaxis_intlist:
      if (rank == 0) return all(in);
      return all(pick(movedim_perm(node, rank)));
    case OpId::diagonal: {
      // ATen's diagonal: the other dims keep their strides, the diagonal steps both dims.
      const int64_t d1 = wrap(int_arg(node, "dim1"), rank);
      const int64_t d2 = wrap(int_arg(node, "dim2", 1), rank);
      if (!in) return all(std::nullopt);
      std::vector<SymExpr> s;
      for (int64_t d = 0; d < rank; ++d)
        if (d != d1 && d != d2) s.push_back((*in)[d]);
      s.push_back(env.simplify((*in)[d1] + (*in)[d2]));
      return all(s);
    }
    default:
      break;
  }
  // Any other op the schema says views its input: an alias splice cannot write through.
  if (node.op().aliasing == ir::Aliasing::kView) return all(std::nullopt);
  return v;
}

Result<Value*> replay_view(Rewriter& rw, const Node& view, size_t out, Value* base,
                           const Node* before) {
  std::vector<Arg> args = view.args();
  const Value* old = view_base(view);
  for (Arg& a : args)
    if (a.is<Value*>() && a.as<Value*>() == old) {
      a = Arg{base};
      break;
    }
  SPLICE_ASSIGN_OR_RETURN(Node * n,
                          rw.insert(before, view.op_id(), std::move(args), {},
                                    view.output(out) ? view.output(out)->name() : view.name()));
  return n->output(out);
}

Result<Value*> scatter_view(Rewriter& rw, const Node& view, size_t out, Value* base, Value* src,
                            const Node* before, const Node& writer) {
  ir::ShapeEnv& env = rw.env();
  const ir::TensorType& t = base->type();
  const int64_t rank = t.rank();
  const std::string name = base->name();
  auto insert = [&](OpId op, std::vector<Arg> args) {
    return rw.insert_value(
        before, op, std::move(args), {},
        std::string(ir::op_target(op)).substr(5, std::string(ir::op_target(op)).find('.', 5) - 5));
  };
  // The view back to the base's sizes (a reshape of the written value).
  auto view_back = [&]() -> Result<Value*> {
    std::vector<ir::SymIntArg> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (auto c = t.sizes[d].constant()) {
        sizes.push_back(*c);
        continue;
      }
      SPLICE_ASSIGN_OR_RETURN(Value * s, rw.insert_value(before, OpId::sym_size_int,
                                                         {Arg{base}, Arg{d}}, {}, "sym_size_int"));
      sizes.push_back(s);
    }
    return insert(OpId::view, {Arg{src}, Arg{sizes}});
  };
  auto refuse = [&](std::string_view why) {
    return make_error(ErrorKind::kUnsupportedOp, "{}: writes through {}, {}", node_label(writer),
                      node_label(view), why);
  };
  switch (view.op_id()) {
    case OpId::alias:
    case OpId::detach:
    case OpId::detach_:
    case OpId::dropout:
    case OpId::to_dtype:
    case OpId::to_dtype_layout:
    case OpId::to_device:
    case OpId::to_other:
    case OpId::type_as:
    case OpId::contiguous:
      return src;
    case OpId::view:
    case OpId::_unsafe_view:
    case OpId::view_as:
    case OpId::reshape:
    case OpId::reshape_as:
    case OpId::flatten_using_ints:
    case OpId::unflatten_int:
    case OpId::squeeze:
    case OpId::squeeze_dims:
      return view_back();
    case OpId::slice_Tensor:
      return insert(OpId::slice_scatter, {Arg{base}, Arg{src}, view.arg("dim"), view.arg("start"),
                                          view.arg("end"), view.arg("step")});
    case OpId::narrow: {
      const Arg& start = view.arg("start");
      const Arg& length = view.arg("length");
      Arg end;
      if (start.is<int64_t>() && length.is<int64_t>()) {
        end = Arg{start.as<int64_t>() + length.as<int64_t>()};
      } else {
        SPLICE_ASSIGN_OR_RETURN(Value * e,
                                rw.insert_value(before, OpId::py_add, {start, length}, {}, "add"));
        end = Arg{e};
      }
      return insert(OpId::slice_scatter,
                    {Arg{base}, Arg{src}, view.arg("dim"), start, end, Arg{int64_t{1}}});
    }
    case OpId::split_Tensor:
    case OpId::split_with_sizes:
    case OpId::chunk: {
      // Piece `out` starts where the pieces before it end: their sizes along dim.
      const int64_t d = wrap(int_arg(view, "dim"), rank);
      int64_t start = 0;
      for (size_t i = 0; i < out; ++i) {
        const Value* piece = view.output(i);
        std::optional<int64_t> len = piece ? piece->type().sizes[d].constant() : std::nullopt;
        if (!len) return refuse("a piece of symbolic length");
        start += *len;
      }
      const std::optional<int64_t> len = src->type().sizes[d].constant();
      if (!len) return refuse("a piece of symbolic length");
      return insert(OpId::slice_scatter,
                    {Arg{base}, Arg{src}, Arg{d}, Arg{start}, Arg{start + *len}, Arg{int64_t{1}}});
    }
    case OpId::select_int:
      return insert(OpId::select_scatter,
                    {Arg{base}, Arg{src}, view.arg("dim"), view.arg("index")});
    case OpId::unbind_int:
      return insert(OpId::select_scatter,
                    {Arg{base}, Arg{src}, view.arg("dim"), Arg{static_cast<int64_t>(out)}});
    case OpId::transpose_int:
      return insert(OpId::transpose_int, {Arg{src}, view.arg("dim0"), view.arg("dim1")});
    case OpId::swapdims:
      return insert(OpId::transpose_int, {Arg{src}, view.arg("dim0"), view.arg("dim1")});
    case OpId::swapaxes:
      return insert(OpId::transpose_int, {Arg{src}, view.arg("axis0"), view.arg("axis1")});
    case OpId::t:
      return insert(OpId::t, {Arg{src}});
    case OpId::permute: {
      std::vector<int64_t> dims;
      for (int64_t d : int_list(view.arg("dims"))) dims.push_back(wrap(d, rank));
      std::vector<ir::SymIntArg> inverse(dims.size(), int64_t{0});
      for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
      return insert(OpId::permute, {Arg{src}, Arg{inverse}});
    }
    case OpId::movedim_int:
    case OpId::movedim_intlist:
    case OpId::moveaxis_int:
    case OpId::moveaxis_intlist: {
      // The permute moving the dims back (what run_decompositions({}) writes: movedim is a
      // permute there).
      if (rank == 0) return src;
      const std::vector<int64_t> perm = movedim_perm(view, rank);
      std::vector<ir::SymIntArg> inverse(perm.size(), int64_t{0});
      for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
      return insert(OpId::permute, {Arg{src}, Arg{inverse}});
    }
    case OpId::diagonal:
      return insert(OpId::diagonal_scatter,
                    {Arg{base}, Arg{src}, view.arg("offset"), view.arg("dim1"), view.arg("dim2")});
    case OpId::unsqueeze:
      return insert(OpId::squeeze_dim, {Arg{src}, view.arg("dim")});
    case OpId::squeeze_dim: {
      if (squeezed_dims(env, view).empty()) return src;
      return insert(OpId::unsqueeze, {Arg{src}, Arg{wrap(int_arg(view, "dim"), rank)}});
    }
    case OpId::expand:
    case OpId::expand_as: {
      // Only an expand that broadcasts nothing can be written through: a view back.
      const ir::TensorType& o = view.output(0)->type();
      const int64_t lead = o.rank() - rank;
      bool broadcasts = false;
      for (int64_t d = 0; d < o.rank(); ++d) {
        const SymExpr from = d < lead ? SymExpr(1) : t.sizes[d - lead];
        if (!env.provably_equal(from, o.sizes[d])) broadcasts = true;
      }
      if (broadcasts)
        return make_error(ErrorKind::kBadArchive,
                          "{}: unsupported operation: more than one element of the written-to "
                          "tensor refers to a single memory location (it writes through {}). "
                          "Please clone() the tensor before performing the operation.",
                          node_label(writer), node_label(view));
      return view_back();
    }
    default:
      break;
  }
  return refuse("a view splice cannot write back into its base");
}

}  // namespace splice::passes::func
