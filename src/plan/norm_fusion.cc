// RMSNorm chains (see norm_fusion.h): matched outward from the mean, one guard clause per
// condition, each refusal naming the node and the reason.
#include "plan/norm_fusion.h"

#include <algorithm>
#include <optional>
#include <set>

#include "ir/ops.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::OpId;
using ir::Value;

Error refuse(const Node& mean, const std::string& why) {
  return make_error(ErrorKind::kUnsupportedOp, "'{}' is not an RMSNorm's mean: {}", mean.name(),
                    why);
}

const Value* tensor_arg(const Node& n, size_t i) {
  if (i >= n.args().size()) return nullptr;
  auto* v = std::get_if<Value*>(&n.arg(i).data);
  return v != nullptr && *v != nullptr && (*v)->is_tensor() ? *v : nullptr;
}

std::optional<double> number_arg(const Node& n, size_t i) {
  if (i >= n.args().size()) return std::nullopt;
  const auto& d = n.arg(i).data;
  if (auto* x = std::get_if<double>(&d)) return *x;
  if (auto* k = std::get_if<int64_t>(&d)) return static_cast<double>(*k);
  return std::nullopt;
}

// add.Tensor / add.Scalar's alpha (argument 2) is 1, or absent.
bool alpha_is_one(const Node& n) {
  if (n.args().size() <= 2 || n.arg(2).is_none()) return true;
  auto a = number_arg(n, 2);
  return a && *a == 1.0;
}

bool is_norm_dtype(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32;
}

const Value* out_of(const Node& n) {
  return n.outputs().size() == 1 && n.output(0) != nullptr && n.output(0)->is_tensor() ? n.output(0)
                                                                                       : nullptr;
}

class Matcher {
 public:
  Matcher(const ir::Graph& graph, const GraphUses& uses,
          const std::function<bool(const Value*)>& pinned)
      : nodes_(graph.nodes()), uses_(uses), pinned_(pinned) {}

