// fuse_written_attention: attention written out op by op becomes one
// scaled_dot_product_attention, which every backend runs as a fused kernel. Models written
// before SDPA (and lerobot's SmolVLA, transformers' "eager" attention) spell it out:
//
//   %scores = aten.matmul.default(%q, %kt)                  kt = k.transpose(-2, -1)
//   %scaled = aten.mul.Tensor(%scores, 0.125)              or div by a number; optional
//   %masked = aten.where.ScalarOther(%keep, %scaled, -3.4e38)
//           | aten.add.Tensor(%scaled, %float_mask)        optional
//   %p      = aten.softmax.int(%masked, -1)                or aten._softmax.default
//   %pc     = aten.clone.default(%p)                        optional (eval-mode dropout)
//   %p16    = aten._to_copy.default(%pc, dtype=bf16)       optional
//   %out    = aten.matmul.default(%p16, %v)
//
// which becomes `%out = aten.scaled_dot_product_attention.default(%q, %k, %v, %mask,
// scale=0.125)`. run_decompositions()'s spelling matches too: each matmul as
// view(bmm(view(expand(a)), view(expand(b)))), the fill a scalar_tensor of where.self, kᵀ a
// permute; and so does PyTorch's own SDPA decomposition (q and kᵀ each scaled, the mask added,
// softmax, then the _safe_softmax guard that zeroes rows with no visible key, which is the
// kernels' rule for such rows). Why it is the same computation, and where it would not be:
//   - The scores are float32 or float64 (SDPA computes them in float, or double for float64,
//     as the matmul did); 16-bit scores would be rounded per op by eager, so they stay as
//     written.
//   - A float mask is added to the scaled scores, exactly as the kernels add one. A `where`
//     that replaces hidden scores by a finite fill <= -1e30 becomes the float mask
//     where(keep, 0, fill): score + fill rounds to fill for any score below ~1e22 (half the
//     spacing of floats near 1e30), so every hidden score is the fill as in eager; a row with
//     no visible key is then all fill and averages v uniformly, as eager's softmax does, and
//     elsewhere exp(fill - max) is 0. A fill of -inf (eager: NaN rows) or a milder one (a
//     fully hidden row would not be uniform) is left as written.
//   - The probabilities cast to a 16-bit type before the product with v of that type: eager
//     computes the scores in float32 from q and k that are float32 copies of that type, so
//     the attention runs in that type on q and k as they were before the cast (products of
//     16-bit numbers are exact in float32, and the kernels round P to the 16-bit type for
//     P·V as eager's cast does). Otherwise (q or k computed in float32) it stays as written.
//   - Every intermediate is read only by the next op and is not returned; the scale is a
//     number; softmax runs over the last dim; q, k and v have the same rank (>= 3) and the same
//     batch dims, and the mask broadcasts into the scores (not the other way round).
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <variant>
#include <vector>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// Fills at or below this are "minus infinity, but finite" (see the header).
constexpr double kLargestFill = -1e30;

