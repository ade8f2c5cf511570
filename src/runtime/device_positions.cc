// Finding a program's position symbols (see device_positions.h), and the host-side range check
// before a replay.
#include "runtime/device_positions.h"

#include <algorithm>
#include <set>

#include "runtime/frame.h"
#include "runtime/host_nodes.h"

namespace splice::runtime {

namespace {

using ir::Node;
using ir::OpId;
using ir::Value;

// e - u when it is a constant: e is u + c.
std::optional<int64_t> offset_from(const SymExpr& e, const std::string& u) {
  return (e - SymExpr::symbol(u)).constant();
}

bool constant_or_offset(const SymExpr& e, const std::string& u) {
  return e.constant().has_value() || offset_from(e, u).has_value();
}

// Whether a condition holds for every value in `range`: an And of comparisons between
// constants and u + c, each monotone in u, so true at both ends means true in between.
bool implied_by_range(const SymExpr& cond, const std::string& u, const SymRange& range) {
  if (auto c = cond.constant()) return *c != 0;
  switch (cond.op()) {
    case SymOp::kAnd:
      return std::all_of(cond.operands().begin(), cond.operands().end(),
                         [&](const SymExpr& e) { return implied_by_range(e, u, range); });
    case SymOp::kLt:
    case SymOp::kLe:
    case SymOp::kGt:
    case SymOp::kGe: {
      for (const SymExpr& side : cond.operands())
        if (!constant_or_offset(side, u)) return false;
      for (int64_t end : {range.min, *range.max}) {
        auto v = cond.evaluate(SymBindings{{u, end}});
        if (!v.ok() || *v == 0) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

bool is_integer_dtype(DType d) {
  switch (d) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      return true;
    default:
      return false;
  }
}

bool mentions(const SymExpr& e, const std::string& u) { return e.free_symbols().count(u) > 0; }

const Value* value_arg(const Node& node, size_t i) {
  if (i >= node.args().size()) return nullptr;
  auto* v = std::get_if<Value*>(&node.arg(i).data);
  return v == nullptr ? nullptr : *v;
}

std::optional<int64_t> int_arg(const Node& node, size_t i, int64_t absent) {
  if (i >= node.args().size() || node.arg(i).is_none()) return absent;
  if (node.arg(i).is<int64_t>()) return node.arg(i).as<int64_t>();
  return std::nullopt;
}

// The expressions of the scalar values derived from a symbol: the archive's, or for sums,
// differences and comparisons it left without one (text IR), the one the operands give.
class DerivedExprs {
 public:
  std::optional<SymExpr> of(const Value* v) const {
    if (v == nullptr) return std::nullopt;
    if (v->expr()) return v->expr();
    auto it = computed_.find(v);
    if (it == computed_.end()) return std::nullopt;
    return it->second;
  }
  void derive(const Node& node) {
    const Value* out = node.outputs().empty() ? nullptr : node.output(0);
    if (out == nullptr || out->expr() || node.args().size() != 2) return;
    auto operand = [&](size_t i) -> std::optional<SymExpr> {
      if (node.arg(i).is<int64_t>()) return SymExpr(node.arg(i).as<int64_t>());
      return of(value_arg(node, i));
    };
    auto a = operand(0), b = operand(1);
    if (!a || !b) return;
    switch (node.op_id()) {
      case OpId::py_add:
        computed_.emplace(out, *a + *b);
        break;
      case OpId::py_sub:
        computed_.emplace(out, *a - *b);
        break;
      case OpId::py_lt:
      case OpId::py_le:
      case OpId::py_gt:
      case OpId::py_ge: {
        const SymOp op = node.op_id() == OpId::py_lt   ? SymOp::kLt
                         : node.op_id() == OpId::py_le ? SymOp::kLe
                         : node.op_id() == OpId::py_gt ? SymOp::kGt
                                                       : SymOp::kGe;
        computed_.emplace(out, SymExpr::make(op, {*a, *b}));
        break;
      }
      default:
        break;
    }
  }

 private:
  std::unordered_map<const Value*, SymExpr> computed_;
};

// The .item() candidates: one symbol each, read from an unwritten one-element integer input.
std::vector<PositionSymbol> item_symbols(const ir::Program& program, std::string& why_not) {
  std::set<std::string> written;
  for (const auto& spec : program.signature.outputs)
    if (spec.kind == ir::OutputKind::kUserInputMutation) written.insert(spec.target);
  std::vector<PositionSymbol> out;
  const auto& nodes = program.graph.nodes();
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    const Node& node = *nodes[pos];
    if (node.op_id() != OpId::_local_scalar_dense && node.op_id() != OpId::item) continue;
    const Value* result = node.outputs().empty() ? nullptr : node.output(0);
    if (result == nullptr || !result->expr() || result->expr()->op() != SymOp::kSymbol) continue;
    const std::string& u = result->expr()->symbol_name();
    auto reason = [&](std::string_view what) {
      if (why_not.empty()) why_not = fmt::format("{} is {}", u, what);
    };
    const Value* source = value_arg(node, 0);
    const bool user_input =
        source != nullptr &&
        std::any_of(program.signature.inputs.begin(), program.signature.inputs.end(),
                    [&](const ir::InputSpec& s) {
                      return s.value == source && s.kind == ir::InputKind::kUserInput;
                    });
    if (!user_input || written.count(source->name())) {
      reason("read from a value other than an input the program does not write");
      continue;
    }
    bool one = is_integer_dtype(source->type().dtype);
    for (const SymExpr& d : source->type().sizes) one = one && d.constant() == int64_t{1};
    auto range = program.ranges.find(u);
    if (!one || range == program.ranges.end() || !range->second.max) {
      reason("not an integer of one element with a bounded range");
      continue;
    }
    out.push_back({u, static_cast<int32_t>(pos), source, range->second, {}});
  }
  return out;
}

// The window of `node` (a slice, a select or their scatters) that starts at u + c, adding c to
// s's offsets; nullopt when its use of the values derived from u is anything else.
std::optional<PositionalNode> positional_node(const Node& node, PositionSymbol& s,
                                              const std::set<const Value*>& derived,
                                              const DerivedExprs& exprs) {
  const OpId op = node.op_id();
  const bool write = op == OpId::slice_scatter || op == OpId::select_scatter;
  const bool select = op == OpId::select_int || op == OpId::select_scatter;
  if (op != OpId::slice_Tensor && !write && !select) return std::nullopt;
  // The argument indices of dim and start (or index), and of end for slices.
  const size_t dim_at = write ? 2 : 1, start_at = dim_at + 1, end_at = start_at + 1;
  for (size_t i = 0; i < node.args().size(); ++i) {
    const Value* v = value_arg(node, i);
    if (v != nullptr && derived.count(v) && i != start_at && (select || i != end_at))
      return std::nullopt;
  }
  const Value* base = value_arg(node, 0);
  const Value* start = value_arg(node, start_at);
  auto dim = int_arg(node, dim_at, 0);
  const std::optional<SymExpr> start_expr = exprs.of(start);
  if (base == nullptr || !base->is_tensor() || !start_expr || !dim) return std::nullopt;
  const int64_t rank = base->type().rank();
  if (*dim < 0) *dim += rank;
  if (*dim < 0 || *dim >= rank) return std::nullopt;
  auto c = offset_from(*start_expr, s.name);
  if (!c || s.range.min + *c < 0) return std::nullopt;
  PositionalNode p;
  p.dim = *dim;
  p.select = select;
  if (!select) {
    // The window's size: the slice's, or src's for a slice_scatter.
    const Value* window = write ? value_arg(node, 1) : node.output(0);
    if (window == nullptr || !window->is_tensor() || window->type().rank() != rank)
      return std::nullopt;
    auto extent = window->type().sizes[*dim].constant();
    const std::optional<SymExpr> end = exprs.of(value_arg(node, end_at));
    if (!extent || !end || int_arg(node, end_at + 1, 1) != 1 ||
        (*end - *start_expr).constant() != *extent)
      return std::nullopt;
    p.extent = *extent;
  }
  auto& offsets = s.offsets;
  auto at = std::find(offsets.begin(), offsets.end(), *c);
  if (at == offsets.end()) {
    if (offsets.size() == kMaxPositionOffsets) return std::nullopt;
    at = offsets.insert(offsets.end(), *c);
  }
  p.offset = static_cast<int32_t>(at - offsets.begin());
  return p;
}

// Whether s is a position symbol (its positional nodes then go to `nodes`), else why not.
std::string check_symbol(const ir::Program& program, const plan::Plan& plan, PositionSymbol& s,
                         int32_t index, std::unordered_map<int32_t, PositionalNode>& nodes) {
  const std::string& u = s.name;
  for (const auto& v : program.graph.values())
    if (v->is_tensor())
      for (const SymExpr& d : v->type().sizes)
        if (mentions(d, u)) return fmt::format("{} sets the size of {}", u, v->name());
  for (const auto& b : plan.buffers)
    if (mentions(b.bytes, u)) return fmt::format("{} sets the size of a planned buffer", u);
  const auto& graph_nodes = program.graph.nodes();
  std::set<const Value*> derived{graph_nodes[s.item_node]->output(0)};
  DerivedExprs exprs;
  std::unordered_map<int32_t, PositionalNode> found;
  for (size_t pos = static_cast<size_t>(s.item_node) + 1; pos < graph_nodes.size(); ++pos) {
    const Node& node = *graph_nodes[pos];
    const auto operands = node.operands();
    if (std::none_of(operands.begin(), operands.end(),
                     [&](const Value* v) { return derived.count(v) > 0; }))
      continue;
    const std::string label = node_label(node);
    if (node.op().runs_on_host()) {
      if (node.op_id() == OpId::_assert_scalar) {
        const std::optional<SymExpr> cond = exprs.of(value_arg(node, 0));
        if (!cond || !implied_by_range(*cond, u, s.range))
          return fmt::format("{} is checked by {} beyond its range", u, label);
        continue;
      }
      if (node.op_id() == OpId::sym_constrain_range ||
          node.op_id() == OpId::sym_constrain_range_for_size) {
        auto lo = int_arg(node, 1, s.range.min), hi = int_arg(node, 2, *s.range.max);
        if (!lo || !hi || *lo > s.range.min || *hi < *s.range.max)
          return fmt::format("{} is constrained by {} beyond its range", u, label);
        continue;
      }
      for (const Value* out : node.outputs())
        if (out != nullptr) derived.insert(out);
      exprs.derive(node);
      continue;
    }
    auto p = positional_node(node, s, derived, exprs);
    if (!p) return fmt::format("{} is used by {} other than as where a window starts", u, label);
    p->symbol = index;
    found.emplace(static_cast<int32_t>(pos), *p);
  }
  for (const auto& out : program.graph.outputs())
    if (auto* v = std::get_if<Value*>(&out.data); v != nullptr && derived.count(*v))
      return fmt::format("{} is an output of the program", u);
  nodes.insert(found.begin(), found.end());
  return "";
}

}  // namespace

DevicePositions find_device_positions(const ir::Program& program, const plan::Plan& plan) {
  DevicePositions out;
  for (PositionSymbol& s : item_symbols(program, out.not_positions)) {
    const auto index = static_cast<int32_t>(out.symbols.size());
    std::string why = check_symbol(program, plan, s, index, out.nodes);
    if (!why.empty()) {
      if (out.not_positions.empty()) out.not_positions = std::move(why);
      continue;
    }
    out.symbols.push_back(std::move(s));
  }
  return out;
}

Result<std::optional<int64_t>> host_position(const PositionSymbol& symbol, const Tensor& t) {
  if (t.device().type != DeviceType::kCPU) return std::optional<int64_t>();
  SPLICE_CHECK_OR_RETURN(t.numel() == 1, ErrorKind::kBadInput,
                         "input '{}' read into {} has {} elements, not 1", symbol.source->name(),
                         symbol.name, t.numel());
  const std::byte* p = t.raw_data();
  switch (t.dtype()) {
    case DType::kUInt8:
      return std::optional<int64_t>(*reinterpret_cast<const uint8_t*>(p));
    case DType::kInt8:
      return std::optional<int64_t>(*reinterpret_cast<const int8_t*>(p));
    case DType::kInt16:
      return std::optional<int64_t>(*reinterpret_cast<const int16_t*>(p));
    case DType::kInt32:
      return std::optional<int64_t>(*reinterpret_cast<const int32_t*>(p));
    case DType::kInt64:
      return std::optional<int64_t>(*reinterpret_cast<const int64_t*>(p));
    default:
      return make_error(ErrorKind::kBadInput, "input '{}' read into {} is {}, not an integer",
                        symbol.source->name(), symbol.name, dtype_name(t.dtype()));
  }
}

Result<void> check_host_positions(const ir::Program& program, const DevicePositions& positions,
                                  const std::vector<std::pair<const ir::Value*, Tensor>>& inputs) {
  for (const PositionSymbol& s : positions.symbols) {
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](const auto& in) { return in.first == s.source; });
    if (it == inputs.end()) continue;
    SPLICE_ASSIGN_OR_RETURN(std::optional<int64_t> v, host_position(s, it->second));
    if (v && !s.range.contains(*v))
      return symbol_out_of_range(*program.graph.nodes()[s.item_node], s.name, *v, s.range);
  }
  return ok_result();
}

}  // namespace splice::runtime
