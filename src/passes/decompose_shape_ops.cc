// Decompositions of the CompositeImplicit conversions and views (decompositions.h), as ATen
// and torch/_refs write them: `to`/type_as are _to_copy, or an alias when nothing changes;
// contiguous is a clone when its input's strides are not contiguous (as eager lays the views
// out: func::classify_view), else an alias; eval-mode dropout is a clone (torch/_decomp's
// dropout); reshape is a view when the strides allow, else a clone and a view (ATen's reshape),
// and export's clone + _unsafe_view record of a reshape is a reshape again, so a program
// plans its copies as its run_decompositions({}) twin; narrow is a slice, chunk a
// split, tensor_split a split_with_sizes (sections) or slices (indices), meshgrid views of each
// tensor expanded to the grid, flatten/unflatten/reshape_as a reshape, view_as a view, expand_as an
// expand, movedim a permute, diagonal_scatter a strided slice_scatter of the two dims flattened,
// swapaxes and mT a transpose, numpy_T (Tensor.T) a permute reversing every dim (narrow with a
// start of unknown sign an index_select of an arange); pad is constant_pad_nd, or for
// reflect/replicate/circular one index_select per padded dim with indices computed from an arange
// (torch/_refs _reflection_or_replication_pad's index form).
#include "passes/decompositions.h"
#include "passes/functionalize.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/ranges.h>

#include "ir/shape_rules_util.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

Value* arg_value(const Node& node, std::string_view name) { return tensor_arg(node, name); }

int64_t wrapped(int64_t dim, int64_t rank) {
  const int64_t r = std::max<int64_t>(rank, 1);
  return dim < 0 ? dim + r : dim;
}

// A SymInt argument as a Size (a SymInt value without a recorded expression is unknown).
Size size_arg(Rewriter& rw, const Arg& a) {
  if (a.is<int64_t>()) return SizeBuilder::constant(a.as<int64_t>());
  Value* v = a.as<Value*>();
  return Size{v->expr() ? *v->expr() : rw.env().fresh_unbacked(), ir::SymIntArg{v}};
}

std::vector<Size> size_list(Rewriter& rw, const Arg& a) {
  std::vector<Size> out;
  for (const ir::SymIntArg& e : a.as<std::vector<ir::SymIntArg>>())
    out.push_back(std::holds_alternative<int64_t>(e) ? SizeBuilder::constant(std::get<int64_t>(e))
                                                     : size_arg(rw, Arg{std::get<Value*>(e)}));
  return out;
}

Result<bool> alias(Rewriter& rw, Node* node, Value* self) {
  SPLICE_TRY(rw.replace(node, OpId::alias, {Arg{self}}));
  return true;
}

// to.* and type_as: a cast when the dtype changes (or copy=True), else self itself.
Result<bool> to(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const ir::OpId t = node->op_id();
  DType dtype = self->type().dtype;
  if (t == OpId::to_other || t == OpId::type_as) {
    Value* other = arg_value(*node, "other");
    if (other == nullptr) return false;
    dtype = other->type().dtype;
  } else if (node->arg("dtype").is<DType>()) {
    dtype = node->arg("dtype").as<DType>();
  }
  const bool copy =
      node->op().find_arg("copy") && node->arg("copy").is<bool>() && node->arg("copy").as<bool>();
  if (dtype == self->type().dtype && !copy) return alias(rw, node, self);
  SPLICE_TRY(rw.replace(node, OpId::_to_copy, {Arg{self}}, {{"dtype", Arg{dtype}}}));
  return true;
}

bool sdpa_layout(const Node& p, const Value* v) {
  const ir::OpId t = p.op_id();
  return (t == OpId::scaled_dot_product_attention ||
          t == OpId::_scaled_dot_product_flash_attention_for_cpu) &&
         p.output(0) == v && v->type().rank() == 4;
}

bool is_pointwise(ir::OpId t) {
  static const std::set<ir::OpId> ops = [] {
    std::set<ir::OpId> out;
    for (const ir::rules::RuleEntry& e : ir::rules::pointwise_rules()) out.insert(e.op);
    return out;
  }();
  return ops.count(t) > 0;
}

// Whether a new tensor is laid out as its first input (clone, _to_copy and the *_like
// factories with memory_format None or preserve_format: empty_like's rule; the functional
// writes, which write into a clone of self).
bool preserves_layout(const Node& p) {
  switch (p.op_id()) {
    case OpId::slice_scatter:  // these write into a clone of self (preserve_format)
    case OpId::select_scatter:
    case OpId::index_put:
    case OpId::index_copy:
      return true;
    case OpId::clone:
    case OpId::_to_copy:
    case OpId::empty_like:
    case OpId::zeros_like:
    case OpId::ones_like:
    case OpId::full_like:
      break;
    default:
      return false;
  }
  if (!p.op().find_arg("memory_format")) return true;
  const Arg& m = p.arg("memory_format");
  return !m.is<std::string>() || m.as<std::string>() == "preserve_format";
}

// Eager's strides of the values one decomposition asks about, computed on demand (the graph
// does not change while one is asked).
class StrideOracle {
 public:
  explicit StrideOracle(ir::ShapeEnv& env) : env_(env) {}

  // The strides eager gives `v`: a graph input or most computed tensors are contiguous; a
  // view's follow from its base's (func::classify_view); a pointwise op's result or a copy
  // that preserves the layout is laid out as TensorIterator lays it out (below); the CPU
  // attention's result is permuted. nullopt where splice cannot tell.
  func::Strides of(const Value* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    func::Strides s = compute(v);
    memo_.emplace(v, s);
    return s;
  }