bool is_float_or_double(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

// A `_to_copy` that changes only the dtype (no device, layout or pinning), else nullptr.
const Node* dtype_cast(const Value* v) {
  const Node* node = producer_if(v, OpId::_to_copy);
  if (node == nullptr) return nullptr;
  for (std::string_view arg : {"layout", "device", "pin_memory"})
    if (!node->arg(arg).is_none() &&
        !(arg == "pin_memory" && node->arg(arg).is<bool>() && !node->arg(arg).as<bool>()))
      return nullptr;
  return node->arg("dtype").is<DType>() ? node : nullptr;
}

// A matrix product of two tensors of one rank >= 3 and equal batch dims: matmul(a, b), or what
// run_decompositions() makes of it, view(bmm(view(expand(a)), view(expand(b)))) with each expand
// keeping its input's shape and each view flattening the batch dims (row-major, as matmul's
// batching).
struct Product {
  Value* a = nullptr;
  Value* b = nullptr;
  Node* node = nullptr;  // the node producing the product: matmul, or the outer view
  Node* bmm = nullptr;   // the decomposed form's bmm, or nullptr
};

// The batched operand `f` of a bmm as the unflattened tensor it views: view(expand(x)) with an
// expand that keeps x's shape, or view(x).
Value* unflattened(Value* f) {
  const Node* view = f == nullptr ? nullptr : f->producer();
  // The view may have other readers (the prefix keys of every flow-matching step share one);
  // it stays for them.
  if (view == nullptr || (view->op_id() != OpId::view && view->op_id() != OpId::_unsafe_view &&
                          view->op_id() != OpId::reshape))
    return nullptr;
  Value* x = tensor_arg(*view, "self");
  if (const Node* e = x == nullptr ? nullptr : producer_if(x, OpId::expand)) {
    Value* in = tensor_arg(*e, "self");
    if (in == nullptr || !(in->type() == x->type())) return nullptr;
    x = in;
  }
  return x;
}

std::optional<Product> match_product(const ir::Graph& graph, const Value* out) {
  Node* n = out == nullptr ? nullptr : out->producer();
  if (n == nullptr) return std::nullopt;
  Product p{nullptr, nullptr, n, nullptr};
  if (n->op_id() == OpId::matmul) {
    p.a = tensor_arg(*n, "self");
    p.b = tensor_arg(*n, "other");
  } else if (n->op_id() == OpId::view || n->op_id() == OpId::_unsafe_view) {
    Value* flat = tensor_arg(*n, "self");
    p.bmm = flat == nullptr ? nullptr : producer_if(flat, OpId::bmm);
    if (p.bmm == nullptr || only_reader(graph, flat) != n) return std::nullopt;
    p.a = unflattened(tensor_arg(*p.bmm, "self"));
    p.b = unflattened(tensor_arg(*p.bmm, "mat2"));
  }
  if (p.a == nullptr || p.b == nullptr) return std::nullopt;
  const ir::TensorType &at = p.a->type(), &bt = p.b->type(), &ot = out->type();
  const int64_t r = at.rank();
  if (r < 3 || bt.rank() != r || ot.rank() != r) return std::nullopt;
  for (int64_t d = 0; d < r - 2; ++d)
    if (!(at.sizes[d] == bt.sizes[d]) || !(at.sizes[d] == ot.sizes[d])) return std::nullopt;
  if (!(ot.sizes[r - 2] == at.sizes[r - 2]) || !(ot.sizes[r - 1] == bt.sizes[r - 1]))
    return std::nullopt;
  return p;
}

// The product reading `p` as its left operand, directly or (decomposed) through the view of an
// expand that keeps its shape.
std::optional<Product> product_reading(const ir::Graph& graph, const Value* p) {
  Node* next = only_reader(graph, p);
  if (next == nullptr) return std::nullopt;
  if (next->op_id() == OpId::matmul) {
    if (tensor_arg(*next, "self") != p) return std::nullopt;
    return match_product(graph, next->output());
  }
  if (next->op_id() == OpId::expand) {
    if (!(next->output()->type() == p->type())) return std::nullopt;
    next = only_reader(graph, next->output());
  }
  if (next == nullptr || (next->op_id() != OpId::view && next->op_id() != OpId::_unsafe_view))
    return std::nullopt;
  Node* bmm = only_reader(graph, next->output());
  if (bmm == nullptr || bmm->op_id() != OpId::bmm || tensor_arg(*bmm, "self") != next->output())
    return std::nullopt;
  const Node* outer = only_reader(graph, bmm->output());
  std::optional<Product> product =
      match_product(graph, outer == nullptr ? nullptr : outer->output());
  if (!product || product->a != p) return std::nullopt;
  return product;
}

// A permute that swaps the last two of `rank` dims and keeps the others.
bool swaps_last_two(const Node& permute, int64_t rank) {
  const Arg& dims = permute.arg("dims");
  if (!dims.is<std::vector<ir::SymIntArg>>()) return false;
  const auto& list = dims.as<std::vector<ir::SymIntArg>>();
  if (static_cast<int64_t>(list.size()) != rank) return false;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t* c = std::get_if<int64_t>(&list[i]);
    const int64_t want = i == rank - 2 ? rank - 1 : i == rank - 1 ? rank - 2 : i;
    if (c == nullptr || wrap_dim(*c, rank) != want) return false;
  }
  return true;
}

// `v` read through views that end in the shape they started from (run_decompositions() leaves
// view(view(x, flat), shape of x) between the scale and the mask), each read only by the next.
Value* through_same_shape_views(const ir::Graph& graph, Value* v) {
  Value* cur = v;
  while (cur->producer() != nullptr && (cur->producer()->op_id() == OpId::view ||
                                        cur->producer()->op_id() == OpId::_unsafe_view)) {
    Value* in = tensor_arg(*cur->producer(), "self");
    if (in == nullptr || only_reader(graph, in) != cur->producer()) break;
    cur = in;
    if (cur->type() == v->type()) return cur;
  }
  return v;
}