  Result<RmsNormChain> run(int32_t m, bool fuse_add) {
    const Node& mean = *nodes_[m];
    if (mean.op_id() != OpId::mean_dim) return refuse(mean, "not aten.mean.dim");
    const Value* sq = tensor_arg(mean, 0);
    const Value* mv = out_of(mean);
    // The statistics' dtype: float32 where the model upcasts, else the model's own.
    if (sq == nullptr || mv == nullptr || !is_norm_dtype(sq->type().dtype) ||
        mv->type().dtype != sq->type().dtype)
      return refuse(mean, "it does not reduce a float16, bfloat16 or float32 tensor to its dtype");
    const DType stat = sq->type().dtype;
    const int64_t rank = static_cast<int64_t>(sq->type().rank());
    const auto* dims = std::get_if<std::vector<ir::SymIntArg>>(&mean.arg(1).data);
    const int64_t* dim =
        dims != nullptr && dims->size() == 1 ? std::get_if<int64_t>(&dims->front()) : nullptr;
    if (rank < 1 || dim == nullptr || (*dim != -1 && *dim != rank - 1))
      return refuse(mean, "it does not reduce the last dim alone");
    const auto* keep = std::get_if<bool>(&mean.arg(2).data);
    if (keep == nullptr || !*keep) return refuse(mean, "it does not keep the reduced dim");
    if (mean.args().size() > 3 && !mean.arg(3).is_none()) return refuse(mean, "it names a dtype");
    const auto& sizes = sq->type().sizes;

    // sq = xf * xf (or xf ** 2), read by the mean alone.
    const Node* sqn = sq->producer();
    if (sqn == nullptr) return refuse(mean, "its input is not computed by the program");
    const Value* xf = tensor_arg(*sqn, 0);
    const bool square =
        (sqn->op_id() == OpId::mul_Tensor && xf != nullptr && tensor_arg(*sqn, 1) == xf) ||
        (sqn->op_id() == OpId::pow_Tensor_Scalar && xf != nullptr && number_arg(*sqn, 1) == 2.0);
    if (!square) return refuse(mean, fmt::format("'{}' is not x * x", sqn->name()));
    if (xf->type().sizes != sizes || xf->type().dtype != stat)
      return refuse(mean,
                    fmt::format("'{}' does not have the mean's input sizes and dtype", xf->name()));
    SPLICE_TRY(only_reader(mean, sq, m));

    // v = m + eps; r = rsqrt(v); y = xf * r — each read by the next alone.
    SPLICE_ASSIGN_OR_RETURN(int32_t addn, sole_reader(mean, mv));
    const Node& add_eps = *nodes_[addn];
    const auto eps = number_arg(add_eps, 1);
    if ((add_eps.op_id() != OpId::add_Tensor && add_eps.op_id() != OpId::add_Scalar) ||
        tensor_arg(add_eps, 0) != mv || !eps || !alpha_is_one(add_eps) ||
        out_of(add_eps) == nullptr || out_of(add_eps)->type().dtype != stat)
      return refuse(mean, fmt::format("'{}' does not add a number to it", add_eps.name()));
    SPLICE_ASSIGN_OR_RETURN(int32_t rn, sole_reader(mean, out_of(add_eps)));
    const Node& rsqrt = *nodes_[rn];
    if (rsqrt.op_id() != OpId::rsqrt || out_of(rsqrt) == nullptr ||
        out_of(rsqrt)->type().dtype != stat)
      return refuse(mean, fmt::format("'{}' is not rsqrt in {}", rsqrt.name(), dtype_name(stat)));
    const Value* r = out_of(rsqrt);
    SPLICE_ASSIGN_OR_RETURN(int32_t yn, sole_reader(mean, r));
    const Node& ynode = *nodes_[yn];
    const Value* y = out_of(ynode);
    const Value* y0 = tensor_arg(ynode, 0);
    const Value* y1 = tensor_arg(ynode, 1);
    if (ynode.op_id() != OpId::mul_Tensor || y == nullptr ||
        !((y0 == xf && y1 == r) || (y0 == r && y1 == xf)) || y->type().sizes != sizes ||
        y->type().dtype != stat)
      return refuse(mean, fmt::format("'{}' does not scale the input by the rsqrt", ynode.name()));

    RmsNormChain c;
    c.eps = *eps;
    c.stat = stat;
    c.cast = stat;
    std::vector<int32_t> members = {position(sqn), m, addn, rn, yn};
    // Values only the chain reads (never stored): they must not leave it.
    std::vector<const Value*> internal = {sq, mv, out_of(add_eps), r};

    // xf: a cast of the input to float32 (a member), or the input itself.
    const Value* a = xf;
    const Node* xcast = xf->producer();
    if (xcast != nullptr && xcast->op_id() == OpId::_to_copy && tensor_arg(*xcast, 0) != nullptr &&
        tensor_arg(*xcast, 0)->type().sizes == sizes) {
      a = tensor_arg(*xcast, 0);
      std::set<int32_t> readers;
      if (auto it = uses_.users.find(xf); it != uses_.users.end())
        readers.insert(it->second.begin(), it->second.end());
      if (readers != std::set<int32_t>{position(sqn), yn})
        return refuse(mean,
                      fmt::format("'{}' (the input in float32) has other readers", xf->name()));
      members.push_back(position(xcast));
      internal.push_back(xf);
    }
    if (!is_norm_dtype(a->type().dtype))
      return refuse(mean, fmt::format("its input '{}' is {}, not float16, bfloat16 or float32",
                                      a->name(), dtype_name(a->type().dtype)));

    // The tail: an optional cast of y, then an optional multiply by the weight.
    const Value* cur = y;
    SPLICE_ASSIGN_OR_RETURN(int32_t next, sole_reader(mean, y, /*none_ok=*/true));
    if (next >= 0 && nodes_[next]->op_id() == OpId::_to_copy && out_of(*nodes_[next]) &&
        out_of(*nodes_[next])->type().sizes == sizes &&
        is_norm_dtype(out_of(*nodes_[next])->type().dtype)) {
      internal.push_back(cur);
      cur = out_of(*nodes_[next]);
      c.cast = cur->type().dtype;
      members.push_back(next);
      SPLICE_ASSIGN_OR_RETURN(next, sole_reader(mean, cur, /*none_ok=*/true));
    }
    if (next >= 0 && nodes_[next]->op_id() == OpId::mul_Tensor) {
      const Node& wn = *nodes_[next];
      const Value* w0 = tensor_arg(wn, 0);
      const Value* w1 = tensor_arg(wn, 1);
      const Value* w = w0 == cur ? w1 : w1 == cur ? w0 : nullptr;
      if (w != nullptr && w != cur && is_weight(*w, sizes) && out_of(wn) != nullptr &&
          out_of(wn)->type().sizes == sizes && is_norm_dtype(out_of(wn)->type().dtype)) {
        internal.push_back(cur);
        c.weight = w;
        cur = out_of(wn);
        members.push_back(next);
      }
    }
    c.out = cur;
    if (!is_norm_dtype(c.out->type().dtype))
      return refuse(mean,
                    fmt::format("'{}' is {}", c.out->name(), dtype_name(c.out->type().dtype)));
    for (const Value* v : internal)
      if (uses_.outputs.count(v) || (pinned_ && pinned_(v)))
        return refuse(mean, fmt::format("'{}' is needed outside the chain", v->name()));
    if (pinned_ && pinned_(c.out))
      return refuse(mean, fmt::format("'{}' is stored into a write's destination by its producer",
                                      c.out->name()));
    std::sort(members.begin(), members.end());
    SPLICE_TRY(contiguous(mean, members));

    // The residual add before it: a = x + residual, same sizes and dtype, right before.
    c.x = a;
    const Node* addr = a->producer();
    if (fuse_add && addr != nullptr && addr->op_id() == OpId::add_Tensor && alpha_is_one(*addr) &&
        !(pinned_ && pinned_(a))) {
      const Value* x0 = tensor_arg(*addr, 0);
      const Value* x1 = tensor_arg(*addr, 1);
      std::vector<int32_t> with_add = members;
      with_add.insert(with_add.begin(), position(addr));
      if (x0 != nullptr && x1 != nullptr && x0->type() == a->type() && x1->type() == a->type() &&
          contiguous(mean, with_add).ok()) {
        c.x = x0;
        c.residual = x1;
        c.sum = a;
        members = std::move(with_add);
      }
    }
    c.nodes = std::move(members);
    return c;
  }

