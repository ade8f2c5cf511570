// Plan <-> JSON for engine files. The reader never lets nlohmann throw: every access checks the
// JSON type first (the engine file is untrusted input and nothing may throw across splice's
// API), and every check names the field by its path ("writes[2].node") so a corrupt file is
// reported precisely.
#include "plan/plan_json.h"

#include <limits>
#include <set>
#include <unordered_map>

#include "ir/ops.h"
#include "plan/matmul_kernels.h"

namespace splice::plan {

namespace {

using nlohmann::json;

const char* placement_kind_name(PlacementKind k) {
  return k == PlacementKind::kBuffer ? "buffer" : "region";
}
const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::kNode:
      return "node";
    case StepKind::kBaseCopy:
      return "base_copy";
    case StepKind::kGroup:
      return "group";
  }
  return "?";
}

// plan.h names only the enums `splice inspect --plan` prints; these two exist only in the JSON.
std::optional<PlacementKind> parse_placement_kind(std::string_view s) {
  if (s == "buffer") return PlacementKind::kBuffer;
  if (s == "region") return PlacementKind::kRegion;
  return std::nullopt;
}
std::optional<StepKind> parse_step_kind(std::string_view s) {
  if (s == "node") return StepKind::kNode;
  if (s == "base_copy") return StepKind::kBaseCopy;
  if (s == "group") return StepKind::kGroup;
  return std::nullopt;
}

template <typename... Args>
Error plan_error(fmt::format_string<Args...> format, Args&&... args) {
  return Error(ErrorKind::kBadArchive,
               "engine plan: " + fmt::format(format, std::forward<Args>(args)...));
}

// A member of a JSON object, or an error naming the missing field.
Result<const json*> member(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return plan_error("{}.{} is missing", where, key);
  return &*it;
}

