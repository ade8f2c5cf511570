#pragma once
// Reasoning about symbolic sizes under the program's symbol ranges: the interval an expression
// can take, simplification that the ranges allow (`Max(1, s0)` is `s0` when s0 >= 1, `s0 // 8`
// is 0 when s0 < 8), exact division (`(4*s0*s1) / (2*s0)` is `2*s1`), and deciding a condition
// (`s0 + 1 == s1`) as true, false or unknown. The shape rules (shape_rules.h) and the load-time
// type check use these to tell a provably wrong recorded shape from one that can only be
// checked once the symbols are bound.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/sym.h"

namespace splice {

// The program's symbol ranges by name (Program::ranges).
using SymRanges = std::map<std::string, SymRange, std::less<>>;

// Closed interval of an expression's possible values; nullopt ends are unbounded.
struct SymInterval {
  std::optional<int64_t> lo;
  std::optional<int64_t> hi;
  std::optional<int64_t> value() const { return lo && hi && *lo == *hi ? lo : std::nullopt; }
};

// Interval arithmetic over the expression tree. A symbol without a range is unbounded; the
// ranges' INT64_MIN minimum (an archive that gave none) reads as unbounded too.
// Examples with s0 in [2, 64]: s0 - 1 → [1, 63]; s0 // 8 → [0, 8]; Max(1, s0) → [2, 64].
SymInterval sym_bounds(const SymExpr& e, const SymRanges& ranges);

// The expression with what the ranges decide folded away: sub-expressions of one possible value
// become constants, dominated Max/Min operands are dropped, floor/ceil divisions and modulos
// that are exact or whose dividend lies in one period are resolved.
// Examples with s0 in [2, 64]: Max(1, s0) → s0; (4*s0) // 4 → s0; s0 % 128 → s0.
SymExpr sym_simplify(const SymExpr& e, const SymRanges& ranges);

// q with a == q * b for every value of the symbols (b != 0), when a is a multiple of b term by
// term; nullopt otherwise. Examples: (6*s0*s1, 2*s0) → 3*s1; (4*s0 + 8, 4) → s0 + 2;
// (s0 + 1, s0) → nullopt.
std::optional<SymExpr> sym_exact_quotient(const SymExpr& a, const SymExpr& b);

// Whether a boolean condition (a comparison, And/Or/Not, or an integer meaning `!= 0`) holds
// for every value the ranges allow (true), for none (false), or neither can be shown (nullopt).
// Example with s0 in [2, 64]: s0 >= 1 → true; s0 == 1 → false; s0 == 8 → nullopt.
std::optional<bool> sym_decide(const SymExpr& condition, const SymRanges& ranges);

// `e` with each symbol named in `values` replaced by its expression.
// Example: (u0 + 1, {u0: 2*s0}) → 2*s0 + 1.
SymExpr sym_substitute(const SymExpr& e, const std::map<std::string, SymExpr, std::less<>>& values);

}  // namespace splice