 private:
  func::Strides compute(const Value* v) {
    const Node* p = v->producer();
    const std::vector<SymExpr> dense = func::contiguous_strides(v->type());
    if (p == nullptr) return dense;
    if (sdpa_layout(*p, v)) {
      // ATen's CPU attention lays its result out as the query is laid out (eager and the meta
      // function export traces): [B, H, L, E] from a query that is a transpose of [B, L, H, E]
      // is itself such a transpose, so `.transpose(1, 2).contiguous()` copies nothing.
      return iterator_layout(*p, v, /*first_only=*/true);
    }
    if (preserves_layout(*p) && p->output(0) == v)
      return iterator_layout(*p, v, /*first_only=*/true);
    if (is_pointwise(p->op_id()) && p->output(0) == v) return iterator_layout(*p, v);
    if (!p->op().may_view() && p->op_id() != OpId::dropout) return dense;
    const Value* base = func::view_base(*p);
    if (base == nullptr || !base->is_tensor()) return dense;
    Result<func::ViewOutcome> view = func::classify_view(env_, *p, of(base));
    if (!view.ok() || view->undecided) return std::nullopt;
    if (!view->aliases) return dense;
    for (size_t i = 0; i < p->outputs().size(); ++i)
      if (p->output(i) == v) return i < view->strides.size() ? view->strides[i] : std::nullopt;
    return std::nullopt;
  }