 private:
  int32_t position(const Node* n) const { return uses_.position.at(n); }

  // The one node that reads v (several reads by one node count once); -1 when none reads it
  // and none_ok.
  Result<int32_t> sole_reader(const Node& mean, const Value* v, bool none_ok = false) const {
    auto it = uses_.users.find(v);
    std::set<int32_t> readers;
    if (it != uses_.users.end()) readers.insert(it->second.begin(), it->second.end());
    if (readers.empty() && none_ok) return -1;
    if (readers.size() != 1)
      return refuse(mean, fmt::format("'{}' has {} readers, not one", v->name(), readers.size()));
    return *readers.begin();
  }

  Result<void> only_reader(const Node& mean, const Value* v, int32_t reader) const {
    SPLICE_ASSIGN_OR_RETURN(int32_t r, sole_reader(mean, v));
    if (r != reader) return refuse(mean, fmt::format("'{}' is read elsewhere", v->name()));
    return ok_result();
  }

  // A weight broadcast along the rows: [H], or 1, .., 1, H.
  static bool is_weight(const Value& w, const std::vector<SymExpr>& sizes) {
    const auto& ws = w.type().sizes;
    if (ws.empty() || ws.size() > sizes.size() || !(ws.back() == sizes.back()) ||
        !is_norm_dtype(w.type().dtype))
      return false;
    for (size_t d = 0; d + 1 < ws.size(); ++d) {
      auto c = ws[d].constant();
      if (!c || *c != 1) return false;
    }
    return true;
  }

  // Between the first and the last member only members and _assert_tensor_metadata run, so
  // the kernel may run where the last member was.
  Result<void> contiguous(const Node& mean, const std::vector<int32_t>& members) const {
    std::set<int32_t> in(members.begin(), members.end());
    for (int32_t p = members.front(); p <= members.back(); ++p)
      if (!in.count(p) && nodes_[p]->op_id() != OpId::_assert_tensor_metadata)
        return refuse(mean, fmt::format("'{}' runs between its members", nodes_[p]->name()));
    return ok_result();
  }

  const std::vector<std::unique_ptr<Node>>& nodes_;
  const GraphUses& uses_;
  const std::function<bool(const Value*)>& pinned_;
};

}  // namespace

GraphUses graph_uses(const ir::Graph& graph) {
  GraphUses u;
  const auto& nodes = graph.nodes();
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    u.position[nodes[pos].get()] = static_cast<int32_t>(pos);
    if (nodes[pos]->op_id() == OpId::_assert_tensor_metadata) continue;
    for (const Value* v : nodes[pos]->operands())
      if (v != nullptr) u.users[v].push_back(static_cast<int32_t>(pos));
  }
  for (const ir::GraphOutput& o : graph.outputs())
    if (auto* v = std::get_if<Value*>(&o.data); v != nullptr && *v != nullptr) u.outputs.insert(*v);
  return u;
}

Result<RmsNormChain> match_rms_norm(const ir::Graph& graph, int32_t mean, const GraphUses& uses,
                                    bool fuse_add,
                                    const std::function<bool(const ir::Value*)>& pinned) {
  if (mean < 0 || mean >= static_cast<int32_t>(graph.nodes().size()))
    return make_error(ErrorKind::kBadArchive, "plan: an RMSNorm group names node {}", mean);
  return Matcher(graph, uses, pinned).run(mean, fuse_add);
}

Result<RmsNormChain> rms_norm_of(const ir::Graph& graph, const Group& group) {
  return rms_norm_of(graph, group, graph_uses(graph));
}

Result<RmsNormChain> rms_norm_of(const ir::Graph& graph, const Group& group,
                                 const GraphUses& uses) {
  const auto& nodes = graph.nodes();
  int32_t mean = -1;
  for (int32_t n : group.nodes)
    if (n >= 0 && n < static_cast<int32_t>(nodes.size()) && nodes[n]->op_id() == OpId::mean_dim)
      mean = n;
  if (mean < 0) return make_error(ErrorKind::kBadArchive, "plan: an RMSNorm group has no mean");
  std::string why;
  for (bool fuse_add : {true, false}) {
    auto chain = match_rms_norm(graph, mean, uses, fuse_add);
    if (!chain.ok()) {
      why = chain.error().message();
      continue;
    }
    if (chain->nodes == group.nodes) return chain;
    why = "its members are not the chain's";
  }
  return make_error(ErrorKind::kBadArchive, "plan: RMSNorm group at '{}': {}", nodes[mean]->name(),
                    why);
}

}  // namespace splice::plan
