// ShapeEnv (shape_env.h): fresh unbacked symbols, and requirements settled from the ranges or
// kept as run-time checks.
#include "ir/shape_env.h"

#include <fmt/format.h>

namespace splice::ir {

namespace {

void add_symbols(const SymExpr& e, std::set<std::string, std::less<>>& out) {
  for (const std::string& s : e.free_symbols()) out.insert(s);
}

}  // namespace

SymExpr canonical_condition(const SymExpr& c) {
  const SymOp op = c.op();
  if ((op == SymOp::kEq || op == SymOp::kNe) && c.operands()[1].text() < c.operands()[0].text())
    return SymExpr::make(op, {c.operands()[1], c.operands()[0]});
  return c;
}

ShapeEnv::ShapeEnv(const Program& program) : ShapeEnv(program.graph, program.ranges) {
  for (const auto& [name, hint] : program.hints) taken_.insert(name);
}

ShapeEnv::ShapeEnv(const Graph& graph, SymRanges ranges) : ranges_(std::move(ranges)) {
  for (const auto& [name, range] : ranges_) taken_.insert(name);
  for (const auto& v : graph.values()) {
    if (v->is_tensor()) {
      for (const SymExpr& d : v->type().sizes) add_symbols(d, taken_);
    } else if (v->expr()) {
      add_symbols(*v->expr(), taken_);
    }
  }
}

SymExpr ShapeEnv::fresh_unbacked() {
  std::string name;
  do {
    // fmt::format, not "u" + std::to_string(...): GCC 12 at -O3 warns falsely (-Wrestrict) on
    // the string replace that operator+(const char*, std::string&&) and assigning a literal
    // inline to.
    name = fmt::format("u{}", next_fresh_++);
  } while (taken_.count(name));
  taken_.insert(name);
  fresh_.insert(name);
  ranges_[name] = SymRange{0, std::nullopt};
  return SymExpr::symbol(name);
}

bool ShapeEnv::is_fresh(const SymExpr& e) const {
  return e.op() == SymOp::kSymbol && fresh_.count(e.symbol_name()) > 0;
}

bool ShapeEnv::provably_equal(const SymExpr& a, const SymExpr& b) const {
  return a == b || decide(SymExpr::make(SymOp::kEq, {a, b})) == true;
}

Result<void> ShapeEnv::require(const SymExpr& condition, std::string_view what) {
  const SymExpr c = canonical_condition(simplify(condition));
  auto d = decide(c);
  if (d == true) return ok_result();
  std::string message = context_.empty() ? std::string(what) : context_ + ": " + std::string(what);
  if (d == false) return Error(ErrorKind::kBadArchive, std::move(message));
  // A condition on a fresh symbol is about a size the archive records under its own name; the
  // type check substitutes that name before keeping the check (check_types).
  if (check_keys_.insert(c.text()).second) checks_.push_back({c, std::move(message)});
  return ok_result();
}

std::vector<ShapeCheck> ShapeEnv::take_checks() {
  check_keys_.clear();
  return std::move(checks_);
}

}  // namespace splice::ir
