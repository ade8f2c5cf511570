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
// scale=0.125)`. Why it is the same computation, and where it would not be:
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

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace splice::passes {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

// Fills at or below this are "minus infinity, but finite" (see the header).
constexpr double kLargestFill = -1e30;

std::optional<double> number(const Arg& arg) {
  if (arg.is<double>()) return arg.as<double>();
  if (arg.is<int64_t>()) return static_cast<double>(arg.as<int64_t>());
  return std::nullopt;
}

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

struct Match {
  Node* scores = nullptr;  // matmul(q, kt)
  Node* scaled = nullptr;  // mul / div by a number, or nullptr
  Node* masked = nullptr;  // where / add, or nullptr
  Node* softmax = nullptr;
  Node* prob_clone = nullptr;  // clone of the probabilities (eval-mode dropout), or nullptr
  Node* prob_cast = nullptr;   // _to_copy of the probabilities, or nullptr
  Node* product = nullptr;     // matmul(p, v)
  double scale = 1.0;
  Value* keep = nullptr;        // where's bool mask
  double fill = 0.0;            // where's fill
  Value* float_mask = nullptr;  // add's float mask
};

// Matches the chain around `softmax`; nullopt when any guard fails.
std::optional<Match> match(const ir::Graph& graph, Node* softmax) {
  Match m;
  m.softmax = softmax;
  Value* in = tensor_arg(*softmax, "self");
  if (in == nullptr || only_reader(graph, in) != softmax) return std::nullopt;
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
  if (Node* w = producer_if(in, OpId::where_ScalarOther)) {
    const std::optional<double> fill = number(w->arg("other"));
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
    if (number(a->arg("alpha")) != 1.0 || self == nullptr || other == nullptr) return std::nullopt;
    // The scores are the operand of the sum's type that the matmul chain computed.
    auto from_scores = [&](const Value* v) {
      const Node* p = v->producer();
      return v->type() == st && p != nullptr &&
             (p->op_id() == OpId::matmul || p->op_id() == OpId::mul_Tensor ||
              p->op_id() == OpId::div_Tensor);
    };
    if (!from_scores(self)) std::swap(self, other);
    if (!from_scores(self) || !is_floating(other->type().dtype)) return std::nullopt;
    m.masked = a;
    m.float_mask = other;
    scaled = self;
  }
  if (m.masked != nullptr && only_reader(graph, scaled) != m.masked) return std::nullopt;
  // The scale: scores * c or scores / c with a number c.
  Value* scores = scaled;
  Node* s = producer_if(scaled, OpId::mul_Tensor);
  if (s == nullptr) s = producer_if(scaled, OpId::div_Tensor);
  if (s != nullptr) {
    Value* self = tensor_arg(*s, "self");
    const std::optional<double> c = number(s->arg("other"));
    if (self == nullptr || !c || *c == 0.0 || !std::isfinite(*c) || self->type() != st ||
        only_reader(graph, self) != s)
      return std::nullopt;
    m.scaled = s;
    m.scale = s->op_id() == OpId::mul_Tensor ? *c : 1.0 / *c;
    scores = self;
  }
  m.scores = producer_if(scores, OpId::matmul);
  if (m.scores == nullptr) return std::nullopt;
  // The product with v, through an optional clone (what dropout in eval mode exports as) and
  // an optional dtype cast of the probabilities.
  Value* p = softmax->output();
  Node* next = only_reader(graph, p);
  if (next != nullptr && next->op_id() == OpId::clone) {
    m.prob_clone = next;
    p = next->output();
    next = only_reader(graph, p);
  }
  if (next != nullptr && dtype_cast(next->output()) == next) {
    m.prob_cast = next;
    p = next->output();
    next = only_reader(graph, p);
  }
  if (next == nullptr || next->op_id() != OpId::matmul || tensor_arg(*next, "self") != p)
    return std::nullopt;
  m.product = next;
  return m;
}

class FuseWrittenAttention final : public Pass {
 public:
  std::string_view name() const override { return "fuse_written_attention"; }
  std::string_view description() const override {
    return "Attention written out op by op (matmul of q and k transposed, an optional scale by "
           "a number, an optional where-fill or added float mask, softmax over the last dim, "
           "an optional cast of the probabilities, matmul with v) becomes one "
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
    Value* q = tensor_arg(*m.scores, "self");
    Value* kt = tensor_arg(*m.scores, "other");
    Value* v = tensor_arg(*m.product, "other");
    if (q == nullptr || kt == nullptr || v == nullptr) return false;
    const ir::TensorType &qt = q->type(), &ktt = kt->type(), &vt = v->type();
    const int64_t r = qt.rank();
    if (r < 3 || ktt.rank() != r || vt.rank() != r) return false;
    for (int64_t d = 0; d < r - 2; ++d)
      if (!(qt.sizes[d] == ktt.sizes[d]) || !(qt.sizes[d] == vt.sizes[d])) return false;
    // Where the probabilities are cast, q and k must be wide copies of v's dtype.
    const Node* before = m.product;
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
    SPLICE_TRY(rw.replace(m.product, OpId::scaled_dot_product_attention, std::move(args),
                          {{"scale", Arg{m.scale}}}));
    // A rebuilt kt that k reads through (k is its transpose's input) is read by nothing now.
    erase_unread_views(graph, kt);
    // The chain, last to first, then what only it read.
    for (Node* n : {m.prob_cast, m.prob_clone, m.softmax, m.masked, m.scaled, m.scores}) {
      if (n == nullptr) continue;
      std::vector<Value*> operands = n->operands();
      erase_with_asserts(graph, n);
      for (Value* operand : operands) erase_unread_views(graph, operand);
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
