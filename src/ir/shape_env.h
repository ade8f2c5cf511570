#pragma once
// The environment the shape rules (shape_rules.h) run in, after PyTorch's ShapeEnv: the
// program's symbol ranges, fresh unbacked symbols for sizes only a run can tell (a bool-mask
// index, repeat_interleave without output_size, .item()), and the conditions an op requires
// of its sizes (broadcastable dims, matching inner dims of a matmul). A condition the ranges
// decide is settled here — false is an error naming the node — and one they cannot decide is
// kept as a ShapeCheck for the runtime to evaluate once its symbols are bound.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/program.h"
#include "ir/sym_bounds.h"

namespace splice::ir {

// One spelling of a condition: an equality (or inequality) with its operands ordered by their
// text, so `s0 == s1` and `s1 == s0` are one check.
SymExpr canonical_condition(const SymExpr& condition);

class ShapeEnv {
 public:
  ShapeEnv() = default;
  // The program's ranges; fresh symbols avoid every symbol name the program uses.
  explicit ShapeEnv(const Program& program);
  ShapeEnv(const Graph& graph, SymRanges ranges);

  const SymRanges& ranges() const { return ranges_; }

  // A new size symbol ("u<N>", unused so far) with range [0, inf), for a data-dependent size.
  SymExpr fresh_unbacked();
  // Whether `e` is a bare symbol made by fresh_unbacked.
  bool is_fresh(const SymExpr& e) const;

  SymExpr simplify(const SymExpr& e) const { return sym_simplify(e, ranges_); }
  std::optional<bool> decide(const SymExpr& condition) const {
    return sym_decide(condition, ranges_);
  }
  // Sizes equal for every allowed value of the symbols (false: unknown or different).
  bool provably_equal(const SymExpr& a, const SymExpr& b) const;

  // The node the following requirements are about; its label prefixes their messages.
  void set_context(std::string label) { context_ = std::move(label); }
  const std::string& context() const { return context_; }

  // `condition` must hold: provably false is a kBadArchive error "<context>: <what>"; not
  // decidable becomes a ShapeCheck with that message (see checks()).
  Result<void> require(const SymExpr& condition, std::string_view what);

  // The undecided conditions so far, without duplicates, in the order they arose.
  const std::vector<ShapeCheck>& checks() const { return checks_; }
  std::vector<ShapeCheck> take_checks();

 private:
  SymRanges ranges_;
  std::set<std::string, std::less<>> taken_;
  std::set<std::string, std::less<>> fresh_;
  int next_fresh_ = 0;
  std::string context_;
  std::vector<ShapeCheck> checks_;
  std::set<std::string> check_keys_;
};

}  // namespace splice::ir