  // TensorIterator's layout of a new output (reorder_dimensions): dims sorted fastest first by
  // the inputs' strides broadcast to the output's shape, the first input whose strides order
  // two dims deciding (a zero stride decides nothing; equal strides put the smaller dim first).
  // With `first_only`, only the first tensor input decides.
  func::Strides iterator_layout(const Node& p, const Value* out, bool first_only = false) {
    const auto& shape = out->type().sizes;
    const int64_t n = out->type().rank();
    std::vector<std::vector<SymExpr>> operands;
    for (const Arg& a : p.args()) {
      if (!a.is<Value*>() || a.as<Value*>() == nullptr || !a.as<Value*>()->is_tensor()) continue;
      const Value* in = a.as<Value*>();
      const int64_t r = in->type().rank();
      if (r == 0 || r > n) continue;
      func::Strides st = of(in);
      if (!st) return std::nullopt;
      std::vector<SymExpr> b(n, SymExpr(0));
      for (int64_t d = 0; d < r; ++d) {
        const int64_t o = d + n - r;
        const bool broadcast =
            env_.provably_equal(in->type().sizes[d], 1) && !env_.provably_equal(shape[o], 1);
        b[o] = broadcast ? SymExpr(0) : (*st)[d];
      }
      operands.push_back(std::move(b));
      if (first_only) break;
    }
    // A comparison the shape environment cannot decide is false, as torch/_prims_common's
    // compute_elementwise_output_logical_to_physical_perm takes it (guard_or_false) when
    // export traces the op with symbolic sizes.
    auto decide = [&](SymOp op, const SymExpr& x, const SymExpr& y) {
      return env_.decide(SymExpr::make(op, {x, y})).value_or(false);
    };
    // > 0: swap, < 0: keep, 0: no operand decides.
    auto should_swap = [&](int64_t d0, int64_t d1) {
      for (const auto& st : operands) {
        if (env_.provably_equal(st[d0], 0) || env_.provably_equal(st[d1], 0)) continue;
        if (decide(SymOp::kLt, st[d0], st[d1])) return -1;
        if (decide(SymOp::kLt, st[d1], st[d0])) return 1;
        if (decide(SymOp::kLt, shape[d1], shape[d0])) return 1;
      }
      return 0;
    };
    std::vector<int64_t> perm(n);  // fastest first
    for (int64_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
    for (int64_t i = 1; i < n; ++i) {
      int64_t d1 = i;
      for (int64_t d0 = i - 1; d0 >= 0; --d0) {
        const int c = should_swap(perm[d0], perm[d1]);
        if (c > 0) {
          std::swap(perm[d0], perm[d1]);
          d1 = d0;
        } else if (c < 0) {
          break;
        }
      }
    }
    std::vector<SymExpr> st(n, SymExpr(1));
    SymExpr next(1);
    for (int64_t d : perm) {
      st[d] = next;
      next = env_.simplify(next * shape[d]);
    }
    return st;
  }

  ir::ShapeEnv& env_;
  std::map<const Value*, func::Strides> memo_;
};

// clone's memory_format for a contiguous copy (the default keeps the input's layout).
NamedArgs contiguous_format() { return {{"memory_format", Arg{std::string("contiguous_format")}}}; }

bool contiguous_now(ir::ShapeEnv& env, const Value* v) {
  const func::Strides s = StrideOracle(env).of(v);
  if (!s) return false;
  const std::vector<SymExpr> want = func::contiguous_strides(v->type());
  for (int64_t d = 0; d < v->type().rank(); ++d) {
    // A dim of size 1 may have any stride (ATen's is_contiguous skips it).
    if (env.provably_equal(v->type().sizes[d], 1)) continue;
    if (!env.provably_equal((*s)[d], want[d])) return false;
  }
  return true;
}

// contiguous(self): self when eager finds it contiguous, else a contiguous copy (a clone, as
// run_decompositions({}) gives); a tensor whose strides splice cannot tell is copied too.
Result<bool> contiguous(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  if (contiguous_now(rw.env(), self)) return alias(rw, node, self);
  SPLICE_TRY(rw.replace(node, OpId::clone, {Arg{self}}, contiguous_format()));
  return true;
}

// lift_fresh_copy(self): the copy the training IR makes of a constant tensor the forward
// creates (torch.tensor(...)); run_decompositions({}) makes it a clone, and so does this, so
// the writes it feeds plan with the twin's producer.
Result<bool> lift_fresh_copy(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  SPLICE_TRY(rw.replace(node, OpId::clone, {Arg{self}}));
  return true;
}

// reshape(self, shape): a view when ATen's computeStride finds strides for the new shape, else
// a view of a contiguous clone (ATen's reshape; its _unsafe_view is a view once decomposed). A
// reshape whose choice only the run can make stays.
Result<bool> reshape(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  SPLICE_ASSIGN_OR_RETURN(func::ViewOutcome view,
                          func::classify_view(rw.env(), *node, StrideOracle(rw.env()).of(self)));
  // A choice the shape environment cannot make (symbolic sizes on a non-contiguous input)
  // stays the run's: the reshape stays, and its kernel views or copies as eager does.
  if (view.undecided) return false;
  const Arg shape = node->arg("shape");
  if (view.aliases) {
    SPLICE_TRY(rw.replace(node, OpId::view, {Arg{self}, shape}));
    return true;
  }
  SPLICE_ASSIGN_OR_RETURN(Value * copy,
                          rw.insert_value(node, OpId::clone, {Arg{self}}, contiguous_format(),
                                          node->name() + "_clone"));
  SPLICE_TRY(rw.replace(node, OpId::view, {Arg{copy}, shape}));
  return true;
}

// _unsafe_view(clone(x, contiguous_format), shape), the clone read by nothing else: ATen's
// reshape as export records it where *its* layout of x needed a copy. It becomes
// reshape(x, shape) again, decided above from splice's layouts, so the program plans as the
// training IR's reshape of the same model does (the view when splice lays x out viewably; the
// same clone and view when not). Only the layout that export's meta functions assumed differs
// (CUDA's math attention writes [B, H, L, E] densely, the CPU one as the query), and no value
// does: the clone is fresh and read once, so no later write can tell the two apart.
Result<bool> unsafe_view_of_clone(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  Node* clone = self != nullptr ? producer_if(self, OpId::clone) : nullptr;
  // A returned result stays a fresh tensor, as the program says.
  if (clone == nullptr || is_graph_output(rw.graph(), self) ||
      is_graph_output(rw.graph(), node->output(0)) || rw.graph().users(self).size() != 1)
    return false;
  const Arg& format = clone->arg("memory_format");
  if (!format.is<std::string>() || format.as<std::string>() != "contiguous_format") return false;
  Value* source = arg_value(*clone, "self");
  if (source == nullptr) return false;
  SPLICE_TRY(rw.replace(node, OpId::reshape, {Arg{source}, node->arg("size")}));
  rw.graph().erase_node(clone);
  return true;
}

// dropout(input, p, train): the identity unless training with p > 0, whose random mask splice
// cannot reproduce.
Result<bool> dropout(Rewriter& rw, Node* node) {
  Value* input = arg_value(*node, "input");
  if (input == nullptr) return false;
  const Arg& p = node->arg("p");
  const Arg& train = node->arg("train");
  const double pv = p.is<double>() ? p.as<double>() : -1.0;
  const bool training = !train.is<bool>() || train.as<bool>();
  if (training && pv != 0.0)
    return make_error(ErrorKind::kUnsupportedOp,
                      "{}: dropout in training mode is not supported (p={}); export the model "
                      "after model.eval()",
                      node_label(*node), p.is<double>() ? fmt::format("{}", pv) : "symbolic");
  // torch/_decomp's dropout returns input.clone() here (eager returns the input itself; a
  // write through it the functionalize pass has resolved already), and the twin plans a copy.
  SPLICE_TRY(rw.replace(node, OpId::clone, {Arg{input}}));
  return true;
}

// narrow(self, dim, start, length) = self[start':start' + length] along dim, start' being start
// wrapped against the size: a slice, or an index_select when the start's sign is unknown.
Result<bool> narrow(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const int64_t dim = wrapped(node->arg("dim").as<int64_t>(), self->type().rank());
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(Size n, sizes.dim(self, dim));
  const Size raw = size_arg(rw, node->arg("start"));
  const bool sign_known = rw.env().decide(SymExpr::make(SymOp::kGe, {raw.expr, 0})).has_value();
  SPLICE_ASSIGN_OR_RETURN(Size start, sizes.wrap(raw, n));
  SPLICE_ASSIGN_OR_RETURN(Size end, sizes.add(start, size_arg(rw, node->arg("length"))));
  if (sign_known) {
    SPLICE_TRY(rw.replace(node, OpId::slice_Tensor,
                          {Arg{self}, Arg{dim}, to_arg(start), to_arg(end), Arg{int64_t{1}}}));
    return true;
  }
  // A start whose sign only the run tells (.item()): slice's own wrapping of a negative bound
  // would apply twice, so the rows are picked by index instead.
  SPLICE_ASSIGN_OR_RETURN(
      Value * index,
      rw.insert_value(node, OpId::arange_start, {to_arg(start), to_arg(end)},
                      {{"dtype", Arg{DType::kInt64}}}, part_name(*node, OpId::arange_start)));
  SPLICE_ASSIGN_OR_RETURN(
      Value * rows, rw.insert_value(node, OpId::index_select, {Arg{self}, Arg{dim}, Arg{index}}, {},
                                    part_name(*node, OpId::index_select)));
  SPLICE_TRY(replace_outputs(rw, node, {rows}));
  return true;
}

// chunk(self, chunks, dim): a split into pieces of ceil(size / chunks); an empty dim gives
// `chunks` empty pieces (ATen's chunk).
Result<bool> chunk(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const int64_t chunks = node->arg("chunks").as<int64_t>();
  const int64_t dim = wrapped(node->arg("dim").as<int64_t>(), self->type().rank());
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(Size n, sizes.dim(self, dim));
  if (n.expr.constant() == 0) {
    SPLICE_TRY(
        rw.replace(node, OpId::split_with_sizes,
                   {Arg{self}, Arg{std::vector<ir::SymIntArg>(chunks, int64_t{0})}, Arg{dim}}));
    return true;
  }
  SPLICE_ASSIGN_OR_RETURN(Size padded, sizes.add(n, SizeBuilder::constant(chunks - 1)));
  SPLICE_ASSIGN_OR_RETURN(Size split, sizes.floordiv(padded, SizeBuilder::constant(chunks)));
  SPLICE_TRY(rw.replace(node, OpId::split_Tensor, {Arg{self}, to_arg(split), Arg{dim}}));
  return true;
}

Result<bool> reshape_to(Rewriter& rw, Node* node, Value* self, const std::vector<Size>& sizes,
                        ir::OpId target = OpId::reshape) {
  SPLICE_TRY(rw.replace(node, target, {Arg{self}, Arg{to_list(sizes)}}));
  return true;
}

// flatten(self, start_dim, end_dim): dims start..end merged (a 0-d tensor becomes 1-d).
Result<bool> flatten(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const int64_t rank = self->type().rank();
  if (rank == 0) return reshape_to(rw, node, self, {SizeBuilder::constant(1)});
  const int64_t start = wrapped(node->arg("start_dim").as<int64_t>(), rank);
  const int64_t end = wrapped(node->arg("end_dim").as<int64_t>(), rank);
  if (start == end) return alias(rw, node, self);
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(self));
  std::vector<Size> out(dims.begin(), dims.begin() + start);
  SPLICE_ASSIGN_OR_RETURN(
      Size merged, sizes.product(std::vector<Size>(dims.begin() + start, dims.begin() + end + 1)));
  out.push_back(merged);
  out.insert(out.end(), dims.begin() + end + 1, dims.end());
  return reshape_to(rw, node, self, out);
}

