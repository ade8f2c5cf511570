// The write planner (see write_planner.h and docs/planning.md).
//
// Positions are node indices in program order; the graph's outputs read at `df.end`. A write
// W at position w on base b "starts" at w, or earlier at its producer's position p when the
// producer stores src straight into W's destination. Every in-place decision must make sure
// that nothing reads the old contents of the written storage after it starts, and that nothing
// else writes the same region between the producer and W.
#include "plan/write_planner.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "ir/ops.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::Value;

// A write's destination region in its base, when it is a slice with constant bounds.
struct Region {
  int64_t dim = 0;
  int64_t start = 0;
  int64_t end = 0;
};

std::optional<int64_t> const_int(const ir::Arg& a) {
  if (a.is<int64_t>()) return a.as<int64_t>();
  return std::nullopt;
}

// The constant [start, end) a slice/select write covers on its dim; nullopt when any bound is
// symbolic or the write is an index write (then it may touch anything).
std::optional<Region> region_of(const Node& w) {
  const Value* base = write_base(w);
  if (base == nullptr) return std::nullopt;
  const int64_t rank = base->type().rank();
  if (w.op_id() == ir::OpId::slice_scatter) {
    auto dim = const_int(w.arg(2)), start = const_int(w.arg(3)), end = const_int(w.arg(4));
    if (!dim || !start || !end) return std::nullopt;
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    return Region{d, *start, *end};
  }
  if (w.op_id() == ir::OpId::select_scatter) {
    auto dim = const_int(w.arg(2)), index = const_int(w.arg(3));
    if (!dim || !index || *index < 0) return std::nullopt;
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    return Region{d, *index, *index + 1};
  }
  return std::nullopt;
}

bool regions_overlap(const std::optional<Region>& a, const std::optional<Region>& b) {
  if (!a || !b || a->dim != b->dim) return true;  // unknown: assume they touch
  return a->start < b->end && b->start < a->end;
}

// Whether W covers every element of its base: a step-1 slice from 0 to at least the size.
bool covers_whole_base(const Node& w) {
  if (w.op_id() != ir::OpId::slice_scatter) return false;
  const Value* base = write_base(w);
  auto dim = const_int(w.arg(2)), start = const_int(w.arg(3)), step = const_int(w.arg(5));
  if (base == nullptr || !dim || !start || !step || *start != 0 || *step != 1) return false;
  const int64_t d = *dim < 0 ? *dim + base->type().rank() : *dim;
  if (d < 0 || d >= base->type().rank()) return false;
  const SymExpr& size = base->type().sizes[d];
  if (auto end = const_int(w.arg(4))) {
    auto s = size.constant();
    return s && *end >= *s;
  }
  // A symbolic end equal to the symbolic size (x[:, :s0] on a dim of s0).
  auto* v = std::get_if<Value*>(&w.arg(4).data);
  return v != nullptr && *v != nullptr && (*v)->expr() && *(*v)->expr() == size;
}

// Something that writes a root: a full write (the root's content being made) or a region.
struct Event {
  int pos = 0;
  const Node* write = nullptr;  // nullptr: the whole root
};

class Planner {
 public:
  Planner(const DataFlow& df, PlanMode mode) : df_(df), mode_(mode) {}

  WritePlanResult run() {
    const auto& nodes = df_.program->graph.nodes();
    result_.decision_at.assign(nodes.size(), -1);
    for (const auto& spec : df_.program->signature.inputs)
      if (spec.value != nullptr && spec.value->is_tensor()) add_input_root(spec.value);
    for (int pos = 0; pos < df_.end; ++pos) {
      const Node& node = *nodes[pos];
      if (node.op().is_write() && write_base(node) != nullptr && write_src(node) != nullptr &&
          node.output(0) != nullptr) {
        plan_write(node, pos);
        continue;
      }
      for (const Value* out : node.outputs()) {
        if (out == nullptr || !out->is_tensor()) continue;
        auto viewed = df_.viewed.find(out);
        if (viewed != df_.viewed.end() && result_.root_of.count(viewed->second)) {
          join(out, result_.root_of[viewed->second], version_[viewed->second]);
        } else {
          const int r = new_root(out, Root::Kind::kIntermediate);
          // An empty factory writes nothing; any other kernel makes the whole root.
          if (!node.op().is_empty_factory()) events_[r].push_back({pos, nullptr});
        }
      }
    }
    return std::move(result_);
  }

