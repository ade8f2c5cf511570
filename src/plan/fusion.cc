// Pointwise fusion (see fusion.h): one pass in program order keeps an open group, the nodes
// that may run before it (independent views, host nodes, empty factories, writes with
// nothing to run) and those that must run right after it (the same kinds, depending on the
// group). A node that fits joins; anything else closes the group, which then emits
// before-nodes, the group, after-nodes, in that order.
#include "plan/fusion.h"

#include <algorithm>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "ir/ops.h"
#include "plan/gemv_epilogue.h"
#include "plan/matmul_kernels.h"
#include "plan/norm_fusion.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::Value;

// The op's arguments as the lowering takes them; nullopt when one is not a constant the
// lowering can see (a symbolic scalar, a tensor list).
std::optional<std::vector<ir::OpArg>> op_args(const Node& node) {
  std::vector<ir::OpArg> out;
  for (const ir::Arg& a : node.args()) {
    const auto& d = a.data;
    if (a.is_none()) {
      out.push_back(ir::OpArg::none());
    } else if (auto* b = std::get_if<bool>(&d)) {
      out.push_back(ir::OpArg::number(Scalar(*b)));
    } else if (auto* i = std::get_if<int64_t>(&d)) {
      out.push_back(ir::OpArg::number(Scalar(*i)));
    } else if (auto* x = std::get_if<double>(&d)) {
      out.push_back(ir::OpArg::number(Scalar(*x)));
    } else if (auto* s = std::get_if<std::string>(&d)) {
      out.push_back(ir::OpArg::string(*s));
    } else if (auto* t = std::get_if<DType>(&d)) {
      out.push_back(ir::OpArg::scalar_type(*t));
    } else if (auto* v = std::get_if<Value*>(&d)) {
      if (*v == nullptr || !(*v)->is_tensor()) return std::nullopt;
      out.push_back(ir::OpArg::tensor((*v)->type().dtype, (*v)->type().rank()));
    } else if (std::holds_alternative<std::vector<ir::SymIntArg>>(d)) {
      out.push_back(ir::OpArg::none());  // sizes shape the output, not the program
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// Whether `in` broadcasts to `out` with sizes the graph records (equal expressions or 1).
bool broadcasts_to(const std::vector<SymExpr>& in, const std::vector<SymExpr>& out) {
  if (in.size() > out.size()) return false;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    const auto c = in[d].constant();
    if (!(in[d] == out[lead + d]) && !(c && *c == 1)) return false;
  }
  return true;
}

const Value* tensor_arg(const Node& node, int arg) {
  auto* v = std::get_if<Value*>(&node.arg(static_cast<size_t>(arg)).data);
  return v != nullptr ? *v : nullptr;
}

// The operand of a view whose value equals it element for element (a view, reshape, expand,
// full slice, ... that keeps its sizes and dtype), else null. A group member reading such a
// view reads the operand's value: the view costs the group nothing (q * scale, expanded to
// its own sizes and cloned contiguous for bmm, is one loop). Only ops that can only relabel
// the same elements qualify: a transpose of a square matrix keeps its sizes too.
const Value* identity_view_source(const Node& node) {
  switch (node.op_id()) {
    case ir::OpId::view:
    case ir::OpId::_unsafe_view:
    case ir::OpId::reshape:
    case ir::OpId::view_as:
    case ir::OpId::expand:
    case ir::OpId::expand_as:
    case ir::OpId::slice_Tensor:
    case ir::OpId::squeeze:
    case ir::OpId::alias:
    case ir::OpId::detach:
    case ir::OpId::contiguous:
      break;
    default:
      return nullptr;
  }
  if (node.outputs().size() != 1 || node.args().empty()) return nullptr;
  const Value* src = tensor_arg(node, 0);
  const Value* out = node.output(0);
  if (src == nullptr || out == nullptr || !src->is_tensor() || !out->is_tensor()) return nullptr;
  const ir::TensorType& a = src->type();
  const ir::TensorType& b = out->type();
  return a.dtype == b.dtype && a.sizes == b.sizes ? src : nullptr;
}

class Fuser {
 public:
  Fuser(const DataFlow& df, const WritePlanResult& wp)
      : df_(df),
        wp_(wp),
        nodes_(graph().nodes()),
        hints_(df.program->hints.begin(), df.program->hints.end()),
        uses_(graph_uses(graph())) {
    out_.group_of.assign(nodes_.size(), -1);
    // Values a write's destination receives from their producer, with the destination's root.
    for (const WriteDecision& d : wp.writes) {
      if (d.src != SrcMode::kProducerWrites || d.strategy == WriteStrategy::kFullOverwrite)
        continue;
      const Value* stored = df.stored_value(write_src(*nodes_[d.node]));
      const Value* dest = graph().find_value(d.dest_value);
      if (dest != nullptr) {
        region_root_[stored] = root(dest);
        region_write_[stored] = &d;
      }
      if (d.strategy == WriteStrategy::kCopyThenWrite) base_copy_at_.insert(d.producer);
    }
    find_norms();  // reads uses_ (whether a norm can be a GEMV's prologue)
  }

  FusionPlan run() {
    for (int pos = 0; pos < static_cast<int>(nodes_.size()); ++pos) step(pos);
    close();
    absorb_lone_producers();
    absorb_gemv_products();
    absorb_norm_prologues();
    for (size_t g = 0; g < out_.groups.size(); ++g) pick_outputs(static_cast<int>(g));
    return std::move(out_);
  }

 private:
  const ir::Graph& graph() const { return df_.program->graph; }

  // RMSNorm chains the backend runs as one kernel (norm_fusion.h), found before the pointwise
  // pass so their members never join a pointwise group; every mean that is not one says why.
  void find_norms() {
    norm_of_.assign(nodes_.size(), -1);
    if (!df_.target->fused_rms_norm) return;
    auto pinned = [&](const Value* v) { return region_root_.count(v) > 0; };
    for (int pos = 0; pos < static_cast<int>(nodes_.size()); ++pos) {
      if (nodes_[pos]->op_id() != ir::OpId::mean_dim) continue;
      auto chain = match_rms_norm(graph(), pos, uses_, /*fuse_add=*/true, pinned);
      if (chain.ok() && chain->residual != nullptr && add_belongs_to_gemvs(*chain))
        chain = match_rms_norm(graph(), pos, uses_, /*fuse_add=*/false, pinned);
      if (!chain.ok()) {
        out_.notes.push_back(chain.error().message());
        continue;
      }
      bool claimed = false;
      for (int32_t n : chain->nodes) claimed = claimed || norm_of_[n] >= 0;
      if (claimed) continue;  // a member of an earlier chain (never: each has its own mean)
      for (int32_t n : chain->nodes) norm_of_[n] = static_cast<int>(norm_chains_.size());
      norm_chains_.push_back(std::move(chain->nodes));
    }
  }

  // Whether a product the GEMV kernels run (matmul_kernels.h) may take a pointwise epilogue
  // or an RMSNorm prologue (gemv_epilogue.h).
  bool gemv_product(int pos) const {
    const Node& node = *nodes_[pos];
    if (!df_.target->gemv_epilogue || !is_matrix_product(node.op_id()) ||
        !epilogue_product_op(node))
      return false;
    return decide_matmul(node, pos, hints_, *df_.target).kernel == "gemv";
  }

  // Whether an RMSNorm chain's residual add is better the epilogue of the GEMV that makes one
  // of its operands, and the norm the prologue of the one GEMV that reads it: one kernel less
  // than the add in the norm's kernel (gemv_epilogue.h).
  bool add_belongs_to_gemvs(const RmsNormChain& chain) const {
    auto sole_user = [&](const Value* v) -> int {
      auto it = uses_.users.find(v);
      return it != uses_.users.end() && it->second.size() == 1 ? it->second.front() : -1;
    };
    const int add = chain.nodes.front();
    bool from_gemv = false;
    for (const Value* v : {chain.x, chain.residual}) {
      // Through row views each read by the next alone (run_decompositions' mm, then a view).
      int reader = add;
      while (v != nullptr && sole_user(v) == reader && v->producer() != nullptr &&
             plan::row_view_source(*v->producer()) != nullptr) {
        reader = uses_.position.at(v->producer());
        v = plan::row_view_source(*v->producer());
      }
      if (v == nullptr || v->producer() == nullptr || sole_user(v) != reader) continue;
      from_gemv = from_gemv || gemv_product(uses_.position.at(v->producer()));
    }
    int reader = sole_user(chain.out);
    while (reader >= 0 && plan::row_view_source(*nodes_[reader]) != nullptr)
      reader = sole_user(nodes_[reader]->output(0));
    return from_gemv && reader >= 0 && prologue_fits(reader, chain.out);
  }

  // Whether product `pos` may apply an RMSNorm whose value `out` it reads as x.
  bool prologue_fits(int pos, const Value* out) const {
    if (!gemv_product(pos)) return false;
    const Node& product = *nodes_[pos];
    if (prologue_views(pos, out) == std::nullopt) return false;
    // Every block of the kernel computes the rows' statistics again: past this width that
    // costs more than the norm's own kernel saves (a 128k-vocabulary head).
    const auto width = product.output(0)->type().sizes.back().constant();
    if (!width || *width > kMaxPrologueWidth) return false;
    return true;
  }

  // The row views (view nodes, outermost last) between norm value `out` and product `pos`'s
  // x, each read by the next alone; nullopt when x is not `out` seen through such views.
  std::optional<std::vector<int>> prologue_views(int pos, const Value* out) const {
    const Node& product = *nodes_[pos];
    const size_t x_arg = product.op_id() == ir::OpId::addmm ? 1 : 0;
    const Value* x = tensor_arg(product, static_cast<int>(x_arg));
    std::vector<int> views;
    while (x != out) {
      const Node* view = x == nullptr ? nullptr : x->producer();
      if (view == nullptr || plan::row_view_source(*view) == nullptr || !uses_.users.count(x) ||
          uses_.users.at(x).size() != 1 || df_.is_graph_output(x))
        return std::nullopt;
      const int at = uses_.position.at(view);
      if (out_.group_of[at] >= 0) return std::nullopt;
      views.push_back(at);
      x = plan::row_view_source(*view);
    }
    return views;
  }

  // A member of RMSNorm chain `c`: the open group closes at its first member, and the chain
  // becomes a group at its last (with the assertions between run right after it).
  void step_norm(int pos, int c) {
    if (norm_open_ < 0) {
      close();
      norm_open_ = c;
    }
    const std::vector<int32_t>& members = norm_chains_[c];
    if (pos != members.back()) return;
    const int g = static_cast<int>(out_.groups.size());
    Group group;
    group.kind = GroupKind::kRmsNorm;
    group.nodes = members;
    for (int32_t n : members) out_.group_of[n] = g;
    out_.groups.push_back(std::move(group));
    out_.order.push_back({true, g});
    for (int n : norm_after_) out_.order.push_back({false, n});
    norm_after_.clear();
    norm_open_ = -1;
  }

  int root(const Value* v) const {
    auto it = wp_.root_of.find(v);
    return it == wp_.root_of.end() ? -1 : it->second;
  }

  // The node's operand tensors that come from outside the open group.
  std::vector<const Value*> outside_inputs(const Node& node) const {
    std::vector<const Value*> ins;
    for (const Value* v : node.operands())
      if (v != nullptr && v->is_tensor() && !produced_.count(v)) ins.push_back(v);
    return ins;
  }

  // Whether node `pos` can be a member at all, on its own.
  bool candidate(int pos) const {
    const Node& node = *nodes_[pos];
    if (wp_.decision_at[pos] >= 0 || node.op().runs_on_host() || node.op().may_view()) return false;
    auto lowered = lower_node(node);
    if (!lowered) return false;
    for (const ir::PointwiseNode& n : lowered->program.nodes)
      if (!df_.target->runs_pointwise(n.fn, n.compute)) return false;
    const auto& sizes = node.output(0)->type().sizes;
    for (int arg : lowered->inputs) {
      const Value* v = tensor_arg(node, arg);
      if (v == nullptr || !broadcasts_to(v->type().sizes, sizes)) return false;
    }
    // A node storing into a write's slice of storage it also reads stays a kernel.
    auto region = region_root_.find(node.output(0));
    if (region != region_root_.end())
      for (const Value* v : node.operands())
        if (v != nullptr && v->is_tensor() && root(v) == region->second) return false;
    return true;
  }

  // Whether candidate `pos` fits the open group.
  bool fits(int pos) const {
    const Node& node = *nodes_[pos];
    const auto& sizes = node.output(0)->type().sizes;
    if (sizes != sizes_ && !can_widen_to(pos, sizes)) return false;
    if (!within_kernel_limits(members_, pos, df_.target->pointwise_max_operands)) return false;
    for (const Value* v : node.operands())
      if (deferred_.count(v) && !identity_view_of_member(v)) return false;
    for (const Value* v : outside_inputs(node))
      if (store_roots_.count(root(v))) return false;
    // Tiles store in no fixed order across outputs: a value stored into a write's slice must
    // not share storage with another member's value the group stores whole.
    auto region = region_root_.find(node.output(0));
    if (region == region_root_.end()) return !store_roots_.count(root(node.output(0)));
    return !read_roots_.count(region->second) && !whole_roots_.count(region->second) &&
           disjoint_from_member_stores(node.output(0), region->second);
  }

  // Whether a group of `members` (graph positions) and `extra` (one more, or -1) stays within
  // the limits of the kernel that runs it: at most `max_operands` operands (0: any number) and
  // the target's most constants (Target::pointwise_max_constants). Operands are the tensors it
  // reads from outside and the values that may leave it: a member's value that a graph output
  // or a write takes, or that a node outside the group reads (an upper bound while a group is
  // open: a later member may still take that reader).
  bool within_kernel_limits(std::span<const int> members, int extra, int max_operands) const {
    const int max_constants = df_.target->pointwise_max_constants;
    if (max_operands <= 0 && max_constants <= 0) return true;
    std::unordered_set<int> inside(members.begin(), members.end());
    if (extra >= 0) inside.insert(extra);
    std::unordered_set<const Value*> produced, inputs;
    for (int m : inside) produced.insert(nodes_[m]->output(0));
    int outputs = 0, constants = 0;
    for (int m : inside) {
      const Node& node = *nodes_[m];
      for (const Value* v : node.operands())
        if (v != nullptr && v->is_tensor() && !produced.count(v)) inputs.insert(v);
      const Value* out = node.output(0);
      bool leaves = df_.is_graph_output(out) || region_root_.count(out) > 0;
      if (auto it = uses_.users.find(out); it != uses_.users.end())
        for (int user : it->second) leaves = leaves || !inside.count(user);
      outputs += leaves ? 1 : 0;
      constants += constants_of(m);
    }
    const int operands = static_cast<int>(inputs.size()) + std::max(outputs, 1);
    return (max_operands <= 0 || operands <= max_operands) &&
           (max_constants <= 0 || constants <= max_constants);
  }

  // The constants of node `pos`'s lowered program (0 for a node that does not lower), computed
  // once: within_kernel_limits asks for every member at every candidate.
  int constants_of(int pos) const {
    if (constants_of_.empty()) constants_of_.assign(nodes_.size(), -1);
    int& n = constants_of_[pos];
    if (n < 0) {
      auto lowered = lower_node(*nodes_[pos]);
      n = lowered ? static_cast<int>(lowered->program.constants.size()) : 0;
    }
    return n;
  }

  // Whether v, a view that runs after the group, is a member's value seen through identity
  // views: a member reads it as that member's value (group_program), not the view.
  bool identity_view_of_member(const Value* v) const {
    while (v != nullptr && deferred_.count(v) && v->producer() != nullptr)
      v = identity_view_source(*v->producer());
    return v != nullptr && produced_.count(v);
  }

  // Whether the slice `stored` goes to misses every slice of `root` a member stores into: two
  // writes to one region must land in program order, which a group's tiles do not keep.
  bool disjoint_from_member_stores(const Value* stored, int root) const {
    const WriteDecision& w = *region_write_.at(stored);
    const Node& write = *nodes_[w.node];
    for (int m : members_) {
      const Value* v = nodes_[m]->output(0);
      auto it = region_write_.find(v);
      if (it == region_write_.end() || region_root_.at(v) != root) continue;
      const WriteDecision& other = *it->second;
      const Node& other_write = *nodes_[other.node];
      // Regions compare only within one destination of one shape.
      const Value* base = write_base(write);
      const Value* other_base = write_base(other_write);
      if (other.dest_value != w.dest_value || base == nullptr || other_base == nullptr ||
          base->type().sizes != other_base->type().sizes ||
          write_regions_may_overlap(other_write, write))
        return false;
    }
    return true;
  }

  // Whether the open group may widen its iteration space to `sizes`, candidate `pos`'s (as
  // RMSNorm's x * rsqrt(mean + eps) widens [.., 1] to [.., hidden]): the members so far
  // broadcast to it and nothing but the group and the candidate reads their values, so none is
  // stored and each is computed again at every element it broadcasts to (the same value: a
  // member's inputs broadcast to it along the same dims). A member reading the element's
  // position (an arange) would compute other values there, so it stays narrow.
  bool can_widen_to(int pos, const std::vector<SymExpr>& sizes) const {
    if (!broadcasts_to(sizes_, sizes)) return false;
    for (int m : members_) {
      const Value* v = nodes_[m]->output(0);
      if (df_.is_graph_output(v) || region_root_.count(v)) return false;
      if (auto it = uses_.users.find(v); it != uses_.users.end())
        for (int user : it->second)
          if (user != pos && std::find(members_.begin(), members_.end(), user) == members_.end())
            return false;
    }
    return !members_read_position_;
  }

  void add_member(int pos) {
    const Node& node = *nodes_[pos];
    sizes_ = node.output(0)->type().sizes;  // the same, or widened (fits)
    if (auto lowered = lower_node(node))    // a candidate: always lowered
      for (const ir::PointwiseNode& n : lowered->program.nodes)
        for (const ir::PointwiseRef& r : n.operands)
          members_read_position_ |= r.kind == ir::PointwiseRef::Kind::kLinearIndex;
    for (const Value* v : outside_inputs(node)) read_roots_.insert(root(v));
    auto region = region_root_.find(node.output(0));
    if (region != region_root_.end()) {
      store_roots_.insert(region->second);
    } else {
      whole_roots_.insert(root(node.output(0)));
    }
    produced_.insert(node.output(0));
    members_.push_back(pos);
  }

  // Nodes that run no work of their own and may move across members.
  bool movable(int pos) const {
    const Node& node = *nodes_[pos];
    const int d = wp_.decision_at[pos];
    if (d >= 0) return wp_.writes[d].src == SrcMode::kProducerWrites;
    return node.op().runs_on_host() || node.op().may_view() || node.op().is_empty_factory();
  }

  // Whether node `pos` is an identity view of a value the open group computes: it joins the
  // group as a member that computes nothing (close() sends it back after the group when
  // anything but later members reads it).
  bool view_of_member(int pos) const {
    if (wp_.decision_at[pos] >= 0) return false;
    const Node& node = *nodes_[pos];
    const Value* src = identity_view_source(node);
    return src != nullptr && produced_.count(src) && !df_.is_graph_output(node.output(0)) &&
           !region_root_.count(node.output(0));
  }

  void step(int pos) {
    if (const int c = norm_of_[pos]; c >= 0) {
      step_norm(pos, c);
      return;
    }
    if (norm_open_ >= 0) {  // an assertion between a chain's members (norm_fusion.h)
      norm_after_.push_back(pos);
      return;
    }
    if (base_copy_at_.count(pos)) close();  // the base copy must precede the producer alone
    const bool is_candidate = candidate(pos);
    if (!members_.empty()) {
      if (is_candidate && fits(pos)) {
        add_member(pos);
        return;
      }
      if (view_of_member(pos)) {
        produced_.insert(nodes_[pos]->output(0));
        view_members_.insert(pos);
        members_.push_back(pos);
        return;
      }
      if (!is_candidate && movable(pos)) {
        const Node& node = *nodes_[pos];
        bool depends = false;
        for (const Value* v : node.operands())
          depends = depends || produced_.count(v) || deferred_.count(v);
        if (!depends) {
          before_.push_back(pos);
          return;
        }
        // A host node that reads the group may bind a symbol a later member's sizes need; an
        // assertion binds none.
        if (!node.op().runs_on_host() || node.op_id() == ir::OpId::_assert_tensor_metadata) {
          after_.push_back(pos);
          for (const Value* v : node.outputs())
            if (v != nullptr) deferred_.insert(v);
          return;
        }
      }
      close();
    }
    if (is_candidate) {
      add_member(pos);
    } else {
      out_.order.push_back({false, pos});
    }
  }

  // A view member that anything but later members reads (or nothing reads) runs as the view
  // it is, right after the group; latest first, so a view of a view goes back with it.
  void send_back_views_read_outside() {
    std::unordered_set<int> members(members_.begin(), members_.end());
    for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
      if (!view_members_.count(*it)) continue;
      auto users = uses_.users.find(nodes_[*it]->output(0));
      bool inside = users != uses_.users.end() && !users->second.empty();
      if (inside)
        for (int user : users->second) inside = inside && members.count(user);
      if (inside) continue;
      members.erase(*it);
      after_.push_back(*it);
    }
    std::erase_if(members_, [&](int pos) { return !members.count(pos); });
    std::sort(after_.begin(), after_.end());
  }

  void close() {
    send_back_views_read_outside();
    const auto computing = std::count_if(members_.begin(), members_.end(),
                                         [&](int pos) { return !view_members_.count(pos); });
    if (computing >= 2) {
      const int g = static_cast<int>(out_.groups.size());
      Group group;
      for (int pos : members_) {
        group.nodes.push_back(pos);
        out_.group_of[pos] = g;
      }
      out_.groups.push_back(std::move(group));
      for (int pos : before_) out_.order.push_back({false, pos});
      out_.order.push_back({true, g});
      for (int pos : after_) out_.order.push_back({false, pos});
    } else {
      // One member: nothing to fuse, the original order.
      std::vector<int> all = members_;
      all.insert(all.end(), before_.begin(), before_.end());
      all.insert(all.end(), after_.begin(), after_.end());
      std::sort(all.begin(), all.end());
      for (int pos : all) out_.order.push_back({false, pos});
    }
    members_.clear();
    view_members_.clear();
    before_.clear();
    after_.clear();
    produced_.clear();
    deferred_.clear();
    read_roots_.clear();
    store_roots_.clear();
    whole_roots_.clear();
    sizes_.clear();
    members_read_position_ = false;
  }

  // A pointwise node left on its own whose value only one later group reads, over that group's
  // iteration space, joins the group as its first member and is never stored: a rotary
  // embedding's q * cos, cut off from the rest of its sum by the cat of the rotated half.
  // Identity views in between (identity_view_source) join with it. (Two lone nodes are not
  // made a group: BERT's q * scale and its contiguous clone cost 4% more instructions per call
  // in the CPU interpreter, which gathers the strided q run by run, than as two kernels.) Its
  // reads move from its
  // own step to the group's, so nothing that runs in between may write storage it reads, and
  // the group may store into none of it. Latest first, so that a chain of such nodes (each
  // read only by the next) joins whole.
  void absorb_lone_producers() {
    for (int pos = static_cast<int>(nodes_.size()) - 1; pos >= 0; --pos) {
      if (out_.group_of[pos] >= 0 || !candidate(pos)) continue;
      const std::optional<SoleReader> reader = sole_reader(pos);
      if (!reader) continue;
      const auto from = order_of(false, pos);
      const auto to = order_of(true, reader->group);
      if (from == out_.order.end() || to == out_.order.end() || from > to) continue;
      const std::set<int> reads = roots_read_by(pos);
      if (group_stores_into(reader->group, reads) || !nothing_writes_between(from, to, reads))
        continue;
      const int g = reader->group;
      std::vector<int> joining = reader->views;
      joining.push_back(pos);
      std::vector<int> joined(out_.groups[g].nodes.begin(), out_.groups[g].nodes.end());
      joined.insert(joined.end(), joining.begin(), joining.end());
      if (!within_kernel_limits(joined, -1, df_.target->pointwise_max_operands)) continue;
      drop_from_order(joining);
      for (int n : joining) out_.group_of[n] = g;
      std::vector<int32_t>& members = out_.groups[g].nodes;
      members.insert(members.end(), joining.begin(), joining.end());
      std::sort(members.begin(), members.end());
    }
  }

  // GEMV epilogues (gemv_epilogue.h): a GEMV product whose value one pointwise group — or one
  // lone pointwise node — alone reads, whole or through slices of its last dim that nothing
  // else reads, joins that group as its first member (the group then runs where it did).
  void absorb_gemv_products() {
    if (!df_.target->gemv_epilogue) return;
    for (int pos = 0; pos < static_cast<int>(nodes_.size()); ++pos)
      if (out_.group_of[pos] < 0 && gemv_product(pos)) absorb_product(pos);
  }

  void absorb_product(int pos) {
    const Node& product = *nodes_[pos];
    const Value* v = product.output(0);
    auto plain = [&](int n) {
      const Value* out = nodes_[n]->outputs().empty() ? nullptr : nodes_[n]->output(0);
      return out_.group_of[n] < 0 && wp_.decision_at[n] < 0 && out != nullptr &&
             !df_.is_graph_output(out) && !region_root_.count(out);
    };
    if (!plain(pos) || !uses_.users.count(v)) return;
    // The column ranges read (the value, or its slices, through row views) and who reads
    // them: a value every one of whose readers is a slice or a row view is not a range itself.
    std::vector<int> slices, readers;
    std::vector<const Value*> ranges;
    std::vector<const Value*> work = {v};
    while (!work.empty()) {
      const Value* w = work.back();
      work.pop_back();
      if (!uses_.users.count(w)) return;
      bool read_as_is = false;
      for (int user : uses_.users.at(w)) {
        const Node& node = *nodes_[user];
        const Value* out = node.outputs().empty() ? nullptr : node.output(0);
        const bool view =
            (node.op_id() == ir::OpId::slice_Tensor || plan::row_view_source(node) == w) &&
            tensor_arg(node, 0) == w && plain(user) && out != nullptr &&
            product_column(*out, product).has_value();
        if (view) {
          slices.push_back(user);
          work.push_back(out);
        } else {
          readers.push_back(user);
          read_as_is = true;
        }
      }
      if (read_as_is) ranges.push_back(w);
    }
    if (readers.empty() || static_cast<int>(ranges.size()) > kMaxEpilogueProducts) return;
    const int g = out_.group_of[readers.front()];
    for (int r : readers)
      if (out_.group_of[r] != g || (g < 0 && r != readers.front())) return;
    if (g >= 0 ? out_.groups[g].kind != GroupKind::kPointwise : !candidate(readers.front())) return;
    const int last = g >= 0 ? out_.groups[g].nodes.back() : readers.front();
    const auto& space = nodes_[last]->output(0)->type().sizes;
    for (const Value* r : ranges)
      if (r->type().sizes != space) return;
    // The product moves to the group's place: nothing in between may write what it reads, nor
    // may the group store into it (other blocks still read it while the group stores).
    const auto from = order_of(false, pos);
    const auto to = g >= 0 ? order_of(true, g) : order_of(false, last);
    if (from == out_.order.end() || to == out_.order.end() || from > to) return;
    const std::set<int> reads = roots_read_by(pos);
    if ((g < 0 ? node_writes_into(last, reads) : group_stores_into(g, reads)) ||
        !nothing_writes_between(from, to, reads))
      return;
    std::vector<int> joined = slices;
    joined.push_back(pos);
    if (g >= 0) {
      joined.insert(joined.end(), out_.groups[g].nodes.begin(), out_.groups[g].nodes.end());
    } else {
      joined.push_back(last);
    }
    // (The product's own operands count too: more than the epilogue kernel's, an upper bound.)
    if (!within_kernel_limits(joined, -1, df_.target->gemv_epilogue_max_operands)) return;
    int target = g;
    if (target < 0) {
      target = static_cast<int>(out_.groups.size());
      out_.groups.push_back({{last}, {}, GroupKind::kPointwise});
      out_.group_of[last] = target;
      *to = {true, target};
    }
    std::vector<int> joining = slices;
    joining.push_back(pos);
    drop_from_order(joining);
    for (int n : joining) out_.group_of[n] = target;
    Group& group = out_.groups[target];
    group.nodes.insert(group.nodes.end(), joining.begin(), joining.end());
    std::sort(group.nodes.begin(), group.nodes.end());
    group.kind = GroupKind::kGemvEpilogue;
  }

  // RMSNorm prologues (gemv_epilogue.h): an RMSNorm group without a residual add whose norm
  // only one GEMV product reads, as its x, becomes that product's prologue: the norm's members
  // join the product's group (or the product joins the norm's, which becomes a GEMV group),
  // and the norm's value is never stored.
  void absorb_norm_prologues() {
    if (!df_.target->gemv_epilogue) return;
    for (int g = 0; g < static_cast<int>(out_.groups.size()); ++g) {
      if (out_.groups[g].kind != GroupKind::kRmsNorm) continue;
      auto chain = rms_norm_of(graph(), out_.groups[g], uses_);
      if (!chain.ok() || chain->residual != nullptr) continue;
      const Value* out = chain->out;
      const DType t = out->type().dtype;
      if (chain->x->type().dtype != t || (chain->weight && chain->weight->type().dtype != t) ||
          df_.is_graph_output(out) || region_root_.count(out) || !uses_.users.count(out) ||
          uses_.users.at(out).size() != 1)
        continue;
      // The product reading the norm, through row views that only it reads.
      int p = uses_.users.at(out).front();
      while (plan::row_view_source(*nodes_[p]) != nullptr &&
             uses_.users.count(nodes_[p]->output(0)) &&
             uses_.users.at(nodes_[p]->output(0)).size() == 1)
        p = uses_.users.at(nodes_[p]->output(0)).front();
      if (!prologue_fits(p, out)) continue;
      const std::vector<int> views = *prologue_views(p, out);
      const int target = out_.group_of[p];
      if (target >= 0 && (out_.groups[target].kind != GroupKind::kGemvEpilogue ||
                          out_.groups[target].nodes.front() != p))
        continue;
      // The norm runs where the product (or its group) runs: nothing in between may write
      // what the norm reads.
      const auto from = order_of(true, g);
      const auto to = target >= 0 ? order_of(true, target) : order_of(false, p);
      if (from == out_.order.end() || to == out_.order.end() || from > to) continue;
      std::set<int> reads;
      for (int32_t n : out_.groups[g].nodes)
        for (int r : roots_read_by(n)) reads.insert(r);
      if (!nothing_writes_between(from, to, reads)) continue;
      // The joined group runs at `to`: the norm's own place goes, with the views' places.
      if (target < 0) *to = {true, g};
      out_.order.erase(from);
      drop_from_order(views);
      if (target < 0) {
        Group& group = out_.groups[g];
        group.nodes.insert(group.nodes.end(), views.begin(), views.end());
        for (int n : views) out_.group_of[n] = g;
        group.nodes.push_back(p);
        std::sort(group.nodes.begin(), group.nodes.end());
        group.kind = GroupKind::kGemvEpilogue;
        out_.group_of[p] = g;
        continue;
      }
      Group& group = out_.groups[target];
      for (int32_t n : out_.groups[g].nodes) {
        group.nodes.push_back(n);
        out_.group_of[n] = target;
      }
      for (int n : views) {
        group.nodes.push_back(n);
        out_.group_of[n] = target;
      }
      std::sort(group.nodes.begin(), group.nodes.end());
      erase_group(g);
      --g;
    }
  }

  using OrderIter = std::vector<OrderItem>::iterator;

  // Where a group (or a lone node) runs in out_.order; end() when it has no place.
  OrderIter order_of(bool group, int index) {
    return std::find_if(out_.order.begin(), out_.order.end(),
                        [&](const OrderItem& i) { return i.group == group && i.index == index; });
  }

  // Whether what runs strictly between order items `from` and `to` leaves the storage roots
  // `reads` alone: reads at `from` may then move to `to`.
  bool nothing_writes_between(OrderIter from, OrderIter to, const std::set<int>& reads) const {
    for (auto it = from + 1; it != to; ++it)
      if (it->group ? group_stores_into(it->index, reads) : node_writes_into(it->index, reads))
        return false;
    return true;
  }

  // Removes the places of lone nodes that joined a group.
  void drop_from_order(const std::vector<int>& joined) {
    const std::unordered_set<int> gone(joined.begin(), joined.end());
    std::erase_if(out_.order,
                  [&](const OrderItem& i) { return !i.group && gone.count(i.index) > 0; });
  }

  // Removes group `g` (its members already moved and its order entry gone), renumbering the
  // later groups.
  void erase_group(int g) {
    out_.groups.erase(out_.groups.begin() + g);
    for (int& owner : out_.group_of)
      if (owner > g) --owner;
    for (OrderItem& item : out_.order)
      if (item.group && item.index > g) --item.index;
  }

  // The one group that reads a lone node's value, with the identity views it reads it through.
  struct SoleReader {
    int group = -1;
    std::vector<int> views;
  };

  // Who reads node `pos`'s value, seen through identity views that nothing else reads: one
  // group whose iteration space is the value's sizes; nullopt when the value is needed
  // anywhere else.
  std::optional<SoleReader> sole_reader(int pos) const {
    const Value* v = nodes_[pos]->output(0);
    if (df_.is_graph_output(v) || region_root_.count(v)) return std::nullopt;
    SoleReader r;
    std::vector<int> readers;
    std::vector<const Value*> work = {v};
    while (!work.empty()) {
      const Value* w = work.back();
      work.pop_back();
      auto it = uses_.users.find(w);
      if (it == uses_.users.end()) continue;
      for (int user : it->second) {
        const Node& node = *nodes_[user];
        const Value* out = node.outputs().empty() ? nullptr : node.output(0);
        if (identity_view_source(node) == w && out_.group_of[user] < 0 &&
            wp_.decision_at[user] < 0 && !df_.is_graph_output(out) && !region_root_.count(out)) {
          r.views.push_back(user);
          work.push_back(out);
        } else {
          readers.push_back(user);
        }
      }
    }
    if (readers.empty()) return std::nullopt;
    r.group = out_.group_of[readers.front()];
    if (r.group < 0 || out_.groups[r.group].kind != GroupKind::kPointwise) return std::nullopt;
    for (int user : readers)
      if (out_.group_of[user] != r.group) return std::nullopt;
    const Value* last = nodes_[out_.groups[r.group].nodes.back()]->output(0);
    if (last->type().sizes != v->type().sizes) return std::nullopt;
    std::sort(r.views.begin(), r.views.end());
    r.views.erase(std::unique(r.views.begin(), r.views.end()), r.views.end());
    return r;
  }

  std::set<int> roots_read_by(int pos) const {
    std::set<int> roots;
    for (const Value* v : nodes_[pos]->operands())
      if (v != nullptr && v->is_tensor()) roots.insert(root(v));
    return roots;
  }

  // Whether a member of group `g` stores into a write's slice of one of `roots`.
  bool group_stores_into(int g, const std::set<int>& roots) const {
    for (int m : out_.groups[g].nodes) {
      auto region = region_root_.find(nodes_[m]->output(0));
      if (region != region_root_.end() && roots.count(region->second)) return true;
    }
    return false;
  }

  // Whether node `pos` may write one of `roots` when it runs: a write into it, a producer
  // storing into its slice, a base copy, or any op that mutates its arguments.
  bool node_writes_into(int pos, const std::set<int>& roots) const {
    const Node& node = *nodes_[pos];
    if (base_copy_at_.count(pos) || node.op().aliasing == ir::Aliasing::kMutates) return true;
    if (const int d = wp_.decision_at[pos]; d >= 0) {
      const Value* dest = graph().find_value(wp_.writes[d].dest_value);
      if (dest == nullptr || roots.count(root(dest))) return true;
    }
    for (const Value* v : node.outputs()) {
      auto region = region_root_.find(v);
      if (region != region_root_.end() && roots.count(region->second)) return true;
    }
    return false;
  }

  void pick_outputs(int g) {
    Group& group = out_.groups[g];
    for (int pos : group.nodes) {
      const Value* v = nodes_[pos]->output(0);
      bool used_outside = df_.is_graph_output(v) || region_root_.count(v);
      auto it = uses_.users.find(v);
      if (it != uses_.users.end())
        for (int user : it->second) used_outside = used_outside || out_.group_of[user] != g;
      if (used_outside) group.outputs.push_back(v->name());
    }
    // A program stores something: a group whose values nobody reads (dead code) keeps its last.
    if (group.outputs.empty())
      group.outputs.push_back(nodes_[group.nodes.back()]->output(0)->name());
  }

  const DataFlow& df_;
  const WritePlanResult& wp_;
  const std::vector<std::unique_ptr<Node>>& nodes_;
  const SymBindings hints_;  // the program's size hints, for decide_matmul
  // Who reads each value (_assert_tensor_metadata checks nothing at run time, so it does not
  // make a member's value a group output) and each node's index in nodes_.
  const GraphUses uses_;
  mutable std::vector<int> constants_of_;  // by node position (constants_of), -1: not yet known
  FusionPlan out_;
  std::unordered_map<const Value*, int> region_root_;
  // The write each value of region_root_ is stored for.
  std::unordered_map<const Value*, const WriteDecision*> region_write_;
  std::unordered_set<int> base_copy_at_;
  // The open group.
  std::vector<int> members_, before_, after_;
  std::unordered_set<const Value*> produced_, deferred_;
  std::unordered_set<int> view_members_;  // members that are identity views of members
  // Storage the open group reads, stores slices of, and stores whole values into.
  std::set<int> read_roots_, store_roots_, whole_roots_;
  std::vector<SymExpr> sizes_;
  bool members_read_position_ = false;  // a member reads the element's position (an arange)
  // RMSNorm chains: the members of each, each node's chain (or -1), the chain whose members
  // are being passed, and the assertions met between them.
  std::vector<std::vector<int32_t>> norm_chains_;
  std::vector<int> norm_of_;
  int norm_open_ = -1;
  std::vector<int> norm_after_;
};

}  // namespace

