#pragma once
// The load-time type check: every node's recorded output types (dtype, rank, each size; a
// SymInt's recorded expression) compared with what its op's shape rule gives for the recorded
// input types (shape_rules.h), in program order. A provable disagreement is a kBadArchive
// error naming the node, what was recorded and what the op gives:
//   node 'mul' (aten.mul.Tensor): output 'mul' is recorded as f32[6, 9], but the op gives
//   f32[6, 10]
// A size the ranges cannot decide (`s1` recorded where the op gives 8) becomes a ShapeCheck that
// the runtime evaluates once the symbols are bound, before any kernel runs. A data-dependent
// size (a fresh symbol in the rule) takes the recorded expression, so later nodes and checks
// use the archive's name for it.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/program.h"
#include "ir/shape_rules.h"

namespace splice::ir {

class TypeChecker {
 public:
  TypeChecker(const Graph& graph, const SymRanges& ranges) : env_(graph, ranges) {}

  // Checks one node whose arguments fit its schema and whose inputs were checked before.
  Result<void> check(const Node& node);
  // The undecided conditions so far (each once).
  std::vector<ShapeCheck> take_checks() { return std::move(checks_); }

 private:
  Result<void> compare(const Node& node, const Value& value, const OutputType& rule);
  // The recorded and the rule's size must be equal; `describe` says where.
  Result<void> check_equal(const SymExpr& recorded, SymExpr inferred, const std::string& message,
                           const std::string& undecided_message);
  void keep(ShapeCheck check);

  ShapeEnv env_;
  std::map<std::string, SymExpr, std::less<>> unified_;  // fresh symbol → recorded size
  std::vector<ShapeCheck> checks_;
  std::set<std::string> check_keys_;
};

// Checks every node of a structurally verified program (verify() runs this too and ignores the
// returned conditions); returns the conditions to check when the symbols are bound.
Result<std::vector<ShapeCheck>> check_types(const Program& program);

}  // namespace splice::ir