// The guard PyTorch's decomposed SDPA puts after its softmax (_safe_softmax): rows whose
// scores are all -inf get probabilities 0 instead of NaN,
//   %eq = eq.Scalar(%scores, -inf); %n = logical_not(%eq); %any = any.dim(%n, -1, True)
//   %none = logical_not(%any); %zeros = full_like(%p, 0); %guarded = where.self(%none, %zeros, %p)
// which is the fused kernels' own rule for such rows (output 0).
struct SafeGuard {
  std::vector<Node*> nodes;  // where, full_like, logical_not, any, logical_not, eq
  Value* probs = nullptr;    // the guarded probabilities
};

std::optional<SafeGuard> match_safe_guard(const ir::Graph& graph, const Node* softmax) {
  const Value* scores = tensor_arg(*softmax, "self");
  Value* p = softmax->output();
  if (scores == nullptr || p == nullptr || is_graph_output(graph, scores)) return std::nullopt;
  Node* eq = nullptr;
  for (Node* n : graph.users(scores)) {
    if (n == softmax || is_metadata_assert(*n)) continue;
    if (eq != nullptr || n->op_id() != OpId::eq_Scalar) return std::nullopt;
    eq = n;
  }
  const std::optional<double> inf =
      eq == nullptr ? std::nullopt : constant_number(eq->arg("other"));
  if (!inf || !std::isinf(*inf) || *inf > 0) return std::nullopt;
  Node* visible = only_reader(graph, eq->output());
  if (visible == nullptr || visible->op_id() != OpId::logical_not) return std::nullopt;
  Node* any = only_reader(graph, visible->output());
  if (any == nullptr || any->op_id() != OpId::any_dim ||
      wrap_dim(constant_int(any->arg("dim")).value_or(-999), scores->type().rank()) !=
          scores->type().rank() - 1 ||
      !any->arg("keepdim").is<bool>() || !any->arg("keepdim").as<bool>())
    return std::nullopt;
  Node* none = only_reader(graph, any->output());
  if (none == nullptr || none->op_id() != OpId::logical_not) return std::nullopt;
  Node* where = only_reader(graph, none->output());
  if (where == nullptr || where->op_id() != OpId::where_self ||
      tensor_arg(*where, "condition") != none->output() || tensor_arg(*where, "other") != p)
    return std::nullopt;
  Node* zeros = producer_if(tensor_arg(*where, "self"), OpId::full_like);
  if (zeros == nullptr || tensor_arg(*zeros, "self") != p ||
      constant_number(zeros->arg("fill_value")) != 0.0 ||
      only_reader(graph, zeros->output()) != where)
    return std::nullopt;
  // The probabilities go to the guard only.
  for (Node* n : graph.users(p))
    if (n != zeros && n != where && !is_metadata_assert(*n)) return std::nullopt;
  return SafeGuard{{where, zeros, none, any, visible, eq}, where->output()};
}

struct Match {
  Product scores;          // q·kt
  Node* scaled = nullptr;  // mul / div by a number, or nullptr
  Node* masked = nullptr;  // where / add, or nullptr
  Node* softmax = nullptr;
  std::vector<Node*> guard;    // the safe-softmax guard's nodes, or none
  Node* prob_clone = nullptr;  // clone of the probabilities (eval-mode dropout), or nullptr
  Node* prob_cast = nullptr;   // _to_copy of the probabilities, or nullptr
  Product product;             // p·v
  double scale = 1.0;
  Value* keep = nullptr;        // where's bool mask
  double fill = 0.0;            // where's fill
  Value* float_mask = nullptr;  // add's float mask
};

// A where's fill: a number, or (decomposed) a scalar_tensor of the scores' dtype.
std::optional<double> fill_of(const Node& where, DType scores) {
  if (where.op_id() == OpId::where_ScalarOther) return constant_number(where.arg("other"));
  const Node* t = producer_if(tensor_arg(where, "other"), OpId::scalar_tensor);
  if (t == nullptr || !t->output()->type().sizes.empty() || t->output()->type().dtype != scores)
    return std::nullopt;
  return constant_number(t->arg("s"));
}