// unflatten(self, dim, sizes): dim split into `sizes` (-1 inferred by reshape).
Result<bool> unflatten(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const int64_t rank = self->type().rank();
  const int64_t dim = wrapped(node->arg("dim").as<int64_t>(), rank);
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(self));
  std::vector<Size> out(dims.begin(), dims.begin() + std::min(dim, rank));
  for (const Size& s : size_list(rw, node->arg("sizes"))) out.push_back(s);
  if (dim < rank) out.insert(out.end(), dims.begin() + dim + 1, dims.end());
  return reshape_to(rw, node, self, out);
}

// view_as / reshape_as / expand_as(self, other): other's sizes.
Result<bool> as_other(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  Value* other = arg_value(*node, "other");
  if (self == nullptr || other == nullptr) return false;
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(other));
  const ir::OpId t = node->op_id();
  if (t == OpId::expand_as) return reshape_to(rw, node, self, dims, OpId::expand);
  return reshape_to(rw, node, self, dims, t == OpId::view_as ? OpId::view : OpId::reshape);
}

// movedim/moveaxis: a permute putting the source dims at the destinations, the other dims in
// their order in the remaining places.
Result<bool> movedim(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const int64_t rank = self->type().rank();
  if (rank == 0) return alias(rw, node, self);
  const std::vector<int64_t> perm = func::movedim_perm(*node, rank);
  std::vector<ir::SymIntArg> dims(perm.begin(), perm.end());
  SPLICE_TRY(rw.replace(node, OpId::permute, {Arg{self}, Arg{dims}}));
  return true;
}

