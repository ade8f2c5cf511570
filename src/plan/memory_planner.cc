// The memory planner (see memory_planner.h).
#include "plan/memory_planner.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "ir/ops.h"

namespace splice::plan {

namespace {

using ir::Node;
using ir::Value;

struct Interval {
  int start = 0;
  int end = 0;  // last position that reads it (inclusive)
  int64_t bytes = 0;
};

struct RootLife {
  int last_read = -1;
  bool escapes = false;  // read by the graph's outputs: it outlives the call
};

std::vector<RootLife> root_lives(const DataFlow& df, const WritePlanResult& wp) {
  std::vector<RootLife> lives(wp.roots.size());
  for (size_t r = 0; r < wp.roots.size(); ++r) {
    for (const Value* v : wp.roots[r].members) {
      for (int pos : df.transitive_reads(v)) {
        lives[r].last_read = std::max(lives[r].last_read, pos);
        if (pos >= df.end) lives[r].escapes = true;
      }
      lives[r].last_read = std::max(lives[r].last_read, df.def_of(v));
    }
  }
  return lives;
}

// Peak of the sum of live intervals (positions are node indices; end inclusive). Summed in 128
// bits and clamped: only constant sizes are held below 2^44 by the verifier, and absurd
// example sizes must read as a huge peak (which check_static_peak refuses), never wrap.
int64_t peak_of(const std::vector<Interval>& intervals, int end) {
  std::vector<__int128> delta(static_cast<size_t>(end) + 2, 0);
  for (const Interval& i : intervals) {
    const int s = std::clamp(i.start, 0, end);
    const int e = std::clamp(i.end, s, end);
    delta[s] += i.bytes;
    delta[e + 1] -= i.bytes;
  }
  __int128 live = 0, peak = 0;
  for (__int128 d : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return static_cast<int64_t>(std::min<__int128>(peak, INT64_MAX));
}

class MemoryPlanner {
 public:
  MemoryPlanner(const DataFlow& df, const WritePlanResult& wp, PlanMode mode,
                const FusionPlan& fusion)
      : df_(df), wp_(wp), mode_(mode), fusion_(fusion), lives_(root_lives(df, wp)) {
    for (const Group& g : fusion.groups) {
      for (const std::string& name : g.outputs)
        group_outputs_.insert(df.program->graph.find_value(name));
    }
  }

  MemoryPlan run() {
    // Values stored into a write's destination by their producer.
    for (size_t i = 0; i < wp_.writes.size(); ++i) {
      const WriteDecision& d = wp_.writes[i];
      if (d.src != SrcMode::kProducerWrites || d.strategy == WriteStrategy::kFullOverwrite)
        continue;
      int squeeze_dim = -1;
      const Value* stored = df_.stored_value(write_src(*nodes()[d.node]), &squeeze_dim);
      region_values_.insert(stored);
      plan_.placements.push_back(
          {stored->name(), PlacementKind::kRegion, -1, static_cast<int32_t>(i), squeeze_dim});
    }
    for (int pos = 0; pos < df_.end; ++pos) place_outputs(pos);
    plan_.peak_bytes = peak_of(intervals_, df_.end);
    return std::move(plan_);
  }

 private:
  const std::vector<std::unique_ptr<Node>>& nodes() const { return df_.program->graph.nodes(); }

  // Where a node's output may be produced into planned storage, from which position.
  std::optional<int> planned_start(const Node& node, int pos, const Value* v) const {
    const int di = wp_.decision_at[pos];
    if (di >= 0) {
      const WriteDecision& d = wp_.writes[di];
      if (d.strategy != WriteStrategy::kCopyThenWrite) return std::nullopt;
      return d.src == SrcMode::kProducerWrites ? d.producer : pos;
    }
    if (node.outputs().size() != 1) return std::nullopt;
    // A group stores its outputs wherever they are placed, from the group's first member on.
    if (const int g = fusion_.group_of[pos]; g >= 0) return fusion_.groups[g].nodes.front();
    if (node.op().is_empty_factory() ||
        df_.target->has(node.op_id(), backend::kStoresIntoDestination) ||
        df_.target->has(node.op_id(), backend::kStoresIntoContiguousDestination))
      return pos;
    return std::nullopt;
  }

  void place_outputs(int pos) {
    const Node& node = *nodes()[pos];
    for (const Value* v : node.outputs()) {
      if (v == nullptr || !v->is_tensor()) continue;
      // A group's member value that only the group reads is never stored.
      if (fusion_.group_of[pos] >= 0 && !group_outputs_.count(v)) continue;
      const int r = wp_.root_of.at(v);
      const Root& root = wp_.roots[r];
      if (root.anchor != v || root.kind != Root::Kind::kIntermediate) continue;
      const RootLife& life = lives_[r];
      const int64_t bytes = example_bytes(*df_.program, *v);
      auto start = region_values_.count(v) ? std::nullopt : planned_start(node, pos, v);
      if (!start) {
        // Allocated by its kernel (or a view into a write's destination): counted for the
        // peak while alive, unless it leaves the call.
        if (!life.escapes && !region_values_.count(v))
          intervals_.push_back({pos, life.last_read, bytes});
        continue;
      }
      const int buffer = assign_buffer(*v, *start, life);
      plan_.placements.push_back({v->name(), PlacementKind::kBuffer, buffer, -1});
    }
  }

  int assign_buffer(const Value& v, int start, const RootLife& life) {
    const SymExpr size = byte_size_expr(v);
    const int64_t bytes = example_bytes(*df_.program, v);
    if (life.escapes) {
      plan_.buffers.push_back({size, true});
      free_at_.push_back(df_.end + 1);
      span_.push_back({start, df_.end, bytes});
      intervals_index_.push_back(SIZE_MAX);  // outputs are not intermediates: not in the peak
      return static_cast<int>(plan_.buffers.size()) - 1;
    }
    int best = -1;
    if (mode_ == PlanMode::kPlanned) {
      for (size_t b = 0; b < plan_.buffers.size(); ++b) {
        const Buffer& buf = plan_.buffers[b];
        if (buf.per_call || free_at_[b] >= start) continue;
        const bool fits = buf.bytes == size || (buf.bytes.is_constant() && size.is_constant());
        if (fits && (best < 0 || span_[b].bytes > span_[best].bytes)) best = static_cast<int>(b);
      }
    }
    if (best < 0) {
      plan_.buffers.push_back({size, false});
      free_at_.push_back(life.last_read);
      // A session keeps its buffers from call to call: each is resident for the whole call.
      span_.push_back({0, df_.end, bytes});
      intervals_index_.push_back(intervals_.size());
      intervals_.push_back(span_.back());
      return static_cast<int>(plan_.buffers.size()) - 1;
    }
    // Reuse: a constant-size buffer grows to the largest value it holds.
    Buffer& buf = plan_.buffers[best];
    if (buf.bytes.is_constant() && size.is_constant() && *size.constant() > *buf.bytes.constant())
      buf.bytes = size;
    free_at_[best] = life.last_read;
    Interval& span = span_[best];
    span.bytes = std::max(span.bytes, bytes);
    intervals_[intervals_index_[best]] = span;
    return best;
  }

  const DataFlow& df_;
  const WritePlanResult& wp_;
  PlanMode mode_;
  const FusionPlan& fusion_;
  std::unordered_set<const Value*> group_outputs_;
  std::vector<RootLife> lives_;
  MemoryPlan plan_;
  std::unordered_set<const Value*> region_values_;
  std::vector<int> free_at_;             // by buffer: the last position that uses it
  std::vector<Interval> span_;           // by buffer: when it is in use, and its size
  std::vector<size_t> intervals_index_;  // by buffer: its entry in intervals_
  std::vector<Interval> intervals_;      // everything live for the peak
};

}  // namespace

MemoryPlan plan_memory(const DataFlow& df, const WritePlanResult& wp, PlanMode mode,
                       const FusionPlan& fusion) {
  return MemoryPlanner(df, wp, mode, fusion).run();
}

}  // namespace splice::plan