// An integer that fits int64. nlohmann stores large positive numbers as uint64, which
// get<int64_t>() would silently wrap, so those are range-checked first.
Result<int64_t> int_of(const json& j, const std::string& what) {
  if (!j.is_number_integer())
    return plan_error("{} is a JSON {}, not an integer", what, j.type_name());
  if (j.is_number_unsigned() &&
      j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return plan_error("{} = {} does not fit a 64-bit integer", what, j.get<uint64_t>());
  return j.get<int64_t>();
}

Result<int64_t> get_int(const json& obj, const char* key, const std::string& where) {
  SPLICE_ASSIGN_OR_RETURN(const json* j, member(obj, key, where));
  return int_of(*j, where + "." + key);
}

// An index into a list of `count` things; -1 (meaning "none") only when `allow_none`.
Result<int32_t> get_index(const json& obj, const char* key, const std::string& where, size_t count,
                          const char* of_what, bool allow_none) {
  SPLICE_ASSIGN_OR_RETURN(int64_t v, get_int(obj, key, where));
  if (allow_none && v == -1) return int32_t{-1};
  if (v < 0 || static_cast<uint64_t>(v) >= count)
    return plan_error("{}.{} is {}, outside the {} {}", where, key, v, count, of_what);
  return static_cast<int32_t>(v);
}

Result<std::string> get_string(const json& obj, const char* key, const std::string& where) {
  SPLICE_ASSIGN_OR_RETURN(const json* j, member(obj, key, where));
  if (!j->is_string())
    return plan_error("{}.{} is a JSON {}, not a string", where, key, j->type_name());
  return j->get<std::string>();
}

Result<bool> get_bool(const json& obj, const char* key, const std::string& where) {
  SPLICE_ASSIGN_OR_RETURN(const json* j, member(obj, key, where));
  if (!j->is_boolean())
    return plan_error("{}.{} is a JSON {}, not a boolean", where, key, j->type_name());
  return j->get<bool>();
}

Result<const json*> get_array(const json& obj, const char* key) {
  SPLICE_ASSIGN_OR_RETURN(const json* j, member(obj, key, "plan"));
  if (!j->is_array()) return plan_error("{} is a JSON {}, not an array", key, j->type_name());
  return j;
}

Result<void> expect_object(const json& j, const std::string& where) {
  if (!j.is_object()) return plan_error("{} is a JSON {}, not an object", where, j.type_name());
  return ok_result();
}

// Parses an enum field with one of plan.h's parsers, naming the bad string on failure.
template <typename E, typename Parse>
Result<E> get_enum(const json& obj, const char* key, const std::string& where, Parse parse) {
  SPLICE_ASSIGN_OR_RETURN(std::string s, get_string(obj, key, where));
  std::optional<E> e = parse(s);
  if (!e) return plan_error("{}.{} is '{}', which is not a known name", where, key, s);
  return *e;
}

// Symbols that the graph's values mention: a buffer's size can only be evaluated over these,
// since the runtime binds symbols from the values' shapes and scalars.
std::set<std::string> graph_symbols(const ir::Graph& graph) {
  std::set<std::string> out;
  for (const auto& v : graph.values()) {
    if (v->is_tensor())
      for (const SymExpr& d : v->type().sizes) out.merge(d.free_symbols());
    if (v->expr()) out.merge(v->expr()->free_symbols());
  }
  return out;
}

Result<WriteDecision> read_write(const json& j, const std::string& where, const ir::Graph& graph) {
  SPLICE_TRY(expect_object(j, where));
  const size_t nodes = graph.nodes().size();
  WriteDecision w;
  SPLICE_ASSIGN_OR_RETURN(w.node, get_index(j, "node", where, nodes, "graph nodes", false));
  SPLICE_ASSIGN_OR_RETURN(w.strategy,
                          get_enum<WriteStrategy>(j, "strategy", where, parse_strategy));
  SPLICE_ASSIGN_OR_RETURN(w.src, get_enum<SrcMode>(j, "src", where, parse_src_mode));
  SPLICE_ASSIGN_OR_RETURN(const json* rejected, member(j, "rejected", where));
  if (!rejected->is_array())
    return plan_error("{}.rejected is a JSON {}, not an array", where, rejected->type_name());
  for (size_t i = 0; i < rejected->size(); ++i) {
    std::string rwhere = fmt::format("{}.rejected[{}]", where, i);
    SPLICE_TRY(expect_object((*rejected)[i], rwhere));
    Rejection r;
    SPLICE_ASSIGN_OR_RETURN(r.strategy, get_string((*rejected)[i], "strategy", rwhere));
    SPLICE_ASSIGN_OR_RETURN(r.reason, get_string((*rejected)[i], "reason", rwhere));
    w.rejected.push_back(std::move(r));
  }
  SPLICE_ASSIGN_OR_RETURN(w.producer, get_index(j, "producer", where, nodes, "graph nodes", true));
  SPLICE_ASSIGN_OR_RETURN(w.dest_value, get_string(j, "dest_value", where));
  SPLICE_ASSIGN_OR_RETURN(w.bytes, get_int(j, "bytes", where));
  if (w.bytes < 0) return plan_error("{}.bytes is negative ({})", where, w.bytes);
  // The runtime stores src through the producer into dest_value's view: both must exist
  // (a full overwrite stores nothing: its result is src as produced).
  const bool stores =
      w.src == SrcMode::kProducerWrites && w.strategy != WriteStrategy::kFullOverwrite;
  if (stores && w.producer < 0)
    return plan_error("{} is producer_writes but names no producer node", where);
  if (!w.dest_value.empty()) {
    const ir::Value* v = graph.find_value(w.dest_value);
    if (v == nullptr || !v->is_tensor())
      return plan_error("{}.dest_value '{}' is not a tensor value of the graph", where,
                        w.dest_value);
  } else if (stores) {
    return plan_error("{} is producer_writes but names no destination value", where);
  }
  return w;
}

Result<Buffer> read_buffer(const json& j, const std::string& where,
                           const std::set<std::string>& symbols) {
  SPLICE_TRY(expect_object(j, where));
  Buffer b;
  SPLICE_ASSIGN_OR_RETURN(std::string text, get_string(j, "bytes", where));
  auto expr = parse_sym_expr(text);
  if (!expr.ok())
    return plan_error("{}.bytes '{}' is not a size expression: {}", where, text,
                      expr.error().message());
  for (const std::string& s : expr->free_symbols())
    if (!symbols.count(s))
      return plan_error("{}.bytes '{}' uses symbol '{}', which no value of the graph has", where,
                        text, s);
  b.bytes = std::move(*expr);
  SPLICE_ASSIGN_OR_RETURN(b.per_call, get_bool(j, "per_call", where));
  return b;
}

Result<Placement> read_placement(const json& j, const std::string& where, const ir::Graph& graph,
                                 size_t buffers, size_t writes) {
  SPLICE_TRY(expect_object(j, where));
  Placement p;
  SPLICE_ASSIGN_OR_RETURN(p.value, get_string(j, "value", where));
  const ir::Value* v = graph.find_value(p.value);
  if (v == nullptr || !v->is_tensor())
    return plan_error("{}.value '{}' is not a tensor value of the graph", where, p.value);
  SPLICE_ASSIGN_OR_RETURN(p.kind, get_enum<PlacementKind>(j, "kind", where, parse_placement_kind));
  // The index the kind uses must be valid; the other one is "none" or at least in range.
  const bool is_buffer = p.kind == PlacementKind::kBuffer;
  SPLICE_ASSIGN_OR_RETURN(p.buffer, get_index(j, "buffer", where, buffers, "buffers", !is_buffer));
  SPLICE_ASSIGN_OR_RETURN(p.write, get_index(j, "write", where, writes, "writes", is_buffer));
  SPLICE_ASSIGN_OR_RETURN(int64_t squeeze, get_int(j, "squeeze_dim", where));
  if (squeeze < -1 || squeeze >= static_cast<int64_t>(v->type().rank()) + 1 ||
      (is_buffer && squeeze != -1))
    return plan_error("{}.squeeze_dim {} is out of range", where, squeeze);
  p.squeeze_dim = static_cast<int32_t>(squeeze);
  return p;
}

// A group: member node indices (increasing, each in no other group) and output value names.
Result<Group> read_group(const json& j, const std::string& where, const ir::Graph& graph,
                         std::vector<bool>& grouped) {
  SPLICE_TRY(expect_object(j, where));
  Group g;
  SPLICE_ASSIGN_OR_RETURN(const json* members, member(j, "nodes", where));
  SPLICE_ASSIGN_OR_RETURN(const json* outputs, member(j, "outputs", where));
  if (!members->is_array() || !outputs->is_array())
    return plan_error("{}.nodes and .outputs must be arrays", where);
  for (size_t i = 0; i < members->size(); ++i) {
    const std::string what = fmt::format("{}.nodes[{}]", where, i);
    SPLICE_ASSIGN_OR_RETURN(int64_t n, int_of((*members)[i], what));
    if (n < 0 || static_cast<uint64_t>(n) >= grouped.size())
      return plan_error("{} is {}, outside the {} graph nodes", what, n, grouped.size());
    if (grouped[n]) return plan_error("{} puts node {} in a second group", what, n);
    if (!g.nodes.empty() && n <= g.nodes.back())
      return plan_error("{} is {}: members must be in program order", what, n);
    grouped[n] = true;
    g.nodes.push_back(static_cast<int32_t>(n));
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const json& o = (*outputs)[i];
    if (!o.is_string() || graph.find_value(o.get<std::string>()) == nullptr)
      return plan_error("{}.outputs[{}] is not a value of the graph", where, i);
    g.outputs.push_back(o.get<std::string>());
  }
  if (g.nodes.empty() || g.outputs.empty())
    return plan_error("{} has no members or no outputs", where);
  SPLICE_ASSIGN_OR_RETURN(g.kind, get_enum<GroupKind>(j, "kind", where, parse_group_kind));
  return g;
}

Result<MatmulDecision> read_matmul(const json& j, const std::string& where,
                                   const ir::Graph& graph) {
  SPLICE_TRY(expect_object(j, where));
  MatmulDecision m;
  SPLICE_ASSIGN_OR_RETURN(m.node,
                          get_index(j, "node", where, graph.nodes().size(), "graph nodes", false));
  SPLICE_ASSIGN_OR_RETURN(m.kernel, get_string(j, "kernel", where));
  SPLICE_ASSIGN_OR_RETURN(m.reason, get_string(j, "reason", where));
  if (!is_matrix_product(graph.nodes()[m.node]->op().id))
    return plan_error("{}.node {} ('{}') is not a matrix product", where, m.node,
                      graph.nodes()[m.node]->name());
  return m;
}

Result<Step> read_step(const json& j, const std::string& where, size_t nodes, size_t writes,
                       size_t groups) {
  SPLICE_TRY(expect_object(j, where));
  Step s;
  SPLICE_ASSIGN_OR_RETURN(s.kind, get_enum<StepKind>(j, "kind", where, parse_step_kind));
  if (s.kind == StepKind::kNode) {
    SPLICE_ASSIGN_OR_RETURN(s.index, get_index(j, "index", where, nodes, "graph nodes", false));
  } else if (s.kind == StepKind::kGroup) {
    SPLICE_ASSIGN_OR_RETURN(s.index, get_index(j, "index", where, groups, "groups", false));
  } else {
    SPLICE_ASSIGN_OR_RETURN(s.index, get_index(j, "index", where, writes, "writes", false));
  }
  return s;
}

}  // namespace