// diagonal_scatter(self, src, offset, dim1, dim2): self with its diagonal replaced by src
// (cast to self's dtype), as eager's `self.clone().diagonal(...).copy_(src)`. The two dims,
// moved last (dim1 then dim2) and flattened, hold the diagonal at a constant step: element i of
// the diagonal of an [n1, n2] matrix is at i*(n2 + 1) + start, start = offset for offset >= 0
// and -offset*n2 below, so the write is one strided slice_scatter of the flattened dims, viewed
// back and the dims moved back. Example: [3, 4], offset 1: the diagonal (0,1), (1,2), (2,3) is
// flat positions 1, 6, 11 = slice(1, 12, 5). An offset past either end is an empty slice.
Result<bool> diagonal_scatter(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  Value* src = arg_value(*node, "src");
  if (self == nullptr || src == nullptr) return false;
  const int64_t rank = self->type().rank();
  const int64_t offset = node->arg("offset").as<int64_t>();
  const int64_t d1 = wrapped(node->arg("dim1").as<int64_t>(), rank);
  const int64_t d2 = wrapped(node->arg("dim2").as<int64_t>(), rank);
  const std::optional<int64_t> n1 = self->type().sizes[d1].constant();
  const std::optional<int64_t> n2 = self->type().sizes[d2].constant();
  if (!n1 || !n2)
    return make_error(ErrorKind::kUnsupportedOp,
                      "{}: diagonal_scatter over a dim of symbolic size ({} x {}) is not "
                      "supported; only the other dims may be dynamic",
                      node_label(*node), self->type().sizes[d1].to_string(),
                      self->type().sizes[d2].to_string());
  const int64_t len = offset >= 0 ? std::max<int64_t>(0, std::min(*n1, *n2 - offset))
                                  : std::max<int64_t>(0, std::min(*n1 + offset, *n2));
  const int64_t step = *n2 + 1;
  const int64_t start = offset >= 0 ? offset : -offset * *n2;
  const int64_t end = len > 0 ? start + (len - 1) * step + 1 : start;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != d1 && d != d2) perm.push_back(d);
  perm.push_back(d1);
  perm.push_back(d2);
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d) identity &= perm[d] == d;
  auto insert = [&](OpId op, std::vector<Arg> args) {
    return rw.insert_value(node, op, std::move(args), {}, part_name(*node, op));
  };
  Value* moved = self;
  if (!identity) {
    SPLICE_ASSIGN_OR_RETURN(
        moved, insert(OpId::permute,
                      {Arg{self}, Arg{std::vector<ir::SymIntArg>(perm.begin(), perm.end())}}));
  }
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(moved));
  std::vector<Size> flat_sizes(dims.begin(), dims.end() - 2);
  flat_sizes.push_back(SizeBuilder::constant(*n1 * *n2));
  SPLICE_ASSIGN_OR_RETURN(Value * flat,
                          insert(OpId::reshape, {Arg{moved}, Arg{to_list(flat_sizes)}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * written, insert(OpId::slice_scatter, {Arg{flat}, Arg{src}, Arg{rank - 2}, Arg{start},
                                                    Arg{end}, Arg{step}}));
  SPLICE_ASSIGN_OR_RETURN(Value * back, insert(OpId::reshape, {Arg{written}, Arg{to_list(dims)}}));
  if (!identity) {
    std::vector<ir::SymIntArg> inverse(rank, int64_t{0});
    for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
    SPLICE_ASSIGN_OR_RETURN(back, insert(OpId::permute, {Arg{back}, Arg{inverse}}));
  }
  SPLICE_TRY(replace_outputs(rw, node, {back}));
  return true;
}

Result<bool> swapaxes(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const bool axes = node->op().find_arg("axis0").has_value();
  SPLICE_TRY(rw.replace(
      node, OpId::transpose_int,
      {Arg{self}, node->arg(axes ? "axis0" : "dim0"), node->arg(axes ? "axis1" : "dim1")}));
  return true;
}

// Tensor.T: a permute reversing every dim; Tensor.mT: a transpose of the last two.
Result<bool> numpy_T(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  std::vector<ir::SymIntArg> dims;
  for (int64_t d = self->type().rank() - 1; d >= 0; --d) dims.push_back(d);
  SPLICE_TRY(rw.replace(node, OpId::permute, {Arg{self}, Arg{dims}}));
  return true;
}

Result<bool> mT(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  SPLICE_TRY(
      rw.replace(node, OpId::transpose_int, {Arg{self}, Arg{int64_t{-2}}, Arg{int64_t{-1}}}));
  return true;
}

// pad(self, pad, mode, value). Non-constant modes read, for output position o of a padded dim of
// size n with pads (l, r), input index i = o - l mapped back into [0, n): reflect
// (n-1) - |(n-1) - |i||, replicate clamp(i, 0, n-1), circular i mod n.
Result<bool> pad(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const Arg& mode_arg = node->arg("mode");
  const std::string mode = mode_arg.is<std::string>() ? mode_arg.as<std::string>() : "constant";
  if (mode == "constant") {
    const Arg& value = node->arg("value");
    SPLICE_TRY(
        rw.replace(node, OpId::constant_pad_nd,
                   {Arg{self}, node->arg("pad"), value.is_none() ? Arg{int64_t{0}} : value}));
    return true;
  }
  const std::vector<Size> pads = size_list(rw, node->arg("pad"));
  const int64_t rank = self->type().rank();
  SizeBuilder sizes(rw, node);
  Value* cur = self;
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const Size& l = pads[2 * k];
    const Size& r = pads[2 * k + 1];
    if (l.expr.constant() == 0 && r.expr.constant() == 0) continue;
    const int64_t d = rank - 1 - static_cast<int64_t>(k);
    SPLICE_ASSIGN_OR_RETURN(Size n, sizes.dim(self, d));
    SPLICE_ASSIGN_OR_RETURN(Size start, sizes.sub(SizeBuilder::constant(0), l));
    SPLICE_ASSIGN_OR_RETURN(Size end, sizes.add(n, r));
    SPLICE_ASSIGN_OR_RETURN(Size last, sizes.sub(n, SizeBuilder::constant(1)));
    SPLICE_ASSIGN_OR_RETURN(
        Value * index,
        rw.insert_value(node, OpId::arange_start, {to_arg(start), to_arg(end)},
                        {{"dtype", Arg{DType::kInt64}}}, part_name(*node, OpId::arange_start)));
    if (mode == "reflect") {
      for (int twice = 0; twice < 2; ++twice) {
        SPLICE_ASSIGN_OR_RETURN(index, rw.insert_value(node, OpId::abs, {Arg{index}}, {},
                                                       part_name(*node, OpId::arange_start)));
        SPLICE_ASSIGN_OR_RETURN(
            index, rw.insert_value(node, OpId::rsub_Scalar, {Arg{index}, to_arg(last)}, {},
                                   part_name(*node, OpId::arange_start)));
      }
    } else if (mode == "replicate") {
      SPLICE_ASSIGN_OR_RETURN(
          index, rw.insert_value(node, OpId::clamp, {Arg{index}, Arg{int64_t{0}}, to_arg(last)}, {},
                                 part_name(*node, OpId::arange_start)));
    } else {
      SPLICE_ASSIGN_OR_RETURN(
          index, rw.insert_value(node, OpId::remainder_Scalar, {Arg{index}, to_arg(n)}, {},
                                 part_name(*node, OpId::arange_start)));
    }
    SPLICE_ASSIGN_OR_RETURN(
        cur, rw.insert_value(node, OpId::index_select, {Arg{cur}, Arg{d}, Arg{index}}, {},
                             part_name(*node, OpId::index_select)));
  }
  if (cur == self) return alias(rw, node, self);
  SPLICE_TRY(replace_outputs(rw, node, {cur}));
  return true;
}

