#pragma once
// Symbolic integers (and booleans) for shapes that depend on named symbols: `s0 + 2`,
// `(s0*4) // 3`, `Max(1, u0)`. An expression is an immutable tree shared by pointer; SymExpr
// is the value type that holds one. Constants fold on construction and sums/products are kept
// in a canonical order, so structurally equal expressions print the same.
//
// Three notations meet here:
//   - sympy `srepr`, as the .pt2 archive writes them: `Add(Symbol('s0', positive=True,
//     integer=True), Integer(2))` (parse_srepr);
//   - the text IR's infix form: `s0 + 2`, `(s0 * 4) // 3`, `Max(1, u0)`, `s0 >= 2`
//     (to_string / parse_sym_expr, which round-trip);
//   - evaluation against bound symbol values (evaluate).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace splice {

enum class SymOp {
  kConst,     // integer constant
  kSymbol,    // named symbol
  kAdd,       // n-ary sum
  kMul,       // n-ary product
  kFloorDiv,  // Python floor division (rounds toward -inf)
  kMod,       // Python modulo (sign of the divisor)
  kCeilDiv,   // ceil(a / b): sympy's CeilToInt(IntTrueDiv(a, b))
  kPow,       // a ** k with a non-negative integer constant exponent
  kMax,       // n-ary
  kMin,       // n-ary
  // Boolean-valued (evaluate to 0 or 1), for _assert_scalar conditions and guards.
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kNot,
};

struct SymNode;
using SymNodePtr = std::shared_ptr<const SymNode>;

// Values bound to symbols at run time, by name.
using SymBindings = std::map<std::string, int64_t, std::less<>>;

class SymExpr {
 public:
  SymExpr() : SymExpr(int64_t{0}) {}
  SymExpr(int64_t value);  // NOLINT: constants convert implicitly
  static SymExpr symbol(std::string name);
  // Builds an n-ary or binary node, folding constants and canonicalising (no validation of
  // arity beyond an internal assert).
  static SymExpr make(SymOp op, std::vector<SymExpr> operands);

  SymOp op() const;
  bool is_constant() const { return op() == SymOp::kConst; }
  std::optional<int64_t> constant() const;
  const std::string& symbol_name() const;  // only for kSymbol
  const std::vector<SymExpr>& operands() const;

  // Evaluates with every free symbol bound; a missing symbol, division by zero or overflow is
  // an error naming it.
  Result<int64_t> evaluate(const SymBindings& bindings) const;
  std::set<std::string> free_symbols() const;

  // Text IR form; parse_sym_expr(to_string()) gives an equal expression.
  std::string to_string() const;
  // Structural equality of the canonical forms.
  bool operator==(const SymExpr& other) const;

  const SymNodePtr& node() const { return node_; }

  // Additions to the lead's API.
  // The canonical text (what to_string returns), cached in the node: no copy.
  const std::string& text() const;
  // Height of the tree (a constant or symbol is 1); parsers bound it.
  int depth() const;
  // Whether the op is a comparison, And, Or or Not (its value is 0 or 1).
  bool is_boolean() const;
  // Wraps a node built by sym.cc; SymNode is opaque elsewhere, so nothing else can make one.
  static SymExpr from_node(SymNodePtr node);

 private:
  explicit SymExpr(SymNodePtr node) : node_(std::move(node)) {}
  SymNodePtr node_;
};

SymExpr operator+(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a, const SymExpr& b);
SymExpr operator*(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a);  // (-1)*a
SymExpr floor_div(const SymExpr& a, const SymExpr& b);
SymExpr ceil_div(const SymExpr& a, const SymExpr& b);
SymExpr py_mod(const SymExpr& a, const SymExpr& b);
SymExpr sym_max(const SymExpr& a, const SymExpr& b);
SymExpr sym_min(const SymExpr& a, const SymExpr& b);

// The values of a list of expressions (a shape's sizes, a layout's strides) when every one is
// a constant; nullopt as soon as one is not.
std::optional<std::vector<int64_t>> constant_values(const std::vector<SymExpr>& exprs);

// Parses the text IR form written by SymExpr::to_string.
Result<SymExpr> parse_sym_expr(std::string_view text);
// Parses a sympy srepr string from a .pt2 archive: Symbol, Integer, Add, Mul, FloorDiv, Mod,
// CeilToInt(IntTrueDiv(a, b)), Max, Min, Pow (integer exponent; Pow(x, -1) only inside a Mul
// that makes an exact division is refused), Eq/Ne/StrictLessThan/LessThan/StrictGreaterThan/
// GreaterThan, And/Or/Not, true/false. Anything else is a kBadArchive error naming it.
Result<SymExpr> parse_srepr(std::string_view text);
// Parser nesting limit (parentheses, calls, unary operators, tree height): deeper input is a
// kBadArchive error rather than a stack overflow.
inline constexpr int kSymMaxDepth = 200;

// The allowed values of a symbol (range_constraints). An absent max means unbounded.
struct SymRange {
  int64_t min = 0;
  std::optional<int64_t> max;
  bool contains(int64_t v) const { return v >= min && (!max || v <= *max); }
  std::string to_string() const;  // "[2, 64]" or "[2, inf]"
};

}  // namespace splice