 private:
  int new_root(const Value* anchor, Root::Kind kind) {
    Root root;
    root.kind = kind;
    root.anchor = anchor;
    result_.roots.push_back(root);
    events_.emplace_back();
    const int r = static_cast<int>(result_.roots.size()) - 1;
    join(anchor, r, next_version_++);
    return r;
  }

  void join(const Value* v, int root, int version) {
    result_.root_of[v] = root;
    version_[v] = version;
    result_.roots[root].members.push_back(v);
  }

  void add_input_root(const Value* v) {
    auto role = df_.input_role.at(v);
    const int r = new_root(v, role == InputRole::kState ? Root::Kind::kState : Root::Kind::kInput);
    result_.roots[r].writable_input = role == InputRole::kReadOnly;
    events_[r].push_back({-1, nullptr});
  }

  std::string name_at(int pos) const {
    if (pos >= df_.end) return "the graph's outputs";
    return fmt::format("node '{}'", df_.program->graph.nodes()[pos]->name());
  }

  // The first read of the old contents of root r (values at or before `version`) at a
  // position >= from, ignoring W's own read of its base; -1 if none. Views of those values
  // made later (not members yet) read the same storage, so they are walked too.
  int first_old_read(int r, int version, int from, int w, const Value* base) const {
    int found = -1;
    std::vector<const Value*> work;
    for (const Value* v : result_.roots[r].members)
      if (version_.at(v) <= version) work.push_back(v);
    while (!work.empty()) {
      const Value* x = work.back();
      work.pop_back();
      for (int pos : df_.reads_of(x)) {
        if (pos < from) continue;
        if (pos == w && x == base && reads_base_once(w, base)) continue;
        if (found < 0 || pos < found) found = pos;
      }
      auto views = df_.views.find(x);
      if (views != df_.views.end())
        work.insert(work.end(), views->second.begin(), views->second.end());
    }
    return found;
  }

  // Whether the node at pos is a write already planned in place (or as a full overwrite) that
  // uses v only as its base: it writes into v's storage but reads none of it.
  bool is_in_place_base_use(int pos, const Value* v) const {
    if (pos >= df_.end) return false;
    const int di = result_.decision_at[pos];
    if (di < 0) return false;
    const WriteStrategy s = result_.writes[di].strategy;
    if (s == WriteStrategy::kCopyThenWrite) return false;
    const Node& node = *df_.program->graph.nodes()[pos];
    return write_base(node) == v && reads_base_once(pos, v);
  }

  // Whether the write at w reads `base` only as its base (not also as src or an index).
  bool reads_base_once(int w, const Value* base) const {
    const Node& node = *df_.program->graph.nodes()[w];
    int uses = 0;
    for (const Value* v : node.operands()) uses += v == base;
    return uses == 1;
  }

  // reaches(v): v becomes the state's new value through in-place writes only — v is the
  // mutation output, or v's only reader is a write with v as base whose result reaches.
  bool reaches_mutation(const Value* v, const Value* state_input) const {
    const Value* target = df_.mutation_of.at(state_input);
    for (int guard = 0; guard < df_.end + 1; ++guard) {
      if (v == target) return true;
      if (df_.views.count(v)) return false;
      const auto& r = df_.reads_of(v);
      if (r.size() != 1 || r[0] >= df_.end) return false;
      const Node& next = *df_.program->graph.nodes()[r[0]];
      if (!next.op().is_write() || write_base(next) != v) return false;
      v = next.output(0);
    }
    return false;
  }