// as_strided(self, size, stride, storage_offset) read from a tensor that owns its storage (a
// graph input or a computed tensor, laid out as StrideOracle says eager lays it out): the
// elements storage[offset + sum_d i_d * stride_d], gathered with index.Tensor from self's
// storage order flattened — or self itself when the request is self's own layout (the
// channels-last restride export leaves after a pool). A view's storage is another tensor's, and
// a write through the result would need as_strided_scatter: both are refused. Sizes, strides
// and offset must be static.
// The constants of a SymInt[] argument; nullopt when one is symbolic.
std::optional<std::vector<int64_t>> constant_list(const Arg& a) {
  if (!a.is<std::vector<ir::SymIntArg>>()) return std::nullopt;
  std::vector<int64_t> out;
  for (const ir::SymIntArg& e : a.as<std::vector<ir::SymIntArg>>()) {
    if (!std::holds_alternative<int64_t>(e)) return std::nullopt;
    out.push_back(std::get<int64_t>(e));
  }
  return out;
}

Result<bool> as_strided(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  auto refuse = [&](std::string_view why) {
    return make_error(ErrorKind::kUnsupportedOp, "{}: as_strided {}", node_label(*node), why);
  };
  const Node* producer = self->producer();
  if (producer != nullptr && producer->op().may_view())
    return refuse("of a view is not supported (only of a tensor that owns its storage)");
  auto size = constant_list(node->arg("size"));
  auto stride = constant_list(node->arg("stride"));
  std::optional<int64_t> offset = int64_t{0};
  if (!node->arg("storage_offset").is_none()) offset = constant_int(node->arg("storage_offset"));
  if (!size || !stride || !offset) return refuse("with symbolic sizes, strides or offset");
  if (size->size() != stride->size())
    return refuse(fmt::format("mismatch in length of strides and shape ({} and {})", stride->size(),
                              size->size()));
  const ir::TensorType& t = self->type();
  int64_t numel = 1;
  std::vector<int64_t> self_sizes;
  for (int64_t d = 0; d < t.rank(); ++d) {
    auto n = static_size(t, d);
    if (!n) return refuse("of a tensor of symbolic size");
    self_sizes.push_back(*n);
    numel *= *n;
  }
  // ATen's setStorage check: the last element reached lies in the storage.
  int64_t last = *offset, count = 1;
  for (size_t d = 0; d < size->size(); ++d) {
    if ((*stride)[d] < 0) return refuse("with negative strides");
    count *= (*size)[d];
    last += ((*size)[d] - 1) * (*stride)[d];
  }
  if (count > 0 && (*offset < 0 || last >= numel))
    return make_error(
        ErrorKind::kOutOfRange,
        "{}: as_strided: sizes [{}], strides [{}] and storage offset {} reach element "
        "{}, out of bounds for a storage of {} elements",
        node_label(*node), fmt::join(*size, ", "), fmt::join(*stride, ", "), *offset, last, numel);
  const func::Strides eager = StrideOracle(rw.env()).of(self);
  const std::optional<std::vector<int64_t>> known = eager ? constant_values(*eager) : std::nullopt;
  if (!known || static_cast<int64_t>(known->size()) != t.rank())
    return refuse("of a tensor whose layout splice cannot tell");
  const std::vector<int64_t>& layout = *known;
  // Self's own layout: the same sizes and, where a dim has more than one element, strides.
  bool own = *offset == 0 && *size == self_sizes;
  for (size_t d = 0; own && d < size->size(); ++d)
    own = (*size)[d] == 1 || (*stride)[d] == layout[d];
  if (own) return alias(rw, node, self);
  // Storage order: dims by falling stride; the layout must be dense (a permuted contiguous one).
  std::vector<int64_t> perm(t.rank());
  for (int64_t d = 0; d < t.rank(); ++d) perm[d] = d;
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return layout[a] > layout[b]; });
  int64_t dense = 1;
  for (auto it = perm.rbegin(); it != perm.rend(); ++it) {
    if (self_sizes[*it] != 1 && layout[*it] != dense)
      return refuse("of a tensor that is not laid out densely");
    dense *= self_sizes[*it];
  }
  Builder b{rw, node};
  Value* storage = self;
  if (!std::is_sorted(perm.begin(), perm.end())) {
    SPLICE_ASSIGN_OR_RETURN(
        storage, b.op(OpId::permute,
                      {Arg{self}, Arg{std::vector<ir::SymIntArg>(perm.begin(), perm.end())}}));
  }
  SPLICE_ASSIGN_OR_RETURN(
      storage, b.op(OpId::reshape, {Arg{storage}, Arg{std::vector<ir::SymIntArg>{numel}}}));
  // index[i_0, ..., i_k] = offset + sum_d i_d * stride_d, one arange per dim broadcast.
  Value* index = nullptr;
  for (size_t d = 0; d < size->size(); ++d) {
    SPLICE_ASSIGN_OR_RETURN(Value * steps,
                            b.op(OpId::arange, {Arg{(*size)[d]}}, {{"dtype", Arg{DType::kInt64}}}));
    SPLICE_ASSIGN_OR_RETURN(steps, b.op(OpId::mul_Scalar, {Arg{steps}, Arg{(*stride)[d]}}));
    std::vector<ir::SymIntArg> shape(size->size(), int64_t{1});
    shape[d] = (*size)[d];
    SPLICE_ASSIGN_OR_RETURN(steps, b.op(OpId::view, {Arg{steps}, Arg{shape}}));
    if (index == nullptr) {
      SPLICE_ASSIGN_OR_RETURN(index, b.op(OpId::add_Scalar, {Arg{steps}, Arg{*offset}}));
    } else {
      SPLICE_ASSIGN_OR_RETURN(index, b.op(OpId::add_Tensor, {Arg{index}, Arg{steps}}));
    }
  }
  if (index == nullptr) {
    // A 0-d result: the one element at the offset.
    SPLICE_ASSIGN_OR_RETURN(
        index, b.op(OpId::scalar_tensor, {Arg{*offset}}, {{"dtype", Arg{DType::kInt64}}}));
  }
  SPLICE_ASSIGN_OR_RETURN(
      Value * out, b.op(OpId::index_Tensor, {Arg{storage}, Arg{std::vector<Value*>{index}}}));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// meshgrid(tensors, indexing): tensor i viewed with its length at grid dim i (the first two