json concatenated_json(const std::vector<ir::ConcatenatedMatmul>& concatenated) {
  json out = json::array();
  for (const ir::ConcatenatedMatmul& c : concatenated) {
    json parts = json::array();
    for (const ir::ConcatenatedMatmul::Part& p : c.parts)
      parts.push_back({{"node", p.node}, {"target", p.target}, {"start", p.start}, {"end", p.end}});
    out.push_back({{"node", c.node},
                   {"target", c.target},
                   {"weight", c.weight},
                   {"parts", std::move(parts)}});
  }
  return out;
}

json plan_to_json(const Plan& plan) {
  json writes = json::array();
  for (const WriteDecision& w : plan.writes) {
    json rejected = json::array();
    for (const Rejection& r : w.rejected)
      rejected.push_back({{"strategy", r.strategy}, {"reason", r.reason}});
    writes.push_back({{"node", w.node},
                      {"strategy", strategy_name(w.strategy)},
                      {"src", src_mode_name(w.src)},
                      {"rejected", std::move(rejected)},
                      {"producer", w.producer},
                      {"dest_value", w.dest_value},
                      {"bytes", w.bytes}});
  }
  json buffers = json::array();
  for (const Buffer& b : plan.buffers)
    buffers.push_back({{"bytes", b.bytes.to_string()}, {"per_call", b.per_call}});
  json placements = json::array();
  for (const Placement& p : plan.placements)
    placements.push_back({{"value", p.value},
                          {"kind", placement_kind_name(p.kind)},
                          {"buffer", p.buffer},
                          {"write", p.write},
                          {"squeeze_dim", p.squeeze_dim}});
  json groups = json::array();
  for (const Group& g : plan.groups)
    groups.push_back(
        {{"nodes", g.nodes}, {"outputs", g.outputs}, {"kind", group_kind_name(g.kind)}});
  json steps = json::array();
  for (const Step& s : plan.steps)
    steps.push_back({{"kind", step_kind_name(s.kind)}, {"index", s.index}});
  json shared = json::array();
  for (const ir::SharedComputation& c : plan.shared)
    shared.push_back({{"node", c.node}, {"target", c.target}, {"duplicates", c.duplicates}});
  json matmuls = json::array();
  for (const MatmulDecision& m : plan.matmuls)
    matmuls.push_back({{"node", m.node}, {"kernel", m.kernel}, {"reason", m.reason}});
  return {{"mode", plan_mode_name(plan.mode)},
          {"shared", std::move(shared)},
          {"concatenated", concatenated_json(plan.concatenated)},
          {"backend", plan.backend},
          {"writes", std::move(writes)},
          {"buffers", std::move(buffers)},
          {"placements", std::move(placements)},
          {"groups", std::move(groups)},
          {"matmuls", std::move(matmuls)},
          {"steps", std::move(steps)},
          {"fusion_notes", plan.fusion_notes},
          {"totals",
           {{"steps", plan.totals.steps},
            {"kernels", plan.totals.kernels},
            {"copy_bytes", plan.totals.copy_bytes},
            {"peak_bytes", plan.totals.peak_bytes}}}};
}