std::optional<ir::LoweredPointwise> lower_node(const Node& node) {
  if (!ir::has_pointwise_lowering(node.target())) return std::nullopt;
  // fill.Tensor's kernel refuses a value tensor that overflows the dtype: a check on data the
  // program (which converts) does not make.
  if (node.op_id() == ir::OpId::fill_Tensor) return std::nullopt;
  if (node.outputs().size() != 1 || node.output(0) == nullptr || !node.output(0)->is_tensor())
    return std::nullopt;
  auto args = op_args(node);
  if (!args) return std::nullopt;
  auto lowered = ir::lower_pointwise_op(node.target(), *args);
  if (!lowered.ok() || lowered->inputs.empty() || lowered->program.outputs.size() != 1 ||
      lowered->program.outputs[0].dtype != node.output(0)->type().dtype)
    return std::nullopt;
  for (int arg : lowered->inputs)
    if (tensor_arg(node, arg) == nullptr) return std::nullopt;
  return std::move(*lowered);
}

Result<GroupProgram> group_program(const ir::Graph& graph, const Group& group) {
  using ir::PointwiseRef;
  GroupProgram gp;
  const auto& nodes = graph.nodes();
  std::unordered_map<const Value*, PointwiseRef> member_ref;
  std::unordered_map<const Value*, int32_t> input_of;
  for (int32_t pos : group.nodes)
    if (pos < 0 || pos >= static_cast<int32_t>(nodes.size()) || nodes[pos]->outputs().empty() ||
        nodes[pos]->output(0) == nullptr || !nodes[pos]->output(0)->is_tensor())
      return make_error(ErrorKind::kBadArchive, "plan: a group names node {}", pos);
  if (group.nodes.empty()) return make_error(ErrorKind::kBadArchive, "plan: an empty group");
  // The iteration space is the last member's: earlier ones may be narrower and broadcast to it
  // (a widened group, whose narrow members are never stored), later ones never are.
  gp.sizes = nodes[group.nodes.back()]->output(0)->type().sizes;
  // A member's operand, seen through identity views of members (they are never stored).
  auto member_value = [&](const Value* v) {
    auto it = member_ref.find(v);
    while (it == member_ref.end() && v != nullptr && v->producer() != nullptr) {
      v = identity_view_source(*v->producer());
      it = member_ref.find(v);
    }
    return it;
  };
  for (int32_t pos : group.nodes) {
    const Node& node = *nodes[pos];
    if (const Value* src = identity_view_source(node)) {
      auto it = member_value(src);
      if (it == member_ref.end())
        return make_error(ErrorKind::kBadArchive, "plan: group member '{}' views no member",
                          node.name());
      member_ref[node.output(0)] = it->second;
      continue;
    }
    auto lowered = lower_node(node);
    if (!lowered)
      return make_error(ErrorKind::kBadArchive, "plan: group member '{}' ({}) is not pointwise",
                        node.name(), node.target());
    if (!broadcasts_to(node.output(0)->type().sizes, gp.sizes))
      return make_error(ErrorKind::kBadArchive,
                        "plan: group member '{}' has sizes {} outside the group's iteration space",
                        node.name(), node.output(0)->type().to_string());
    const ir::PointwiseProgram& p = lowered->program;
    std::vector<PointwiseRef> in_ref, const_ref, node_ref;
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      const Value* v = tensor_arg(node, lowered->inputs[i]);
      if (auto it = member_value(v); it != member_ref.end()) {
        in_ref.push_back(it->second);
        continue;
      }
      auto [it, fresh] = input_of.emplace(v, static_cast<int32_t>(gp.inputs.size()));
      if (fresh) {
        gp.program.add_input(v->type().dtype);
        gp.inputs.push_back(v);
      }
      in_ref.push_back(PointwiseRef::input(it->second));
    }
    for (const auto& c : p.constants)
      const_ref.push_back(gp.program.add_constant(c.value, c.dtype));
    for (const auto& n : p.nodes) {
      std::vector<PointwiseRef> ops;
      for (const PointwiseRef& r : n.operands) {
        switch (r.kind) {
          case PointwiseRef::Kind::kInput:
            ops.push_back(in_ref[r.index]);
            break;
          case PointwiseRef::Kind::kConstant:
            ops.push_back(const_ref[r.index]);
            break;
          case PointwiseRef::Kind::kNode:
            ops.push_back(node_ref[r.index]);
            break;
          case PointwiseRef::Kind::kLinearIndex:
            ops.push_back(r);
            break;
        }
      }
      node_ref.push_back(gp.program.add_node(n.fn, std::move(ops), n.result, n.compute));
    }
    member_ref[node.output(0)] = node_ref[p.outputs[0].node];
  }
  for (const std::string& name : group.outputs) {
    const Value* v = graph.find_value(name);
    auto it = v != nullptr ? member_ref.find(v) : member_ref.end();
    if (it == member_ref.end())
      return make_error(ErrorKind::kBadArchive, "plan: group output '{}' is no member's value",
                        name);
    if (v->type().sizes != gp.sizes)
      return make_error(ErrorKind::kBadArchive,
                        "plan: group output '{}' is narrower than the group's iteration space",
                        name);
    gp.program.add_output(it->second);
    gp.outputs.push_back(v);
  }
  if (auto valid = ir::validate(gp.program); !valid.ok())
    return make_error(ErrorKind::kBadArchive, "plan: a group's program is invalid: {}",
                      valid.error().message());
  return gp;
}

FusionPlan plan_fusion(const DataFlow& df, const WritePlanResult& writes, PlanMode mode) {
  if (mode == PlanMode::kNaive || df.target->pointwise_classes.empty()) {
    FusionPlan none;
    none.group_of.assign(df.program->graph.nodes().size(), -1);
    for (int pos = 0; pos < df.end; ++pos) none.order.push_back({false, pos});
    return none;
  }
  return Fuser(df, writes).run();
}

}  // namespace splice::plan