// Matches the chain around `softmax`; nullopt when any guard fails.
std::optional<Match> match(const ir::Graph& graph, Node* softmax) {
  Match m;
  m.softmax = softmax;
  Value* in = tensor_arg(*softmax, "self");
  std::optional<SafeGuard> guard = match_safe_guard(graph, softmax);
  if (in == nullptr || (!guard && only_reader(graph, in) != softmax)) return std::nullopt;
  const ir::TensorType& st = in->type();
  const std::optional<int64_t> dim =
      wrap_dim(constant_int(softmax->arg("dim")).value_or(-999), st.rank());
  if (!dim || *dim != st.rank() - 1 || !is_float_or_double(st.dtype)) return std::nullopt;
  if (softmax->op_id() == OpId::softmax_int) {
    const Arg& dtype = softmax->arg("dtype");
    if (!dtype.is_none() && !(dtype.is<DType>() && dtype.as<DType>() == st.dtype))
      return std::nullopt;
  } else if (!softmax->arg("half_to_float").is<bool>() ||
             softmax->arg("half_to_float").as<bool>()) {
    return std::nullopt;
  }
  // The mask: where(keep, scaled, fill) or scaled + float_mask.
  Value* scaled = in;
  Node* w = producer_if(in, OpId::where_ScalarOther);
  if (w == nullptr) w = producer_if(in, OpId::where_self);
  if (w != nullptr) {
    const std::optional<double> fill = fill_of(*w, st.dtype);
    Value* keep = tensor_arg(*w, "condition");
    Value* self = tensor_arg(*w, "self");
    // The fill becomes a float32 mask (where.Scalar's dtype): below float32's lowest it would
    // be -inf there.
    if (!fill || !std::isfinite(*fill) || *fill > kLargestFill ||
        *fill < std::numeric_limits<float>::lowest() || keep == nullptr || self == nullptr ||
        keep->type().dtype != DType::kBool || self->type() != st)
      return std::nullopt;
    m.masked = w;
    m.keep = keep;
    m.fill = *fill;
    scaled = self;
  } else if (Node* a = producer_if(in, OpId::add_Tensor)) {
    Value* self = tensor_arg(*a, "self");
    Value* other = tensor_arg(*a, "other");
    if (constant_number(a->arg("alpha")) != 1.0 || self == nullptr || other == nullptr)
      return std::nullopt;
    // The scores are the operand of the sum's type that the matmul chain computed.
    auto from_scores = [&](const Value* v) {
      const Node* p = v->producer();
      return v->type() == st && p != nullptr &&
             (p->op_id() == OpId::matmul || p->op_id() == OpId::mul_Tensor ||
              p->op_id() == OpId::div_Tensor || p->op_id() == OpId::view ||
              p->op_id() == OpId::_unsafe_view);
    };
    if (!from_scores(self)) std::swap(self, other);
    if (!from_scores(self) || !is_floating(other->type().dtype)) return std::nullopt;
    m.masked = a;
    m.float_mask = other;
    scaled = self;
  }
  if (m.masked != nullptr && only_reader(graph, scaled) != m.masked) return std::nullopt;
  scaled = through_same_shape_views(graph, scaled);
  // The scale: scores * c or scores / c with a number c.
  Value* scores = scaled;
  Node* s = producer_if(scaled, OpId::mul_Tensor);
  if (s == nullptr) s = producer_if(scaled, OpId::div_Tensor);
  if (s != nullptr) {
    Value* self = tensor_arg(*s, "self");
    const std::optional<double> c = constant_number(s->arg("other"));
    if (self == nullptr || !c || *c == 0.0 || !std::isfinite(*c) || self->type() != st ||
        only_reader(graph, self) != s)
      return std::nullopt;
    m.scaled = s;
    m.scale = s->op_id() == OpId::mul_Tensor ? *c : 1.0 / *c;
    scores = self;
  }
  std::optional<Product> product = match_product(graph, scores);
  if (!product) return std::nullopt;
  m.scores = *product;
  // The product with v, through an optional clone (what dropout in eval mode exports as) and
  // an optional dtype cast of the probabilities.
  Value* p = softmax->output();
  if (guard) {
    m.guard = guard->nodes;
    p = guard->probs;
  }
  Node* next = only_reader(graph, p);
  if (next != nullptr && next->op_id() == OpId::clone) {
    m.prob_clone = next;
    p = next->output();
    next = only_reader(graph, p);
  }
  if (next != nullptr && dtype_cast(next->output()) == next) {
    m.prob_cast = next;
    p = next->output();
  }
  product = product_reading(graph, p);
  if (!product) return std::nullopt;
  m.product = *product;
  return m;
}