// swapped for "xy") and 1 elsewhere, expanded to the grid — ATen's meshgrid, views throughout.
Result<bool> meshgrid(Rewriter& rw, Node* node) {
  const Arg& list = node->arg("tensors");
  if (!list.is<std::vector<Value*>>()) return false;
  const std::vector<Value*>& tensors = list.as<std::vector<Value*>>();
  const bool xy = node->op_id() == OpId::meshgrid_indexing &&
                  node->arg("indexing").is<std::string>() &&
                  node->arg("indexing").as<std::string>() == "xy";
  const size_t n = tensors.size();
  // Grid dim of tensor i.
  auto position = [&](size_t i) { return xy && n >= 2 && i < 2 ? 1 - i : i; };
  SizeBuilder sizes(rw, node);
  std::vector<Size> grid(n, SizeBuilder::constant(1));
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i] == nullptr) return false;
    if (tensors[i]->type().rank() == 1) {
      SPLICE_ASSIGN_OR_RETURN(grid[position(i)], sizes.dim(tensors[i], 0));
    }
  }
  Builder b{rw, node};
  std::vector<Value*> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Size> shape(n, SizeBuilder::constant(1));
    shape[position(i)] = grid[position(i)];
    SPLICE_ASSIGN_OR_RETURN(Value * line, b.op(OpId::view, {Arg{tensors[i]}, Arg{to_list(shape)}}));
    SPLICE_ASSIGN_OR_RETURN(Value * full, b.op(OpId::expand, {Arg{line}, Arg{to_list(grid)}}));
    out.push_back(full);
  }
  SPLICE_TRY(replace_outputs(rw, node, out));
  return true;
}

// tensor_split.sections(self, sections, dim): a split_with_sizes whose piece i holds
// (n - i + sections - 1) // sections elements (the first n % sections one more, as ATen's).
Result<bool> tensor_split_sections(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  auto sections = constant_int(node->arg("sections"));
  if (self == nullptr || !sections || *sections <= 0) return false;
  const int64_t dim = wrapped(node->arg("dim").as<int64_t>(), self->type().rank());
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(Size n, sizes.dim(self, dim));
  std::vector<Size> pieces;
  for (int64_t i = 0; i < *sections; ++i) {
    SPLICE_ASSIGN_OR_RETURN(Size top, sizes.add(n, SizeBuilder::constant(*sections - 1 - i)));
    SPLICE_ASSIGN_OR_RETURN(Size piece, sizes.floordiv(top, SizeBuilder::constant(*sections)));
    pieces.push_back(piece);
  }
  SPLICE_TRY(rw.replace(node, OpId::split_with_sizes, {Arg{self}, Arg{to_list(pieces)}, Arg{dim}}));
  return true;
}

// tensor_split.indices(self, indices, dim): slices [0:i0], [i0:i1], ..., [ik:n] with the
// indices as given — slice wraps and clamps them exactly as ATen's tensor_split relies on.
Result<bool> tensor_split_indices(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  const Arg& indices = node->arg("indices");
  if (self == nullptr || !indices.is<std::vector<ir::SymIntArg>>()) return false;
  const int64_t dim = wrapped(node->arg("dim").as<int64_t>(), self->type().rank());
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(Size n, sizes.dim(self, dim));
  std::vector<ir::SymIntArg> bounds = indices.as<std::vector<ir::SymIntArg>>();
  bounds.insert(bounds.begin(), int64_t{0});
  bounds.push_back(n.arg);
  Builder b{rw, node};
  std::vector<Value*> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    auto bound = [](const ir::SymIntArg& v) {
      return std::holds_alternative<int64_t>(v) ? Arg{std::get<int64_t>(v)}
                                                : Arg{std::get<Value*>(v)};
    };
    SPLICE_ASSIGN_OR_RETURN(Value * piece,
                            b.op(OpId::slice_Tensor, {Arg{self}, Arg{dim}, bound(bounds[i]),
                                                      bound(bounds[i + 1]), Arg{int64_t{1}}}));
    out.push_back(piece);
  }
  SPLICE_TRY(replace_outputs(rw, node, out));
  return true;
}

// broadcast_to(self, size): expand(self, size).
Result<bool> broadcast_to(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  SPLICE_TRY(rw.replace(node, OpId::expand, {Arg{self}, node->arg("size")}));
  return true;
}

