// The memory check before a call (see memory_check.h): what a call's plan allocates under its
// symbols, against what the backend's device can still give.
#include "runtime/memory_check.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "support/dtype.h"

namespace splice::runtime {

namespace {

using detail::AllocatedValue;

// n bytes with a readable size: "40000000000 bytes (37.3 GiB)".
std::string format_bytes(int64_t n) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return fmt::format("{} bytes", n);
  double v = static_cast<double>(n);
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{} bytes ({:.1f} {})", n, v, kUnits[unit]);
}

// The bytes of a tensor of `type` under `symbols`, or nullopt when a size uses a symbol not
// bound yet (or is negative: the call's own checks report that). Clamped at INT64_MAX.
std::optional<int64_t> bytes_under(const ir::TensorType& type, const SymBindings& symbols) {
  __int128 n = dtype_size(type.dtype);
  for (const SymExpr& d : type.sizes) {
    auto v = d.evaluate(symbols);
    if (!v.ok() || *v < 0) return std::nullopt;
    n = std::min<__int128>(n * *v, INT64_MAX);
  }
  return static_cast<int64_t>(n);
}

}  // namespace

int64_t CallMemory::total() const {
  return static_cast<int64_t>(
      std::min<__int128>(static_cast<__int128>(buffers) + intermediates, INT64_MAX));
}

std::vector<AllocatedValue> find_allocated_values(const detail::ModelImpl& m) {
  const auto& nodes = m.program.graph.nodes();
  const auto& steps = m.plan.steps;
  // The step that runs each node, and the group outputs a group's kernel allocates (those
  // with no placement); a group's other members are never stored.
  std::vector<int32_t> step_of(nodes.size(), -1);
  std::vector<char> in_group(nodes.size(), 0);
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].kind == plan::StepKind::kNode) step_of[steps[s].index] = static_cast<int32_t>(s);
    if (steps[s].kind != plan::StepKind::kGroup) continue;
    for (int32_t n : m.plan.groups[steps[s].index].nodes) {
      step_of[n] = static_cast<int32_t>(s);
      in_group[n] = 1;
    }
  }
  std::unordered_set<const ir::Value*> group_allocated;
  for (const detail::GroupExec& g : m.groups)
    for (size_t k = 0; k < g.output_values.size(); ++k)
      if (g.placements[k] == nullptr) group_allocated.insert(g.output_values[k]);
  // The steps after which each slot is released.
  std::unordered_map<int32_t, std::vector<int32_t>> released;
  for (size_t s = 0; s < m.step_release.size(); ++s)
    for (int32_t slot : m.step_release[s]) released[slot].push_back(static_cast<int32_t>(s));

  std::vector<AllocatedValue> out;
  const int32_t last = std::max<int32_t>(static_cast<int32_t>(steps.size()) - 1, 0);
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    const ir::Node& node = *nodes[pos];
    if (step_of[pos] < 0 || m.host_node[pos]) continue;
    // Views and in-place ops return memory that exists already.
    if (node.op().may_view() || node.op().aliasing == ir::Aliasing::kMutates) continue;
    // A write done in place, into its src, or into a planned buffer allocates nothing.
    if (m.decision_at[pos] >= 0 &&
        m.plan.writes[m.decision_at[pos]].strategy != plan::WriteStrategy::kCopyThenWrite)
      continue;
    for (const ir::Value* v : node.outputs()) {
      if (v == nullptr || !v->is_tensor() || m.placement.count(v)) continue;
      if (in_group[pos] && !group_allocated.count(v)) continue;
      auto slot = m.slot_of.find(v);
      if (slot == m.slot_of.end()) continue;
      AllocatedValue a{slot->second, step_of[pos], last};
      for (int32_t s : released[slot->second])
        if (s >= a.first_step) a.last_step = std::min(a.last_step, s);
      out.push_back(a);
    }
  }
  return out;
}

CallMemory call_memory(const detail::ModelImpl& m, const detail::SessionState& state,
                       const SymBindings& symbols) {
  CallMemory need;
  __int128 buffers = 0;
  for (size_t b = 0; b < m.plan.buffers.size(); ++b) {
    const plan::Buffer& buf = m.plan.buffers[b];
    auto bytes = buf.bytes.evaluate(symbols);
    if (!bytes.ok() || *bytes <= 0) continue;
    // A session buffer it holds already, large enough, is reused: no new memory.
    const bool held = !buf.per_call && b < state.workspace.size() && state.workspace[b] &&
                      static_cast<int64_t>(state.workspace[b]->nbytes()) >= *bytes;
    if (!held) buffers += *bytes;
  }
  need.buffers = static_cast<int64_t>(std::min<__int128>(buffers, INT64_MAX));

  std::vector<__int128> delta(m.plan.steps.size() + 1, 0);
  for (const AllocatedValue& a : m.allocated_values) {
    auto bytes = bytes_under(m.slot_value[a.slot]->type(), symbols);
    if (!bytes) continue;
    delta[a.first_step] += *bytes;
    delta[a.last_step + 1] -= *bytes;
  }
  __int128 live = 0, peak = 0;
  for (__int128 d : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  need.intermediates = static_cast<int64_t>(std::min<__int128>(peak, INT64_MAX));
  return need;
}

Result<void> check_call_memory(const detail::ModelImpl& model, detail::SessionState& state,
                               const SymBindings& symbols) {
  if (state.memory_checked && *state.memory_checked == symbols) return ok_result();
  const CallMemory need = call_memory(model, state, symbols);
  if (need.total() >= kMinCheckedBytes) {
    const std::optional<MemoryLimit> limit = model.backend->available_memory();
    if (limit && need.total() > limit->bytes) {
      std::string bound;
      for (const auto& [name, value] : symbols)
        bound += fmt::format("{}{} = {}", bound.empty() ? " with " : ", ", name, value);
      return make_error(ErrorKind::kBackend,
                        "out of memory: this call needs at least {}{} ({} in planned buffers, "
                        "{} in intermediates at their peak), but {} leaves {}; refused before "
                        "allocating any",
                        format_bytes(need.total()), bound, format_bytes(need.buffers),
                        format_bytes(need.intermediates), limit->source,
                        format_bytes(limit->bytes));
    }
  }
  state.memory_checked = symbols;
  return ok_result();
}

}  // namespace splice::runtime