Result<Plan> plan_from_json(const json& j, const ir::Graph& graph) {
  SPLICE_TRY(expect_object(j, "the plan"));
  Plan plan;
  SPLICE_ASSIGN_OR_RETURN(plan.mode, get_enum<PlanMode>(j, "mode", "plan", parse_plan_mode));
  auto backend = j.find("backend");
  if (backend == j.end() || !backend->is_string())
    return make_error(ErrorKind::kBadArchive,
                      "engine plan: \"backend\" is missing or not a string");
  plan.backend = backend->get<std::string>();
  const size_t nodes = graph.nodes().size();

  SPLICE_ASSIGN_OR_RETURN(const json* writes, get_array(j, "writes"));
  std::vector<bool> decided(nodes, false);
  for (size_t i = 0; i < writes->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(WriteDecision w,
                            read_write((*writes)[i], fmt::format("writes[{}]", i), graph));
    // One decision per write node: two would leave the runtime with conflicting strategies.
    if (decided[w.node])
      return plan_error("writes[{}] decides node {} ('{}') a second time", i, w.node,
                        graph.nodes()[w.node]->name());
    decided[w.node] = true;
    plan.writes.push_back(std::move(w));
  }

  SPLICE_ASSIGN_OR_RETURN(const json* buffers, get_array(j, "buffers"));
  const std::set<std::string> symbols = graph_symbols(graph);
  for (size_t i = 0; i < buffers->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Buffer b,
                            read_buffer((*buffers)[i], fmt::format("buffers[{}]", i), symbols));
    plan.buffers.push_back(std::move(b));
  }

  SPLICE_ASSIGN_OR_RETURN(const json* placements, get_array(j, "placements"));
  std::unordered_map<std::string, size_t> placed;
  for (size_t i = 0; i < placements->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(
        Placement p, read_placement((*placements)[i], fmt::format("placements[{}]", i), graph,
                                    plan.buffers.size(), plan.writes.size()));
    // A value has one storage; a second placement would make its location ambiguous.
    auto [it, fresh] = placed.emplace(p.value, i);
    if (!fresh)
      return plan_error("placements[{}] places value '{}' again (placements[{}] did)", i, p.value,
                        it->second);
    plan.placements.push_back(std::move(p));
  }

  SPLICE_ASSIGN_OR_RETURN(const json* groups, get_array(j, "groups"));
  std::vector<bool> grouped(nodes, false);
  for (size_t i = 0; i < groups->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Group g,
                            read_group((*groups)[i], fmt::format("groups[{}]", i), graph, grouped));
    plan.groups.push_back(std::move(g));
  }

  SPLICE_ASSIGN_OR_RETURN(const json* matmuls, get_array(j, "matmuls"));
  std::vector<bool> chosen(nodes, false);
  for (size_t i = 0; i < matmuls->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(MatmulDecision m,
                            read_matmul((*matmuls)[i], fmt::format("matmuls[{}]", i), graph));
    if (decided[m.node]) return plan_error("matmuls[{}] decides node {} a second time", i, m.node);
    decided[m.node] = true;
    plan.matmuls.push_back(std::move(m));
  }

  SPLICE_ASSIGN_OR_RETURN(const json* steps, get_array(j, "steps"));
  std::vector<bool> scheduled(nodes, false);
  std::vector<bool> group_run(plan.groups.size(), false);
  for (size_t i = 0; i < steps->size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Step s, read_step((*steps)[i], fmt::format("steps[{}]", i), nodes,
                                              plan.writes.size(), plan.groups.size()));
    std::vector<int32_t> runs;
    if (s.kind == StepKind::kNode) runs.push_back(s.index);
    if (s.kind == StepKind::kGroup) {
      if (group_run[s.index])
        return plan_error("steps[{}] runs group {} a second time", i, s.index);
      group_run[s.index] = true;
      runs = plan.groups[s.index].nodes;
    }
    for (int32_t n : runs) {
      if (scheduled[n])
        return plan_error("steps[{}] runs node {} ('{}') a second time", i, n,
                          graph.nodes()[n]->name());
      scheduled[n] = true;
    }
    plan.steps.push_back(s);
  }
  // Every node must run, or values it produces would never exist.
  for (size_t n = 0; n < nodes; ++n)
    if (!scheduled[n]) return plan_error("node {} ('{}') has no step", n, graph.nodes()[n]->name());

  SPLICE_ASSIGN_OR_RETURN(const json* notes, get_array(j, "fusion_notes"));
  for (size_t i = 0; i < notes->size(); ++i) {
    if (!(*notes)[i].is_string()) return plan_error("fusion_notes[{}] is not a string", i);
    plan.fusion_notes.push_back((*notes)[i].get<std::string>());
  }

  SPLICE_ASSIGN_OR_RETURN(const json* totals, member(j, "totals", "plan"));
  SPLICE_TRY(expect_object(*totals, "totals"));
  SPLICE_ASSIGN_OR_RETURN(plan.totals.steps, get_int(*totals, "steps", "totals"));
  SPLICE_ASSIGN_OR_RETURN(plan.totals.kernels, get_int(*totals, "kernels", "totals"));
  SPLICE_ASSIGN_OR_RETURN(plan.totals.copy_bytes, get_int(*totals, "copy_bytes", "totals"));
  SPLICE_ASSIGN_OR_RETURN(plan.totals.peak_bytes, get_int(*totals, "peak_bytes", "totals"));

  // Names only, for the report: nothing runs from them.
  SPLICE_ASSIGN_OR_RETURN(const json* shared, get_array(j, "shared"));
  for (size_t i = 0; i < shared->size(); ++i) {
    const json& entry = (*shared)[i];
    const std::string where = fmt::format("shared[{}]", i);
    SPLICE_TRY(expect_object(entry, where));
    ir::SharedComputation c;
    SPLICE_ASSIGN_OR_RETURN(c.node, get_string(entry, "node", where));
    SPLICE_ASSIGN_OR_RETURN(c.target, get_string(entry, "target", where));
    SPLICE_ASSIGN_OR_RETURN(const json* duplicates, get_array(entry, "duplicates"));
    for (size_t d = 0; d < duplicates->size(); ++d) {
      if (!(*duplicates)[d].is_string())
        return plan_error("{}.duplicates[{}] is not a string", where, d);
      c.duplicates.push_back((*duplicates)[d].get<std::string>());
    }
    plan.shared.push_back(std::move(c));
  }
  SPLICE_ASSIGN_OR_RETURN(const json* concatenated, get_array(j, "concatenated"));
  for (size_t i = 0; i < concatenated->size(); ++i) {
    const json& entry = (*concatenated)[i];
    const std::string where = fmt::format("concatenated[{}]", i);
    SPLICE_TRY(expect_object(entry, where));
    ir::ConcatenatedMatmul c;
    SPLICE_ASSIGN_OR_RETURN(c.node, get_string(entry, "node", where));
    SPLICE_ASSIGN_OR_RETURN(c.target, get_string(entry, "target", where));
    SPLICE_ASSIGN_OR_RETURN(c.weight, get_string(entry, "weight", where));
    SPLICE_ASSIGN_OR_RETURN(const json* parts, get_array(entry, "parts"));
    for (size_t k = 0; k < parts->size(); ++k) {
      const json& part = (*parts)[k];
      const std::string at = fmt::format("{}.parts[{}]", where, k);
      SPLICE_TRY(expect_object(part, at));
      ir::ConcatenatedMatmul::Part p;
      SPLICE_ASSIGN_OR_RETURN(p.node, get_string(part, "node", at));
      SPLICE_ASSIGN_OR_RETURN(p.target, get_string(part, "target", at));
      SPLICE_ASSIGN_OR_RETURN(p.start, get_int(part, "start", at));
      SPLICE_ASSIGN_OR_RETURN(p.end, get_int(part, "end", at));
      c.parts.push_back(std::move(p));
    }
    plan.concatenated.push_back(std::move(c));
  }
  return plan;
}

}  // namespace splice::plan