// unfold(self, dimension, size, step) (Tensor.unfold): the windows as a new last dim, one
// strided slice of dim per window offset, stacked last. A copy, not a view: a program writing
// through the windows is not supported (export's functional forms never do).
Result<bool> unfold(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  if (self == nullptr) return false;
  const int64_t rank = self->type().rank();
  int64_t dim = node->arg("dimension").as<int64_t>();
  if (dim < 0) dim += rank;
  const int64_t size = node->arg("size").as<int64_t>();
  const int64_t step = node->arg("step").as<int64_t>();
  const auto n = static_size(self->type(), dim);
  if (!n || size < 1)
    return Error(ErrorKind::kUnsupportedOp,
                 node_label(*node) + ": unfold over a symbolic size or of empty windows");
  constexpr int64_t kMaxOffsets = 1024;
  if (size > kMaxOffsets)
    return Error(ErrorKind::kUnsupportedOp,
                 node_label(*node) +
                     fmt::format(": unfold with windows of more than {} elements", kMaxOffsets));
  const int64_t windows = (*n - size) / step + 1;
  Builder b{rw, node};
  std::vector<Value*> parts;
  for (int64_t i = 0; i < size; ++i) {
    SPLICE_ASSIGN_OR_RETURN(
        Value * part, b.op(OpId::slice_Tensor, {Arg{self}, Arg{dim}, Arg{i},
                                                Arg{i + step * (windows - 1) + 1}, Arg{step}}));
    parts.push_back(part);
  }
  SPLICE_ASSIGN_OR_RETURN(Value * out, b.op(OpId::stack, {Arg{parts}, Arg{rank}}));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

// masked_scatter(self, mask, source) (ATen: self and mask expanded to one shape, cloned, then
// masked_scatter_): the masked positions, counted in row-major order by a cumulative sum of the
// mask, take source's flat elements in turn: out = where(mask, source.flatten()[count - 1],
// self). The count is clamped at 0, so the positions before the first masked one read element 0
// (and are not used); a mask with more ones than source has elements makes the index run past
// source's end, which index_select refuses when the call runs (ATen: "Number of elements of
// source < number of ones in mask"). A source with no elements can fill no position: the result
// is self broadcast (eager would also refuse a mask with ones there). Vision-language models
// write image features into the text embeddings this way.
Result<bool> masked_scatter(Rewriter& rw, Node* node) {
  Value* self = arg_value(*node, "self");
  Value* mask = arg_value(*node, "mask");
  Value* source = arg_value(*node, "source");
  if (self == nullptr || mask == nullptr || source == nullptr) return false;
  Builder b{rw, node};
  // The mask at the result's sizes (the broadcast of self and mask), unless it has them.
  Value* full = mask;
  if (mask->type().sizes != node->output(0)->type().sizes) {
    SPLICE_ASSIGN_OR_RETURN(Value * none,
                            b.op(OpId::zeros_like, {Arg{self}}, {{"dtype", Arg{DType::kBool}}}));
    SPLICE_ASSIGN_OR_RETURN(full, b.op(OpId::logical_or, {Arg{mask}, Arg{none}}));
  }
  const auto source_numel = ir::rules::numel(source->type().sizes).constant();
  if (source_numel && *source_numel == 0) {
    SPLICE_TRY(rw.replace(node, OpId::where_self, {Arg{full}, Arg{self}, Arg{self}}));
    return true;
  }
  SizeBuilder sizes(rw, node);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> dims, sizes.dims(full));
  SPLICE_ASSIGN_OR_RETURN(Size count, sizes.product(dims));
  SPLICE_ASSIGN_OR_RETURN(std::vector<Size> source_dims, sizes.dims(source));
  SPLICE_ASSIGN_OR_RETURN(Size source_count, sizes.product(source_dims));
  SPLICE_ASSIGN_OR_RETURN(Value * flat_mask,
                          b.op(OpId::reshape, {Arg{full}, Arg{to_list({count})}}));
  // The count in int64 from the start: a bool cumsum with an output dtype asks more of a
  // backend's scan than an int64 one.
  SPLICE_ASSIGN_OR_RETURN(Value * ones, b.cast(flat_mask, DType::kInt64));
  SPLICE_ASSIGN_OR_RETURN(Value * seen, b.op(OpId::cumsum, {Arg{ones}, Arg{int64_t{0}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * before, b.op(OpId::sub_Scalar, {Arg{seen}, Arg{int64_t{1}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * index, b.op(OpId::clamp_min, {Arg{before}, Arg{int64_t{0}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * flat_source,
                          b.op(OpId::reshape, {Arg{source}, Arg{to_list({source_count})}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * picked, b.op(OpId::index_select, {Arg{flat_source}, Arg{int64_t{0}}, Arg{index}}));
  SPLICE_ASSIGN_OR_RETURN(Value * placed, b.op(OpId::reshape, {Arg{picked}, Arg{to_list(dims)}}));
  SPLICE_TRY(rw.replace(node, OpId::where_self, {Arg{full}, Arg{placed}, Arg{self}}));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::to_dtype, to},
    {OpId::to_dtype_layout, to},
    {OpId::to_device, to},
    {OpId::to_other, to},
    {OpId::type_as, to},
    {OpId::contiguous, contiguous},
    {OpId::dropout, dropout},
    {OpId::narrow, narrow},
    {OpId::chunk, chunk},
    {OpId::tensor_split_sections, tensor_split_sections},
    {OpId::tensor_split_indices, tensor_split_indices},
    {OpId::meshgrid, meshgrid},
    {OpId::as_strided, as_strided},
    {OpId::meshgrid_indexing, meshgrid},
    {OpId::reshape, reshape, /*partial=*/true},
    {OpId::lift_fresh_copy, lift_fresh_copy, /*partial=*/true},
    {OpId::_unsafe_view, unsafe_view_of_clone, /*partial=*/true},
    {OpId::flatten_using_ints, flatten},
    {OpId::unflatten_int, unflatten},
    {OpId::view_as, as_other},
    {OpId::reshape_as, as_other},
    {OpId::expand_as, as_other},
    {OpId::broadcast_to, broadcast_to},
    {OpId::unfold, unfold},
    {OpId::movedim_int, movedim},
    {OpId::movedim_intlist, movedim},
    {OpId::moveaxis_int, movedim},
    {OpId::moveaxis_intlist, movedim},
    {OpId::diagonal_scatter, diagonal_scatter},
    {OpId::masked_scatter, masked_scatter},
    {OpId::swapaxes, swapaxes},
    {OpId::swapdims, swapaxes},
    {OpId::numpy_T, numpy_T},
    {OpId::mT, mT},
    {OpId::pad, pad},
};

}  // namespace

std::span<const Entry> shape_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