  void plan_write(const Node& w_node, int w) {
    WriteDecision d;
    d.node = w;
    const Value* base = write_base(w_node);
    const Value* src = write_src(w_node);
    const Value* result = w_node.output(0);
    const int r = result_.root_of.at(base);
    const Root& root = result_.roots[r];
    auto reject = [&](WriteStrategy s, std::string reason) {
      d.rejected.push_back({strategy_name(s), std::move(reason)});
    };

    std::optional<WriteStrategy> chosen;
    if (mode_ == PlanMode::kNaive) {
      for (auto s :
           {WriteStrategy::kInPlaceState, WriteStrategy::kFullOverwrite, WriteStrategy::kReuseBase})
        reject(s, "naive plan mode");
      chosen = WriteStrategy::kCopyThenWrite;
    }
    const int old_read = first_old_read(r, version_[base], w, w, base);

    // in_place_state
    if (!chosen) {
      if (root.kind != Root::Kind::kState) {
        reject(WriteStrategy::kInPlaceState, "the base is not a mutated state input");
      } else if (!reaches_mutation(result, root.anchor)) {
        reject(WriteStrategy::kInPlaceState,
               "the result is not the state's new value (it is read before that)");
      } else if (old_read == w) {
        reject(WriteStrategy::kInPlaceState, "src overlaps the state it is written into");
      } else if (old_read >= 0) {
        reject(WriteStrategy::kInPlaceState,
               fmt::format("{} reads the old state after the write", name_at(old_read)));
      } else {
        chosen = WriteStrategy::kInPlaceState;
      }
    }
    // full_overwrite
    if (!chosen) {
      if (!covers_whole_base(w_node)) {
        reject(WriteStrategy::kFullOverwrite, "the write covers only part of the base");
      } else if (src->type() != result->type()) {
        reject(WriteStrategy::kFullOverwrite,
               fmt::format("src is {}, the result is {}", src->type().to_string(),
                           result->type().to_string()));
      } else {
        chosen = WriteStrategy::kFullOverwrite;
      }
    }
    // reuse_base
    if (!chosen) {
      if (root.kind == Root::Kind::kInput) {
        reject(WriteStrategy::kReuseBase,
               root.writable_input ? "the base is a weight or constant, which is read-only"
                                   : "the base is a program input that the program does not "
                                     "mutate");
      } else if (root.kind == Root::Kind::kState) {
        reject(WriteStrategy::kReuseBase, "the base is state whose new value is another");
      } else if (old_read == w) {
        reject(WriteStrategy::kReuseBase, "src overlaps the base it is written into");
      } else if (old_read >= 0) {
        reject(WriteStrategy::kReuseBase,
               fmt::format("{} reads the base after the write", name_at(old_read)));
      } else {
        chosen = WriteStrategy::kReuseBase;
      }
    }
    d.strategy = chosen.value_or(WriteStrategy::kCopyThenWrite);

    const bool in_place =
        d.strategy == WriteStrategy::kInPlaceState || d.strategy == WriteStrategy::kReuseBase;
    int start = w;
    if (d.strategy == WriteStrategy::kFullOverwrite) {
      d.src = SrcMode::kProducerWrites;  // the result is src as produced: nothing moves
    } else if (auto why = producer_writes_refusal(w_node, w, base, src, r, in_place)) {
      d.rejected.push_back({"producer_writes", *why});
      d.src = SrcMode::kCopied;
    } else {
      d.src = SrcMode::kProducerWrites;
      d.producer = df_.def_of(df_.stored_value(src));
      start = d.producer;
      d.dest_value = in_place ? chain_start(base)->name() : result->name();
    }

    // Bytes beyond what the producer writes: a copied src, and a copied base.
    const ir::Program& p = *df_.program;
    if (d.src == SrcMode::kCopied) d.bytes += example_bytes(p, *src);
    if (d.strategy == WriteStrategy::kCopyThenWrite) d.bytes += example_bytes(p, *base);

    // Where the result lives now, and what writes that storage when.
    switch (d.strategy) {
      case WriteStrategy::kInPlaceState:
      case WriteStrategy::kReuseBase:
        join(result, r, next_version_++);
        events_[r].push_back({start, &w_node});
        chain_base_[result] = chain_start(base);
        break;
      case WriteStrategy::kFullOverwrite:
        join(result, result_.root_of.at(src), version_.at(src));
        break;
      case WriteStrategy::kCopyThenWrite: {
        const int nr = new_root(result, Root::Kind::kIntermediate);
        events_[nr].push_back({start, nullptr});
        events_[nr].push_back({start, &w_node});
        break;
      }
    }
    result_.decision_at[w] = static_cast<int>(result_.writes.size());
    result_.writes.push_back(std::move(d));
  }

  // The first base of a chain of in-place writes: whose tensor the chain's results share.
  const Value* chain_start(const Value* base) const {
    auto it = chain_base_.find(base);
    return it == chain_base_.end() ? base : it->second;
  }