class FuseWrittenAttention final : public Pass {
 public:
  std::string_view name() const override { return "fuse_written_attention"; }
  std::string_view description() const override {
    return "Attention written out op by op (matmul of q and k transposed, an optional scale by "
           "a number, an optional where-fill or added float mask, softmax over the last dim, "
           "an optional cast of the probabilities, matmul with v; in either form, and "
           "PyTorch's own SDPA decomposition with its safe-softmax guard) becomes one "
           "scaled_dot_product_attention, where that computes the same: float32 or float64 "
           "scores, a where fill of at most -1e30 (turned into an added float mask), a cast of "
           "the probabilities only where q and k are float32 copies of that dtype (the "
           "attention then runs in it), every intermediate read only by the next op.";
  }

  Result<bool> run(ir::Program& program) override {
    Rewriter rw(program);
    bool changed = false;
    // The softmaxes first: a fusion erases nodes after its softmax, never another softmax.
    std::vector<Node*> softmaxes;
    for (Node* node : node_snapshot(program.graph))
      if (node->op_id() == OpId::softmax_int || node->op_id() == OpId::_softmax)
        softmaxes.push_back(node);
    masks_.clear();
    for (Node* node : softmaxes) {
      std::optional<Match> m = match(program.graph, node);
      if (!m) continue;
      SPLICE_ASSIGN_OR_RETURN(bool fused, fuse(rw, *m));
      changed |= fused;
    }
    return changed;
  }

 private:
  // k from kt = k.transpose(-2, -1): the transpose's input when kt is one, else a new one.
  static Result<Value*> untransposed(Rewriter& rw, const Node* before, Value* kt) {
    const int64_t r = kt->type().rank();
    if (const Node* t = producer_if(kt, OpId::transpose_int)) {
      auto d0 = wrap_dim(constant_int(t->arg("dim0")).value_or(-999), r);
      auto d1 = wrap_dim(constant_int(t->arg("dim1")).value_or(-999), r);
      if (d0 && d1 && std::min(*d0, *d1) == r - 2 && std::max(*d0, *d1) == r - 1)
        return tensor_arg(*t, "self");
    }
    // run_decompositions() writes the transpose as a permute swapping the last two dims.
    if (const Node* t = producer_if(kt, OpId::permute); t && swaps_last_two(*t, r))
      return tensor_arg(*t, "self");
    return rw.insert_value(before, OpId::transpose_int,
                           {Arg{kt}, Arg{int64_t{-2}}, Arg{int64_t{-1}}}, {}, "transpose");
  }

  // `x` computed in `wide` as views of a cast of a `narrow` tensor y: the same views of y
  // (rebuilt before `before`), else nullptr.
  static Result<Value*> narrow_source(Rewriter& rw, const Node* before, Value* x, DType narrow) {
    std::vector<const Node*> views;
    const Value* cur = x;
    while (cur->producer() != nullptr && is_value_preserving_view(cur->producer()->op_id())) {
      views.push_back(cur->producer());
      cur = tensor_arg(*cur->producer(), "self");
      if (cur == nullptr) return static_cast<Value*>(nullptr);
    }
    const Node* cast = dtype_cast(cur);
    Value* y = cast == nullptr ? nullptr : tensor_arg(*cast, "self");
    if (y == nullptr || y->type().dtype != narrow) return static_cast<Value*>(nullptr);
    for (auto it = views.rbegin(); it != views.rend(); ++it) {
      std::vector<Arg> args = (*it)->args();
      args[0] = Arg{y};
      SPLICE_ASSIGN_OR_RETURN(
          y, rw.insert_value(before, (*it)->op_id(), std::move(args), {}, (*it)->output()->name()));
    }
    return y;
  }