  // Why src's producer cannot store straight into W's destination; nullopt if it can.
  std::optional<std::string> producer_writes_refusal(const Node& w_node, int w, const Value* base,
                                                     const Value* src, int r, bool in_place) const {
    if (mode_ == PlanMode::kNaive) return "naive plan mode";
    if (w_node.op_id() == ir::OpId::index_put || w_node.op_id() == ir::OpId::index_copy)
      return "an index write moves whole rows through the index kernel";
    // A select write stores unsqueeze(v): v's producer can store into the destination.
    const Value* stored = df_.stored_value(src);
    const int p = df_.def_of(stored);
    if (p < 0) return "src is a program input or weight";
    const Node& producer = *df_.program->graph.nodes()[p];
    const std::string pname = fmt::format("'{}' ({})", producer.name(), producer.target());
    if (df_.viewed.count(stored)) return fmt::format("src is a view made by {}", pname);
    if (!df_.target->has(producer.op_id(), backend::kStoresIntoDestination))
      return fmt::format("{} cannot store into a strided destination on the {} backend", pname,
                         df_.target->name);
    if (producer.outputs().size() != 1) return fmt::format("{} has several outputs", pname);
    const auto& reads = df_.reads_of(src);
    for (int pos : reads)
      if (pos != w) return fmt::format("src is also read by {}", name_at(pos));
    if (df_.views.count(src)) return "src is also viewed by another node";
    if (src->type().dtype != base->type().dtype)
      return fmt::format("src is {} but the base is {}", dtype_name(src->type().dtype),
                         dtype_name(base->type().dtype));
    for (const Value* v : producer.operands()) {
      if (!v->is_tensor()) {
        continue;
      }
      auto it = result_.root_of.find(v);
      if (it != result_.root_of.end() && it->second == r)
        return fmt::format("{} reads the destination's storage (src overlaps the destination)",
                           pname);
    }
    // The write's bounds (symbolic positions) must be known when the producer runs.
    for (size_t i = 0; i < w_node.args().size(); ++i) {
      auto* v = std::get_if<Value*>(&w_node.arg(i).data);
      if (v == nullptr || *v == nullptr || (*v)->is_tensor()) continue;
      if (df_.def_of(*v) > p) return "the write's position is computed after src's producer";
    }
    // The destination must exist when the producer runs.
    const Value* dest = in_place ? chain_start(base) : base;
    if (df_.def_of(dest) > p)
      return in_place ? "the base is made after src's producer"
                      : "the base is complete only after src's producer runs";
    // Between the producer and the write nobody may write the region or read the storage.
    const auto region = region_of(w_node);
    const int dest_root = in_place ? r : -1;
    if (dest_root >= 0) {
      for (const Event& e : events_[dest_root]) {
        if (e.pos <= p || e.pos >= w) continue;
        if (e.write == nullptr || regions_overlap(region, region_of(*e.write)))
          return fmt::format("{} writes the destination between src's producer and the write",
                             name_at(e.pos));
      }
      for (const Value* v : result_.roots[dest_root].members)
        for (int pos : df_.transitive_reads(v))
          if (pos > p && pos < w && !is_in_place_base_use(pos, v))
            return fmt::format(
                "{} reads the destination's storage between src's producer and "
                "the write",
                name_at(pos));
    }
    // The base's own root: a copy_then_write copies the base when the producer runs, so the
    // base must not change between then and the write.
    if (!in_place) {
      const int br = result_.root_of.at(base);
      for (const Event& e : events_[br])
        if (e.pos > p && e.pos < w)
          return fmt::format("{} changes the base between src's producer and the write",
                             name_at(e.pos));
    }
    return std::nullopt;
  }

  const DataFlow& df_;
  PlanMode mode_;
  WritePlanResult result_;
  std::vector<std::vector<Event>> events_;  // by root
  std::unordered_map<const Value*, int> version_;
  std::unordered_map<const Value*, const Value*> chain_base_;
  int next_version_ = 0;
};

}  // namespace

bool write_regions_may_overlap(const ir::Node& a, const ir::Node& b) {
  return regions_overlap(region_of(a), region_of(b));
}

WritePlanResult plan_writes(const DataFlow& df, PlanMode mode) { return Planner(df, mode).run(); }

}  // namespace splice::plan