  Result<bool> fuse(Rewriter& rw, const Match& m) {
    ir::Graph& graph = rw.graph();
    Value* q = m.scores.a;
    Value* kt = m.scores.b;
    Value* v = m.product.b;
    // Both products checked their own operands' batch dims; q's and v's agree through p.
    const ir::TensorType &qt = q->type(), &vt = v->type();
    // Scales on the operands (PyTorch's decomposed SDPA multiplies q and kᵀ by the square root
    // of the scale each) join the scale: (q·c1)·(kᵀ·c2) = (q·kᵀ)·c1·c2, up to rounding.
    double scale = m.scale;
    std::vector<Node*> operand_scales;
    for (Value** side : {&q, &kt}) {
      Node* mul = producer_if(*side, OpId::mul_Scalar);
      if (mul == nullptr) mul = producer_if(*side, OpId::mul_Tensor);
      Value* in = mul == nullptr ? nullptr : tensor_arg(*mul, "self");
      const std::optional<double> c =
          mul == nullptr ? std::nullopt : constant_number(mul->arg("other"));
      if (in == nullptr || !c || !std::isfinite(*c) || !(in->type() == (*side)->type())) continue;
      scale *= *c;
      *side = in;
      operand_scales.push_back(mul);
    }
    // Where the probabilities are cast, q and k must be wide copies of v's dtype.
    const Node* before = m.product.node;
    if (m.prob_cast != nullptr) {
      const DType narrow = m.prob_cast->output()->type().dtype;
      if (vt.dtype != narrow || narrow == DType::kFloat32 || narrow == DType::kFloat64)
        return false;
      SPLICE_ASSIGN_OR_RETURN(Value * q16, narrow_source(rw, before, q, narrow));
      if (q16 == nullptr) return false;
      SPLICE_ASSIGN_OR_RETURN(Value * kt16, narrow_source(rw, before, kt, narrow));
      if (kt16 == nullptr) {
        erase_unread_views(graph, q16);
        return false;
      }
      q = q16;
      kt = kt16;
    } else if (vt.dtype != qt.dtype) {
      return false;
    }
    SPLICE_ASSIGN_OR_RETURN(Value * k, untransposed(rw, before, kt));
    Value* mask = m.float_mask;
    if (m.keep != nullptr) {
      // One float mask per bool mask and fill: the layers and steps of a model share theirs.
      // It goes before the first softmax that needs it: the softmaxes are visited in program
      // order and each precedes its own product, so the mask precedes every product using it.
      Value*& shared = masks_[{m.keep, std::bit_cast<uint64_t>(m.fill)}];
      if (shared == nullptr) {
        SPLICE_ASSIGN_OR_RETURN(
            shared, rw.insert_value(m.softmax, OpId::where_Scalar,
                                    {Arg{m.keep}, Arg{0.0}, Arg{m.fill}}, {}, "attn_mask"));
      }
      mask = shared;
    }
    std::vector<Arg> args = {Arg{q}, Arg{k}, Arg{v}};
    args.push_back(mask == nullptr ? Arg{} : Arg{mask});
    SPLICE_TRY(rw.replace(m.product.node, OpId::scaled_dot_product_attention, std::move(args),
                          {{"scale", Arg{scale}}}));
    // A rebuilt kt that k reads through (k is its transpose's input) is read by nothing now.
    erase_unread_views(graph, kt);
    // The chain, last to first, then what only it read (views between its members
    // included). Every member goes before any view is followed, so no member is met twice.
    std::vector<Value*> read;
    std::vector<Node*> chain = {m.product.bmm, m.prob_cast, m.prob_clone};
    chain.insert(chain.end(), m.guard.begin(), m.guard.end());
    chain.insert(chain.end(), {m.softmax, m.masked, m.scaled, m.scores.node, m.scores.bmm});
    for (Node* n : chain) {
      if (n == nullptr) continue;
      for (Value* operand : n->operands()) read.push_back(operand);
      erase_with_asserts(graph, n);
    }
    for (Value* operand : read) {
      // The decomposed form's fill, a scalar_tensor, goes with its where.
      if (Node* fill = producer_if(operand, OpId::scalar_tensor); fill && !is_used(graph, operand))
        erase_with_asserts(graph, fill);
      else
        erase_unread_views(graph, operand);
    }
    // Operand scales last: the views that read them went above.
    for (Node* mul : operand_scales) {
      if (is_used(graph, mul->output())) continue;
      Value* in = tensor_arg(*mul, "self");
      erase_with_asserts(graph, mul);
      erase_unread_views(graph, in);
    }
    return true;
  }

  std::map<std::pair<const Value*, uint64_t>, Value*> masks_;  // (keep, fill bits) -> mask
};

}  // namespace

std::unique_ptr<Pass> make_fuse_written_attention() {
  return std::make_unique<FuseWrittenAttention>();
}

}  // namespace splice::passes
