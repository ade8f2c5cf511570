// Symbolic integer expressions: node construction with constant folding and canonical ordering,
// the infix printer (whose output is cached in every node and doubles as the sort key), exact
// int64 evaluation with overflow checks, and SymRange printing. Canonical forms: sums and
// products are flattened, like terms are collected into integer coefficients (sums) or
// exponents (products), operands are sorted by their printed form with the constant last in a
// sum and first in a product, and a constant times a sum is distributed as sympy does. Folding
// that would overflow int64 is skipped (the node is kept unfolded) so that evaluation, not
// construction, reports the overflow.

#include "ir/sym.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "support/checked_math.h"

namespace splice {

struct SymNode {
  SymOp op = SymOp::kConst;
  int64_t value = 0;  // kConst
  std::string name;   // kSymbol
  std::vector<SymExpr> operands;
  std::string text;  // canonical printed form; also the deterministic sort key
  int depth = 1;
};

namespace {

using Wide = __int128;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

bool fits_int64(Wide v) { return v >= kInt64Min && v <= kInt64Max; }

// Printing precedence, Python's: a child whose precedence is too low for its position is
// parenthesised, which keeps print → parse → print a fixed point.
enum Prec : int {
  kPrecOr = 1,
  kPrecAnd = 2,
  kPrecCompare = 3,
  kPrecAdd = 4,
  kPrecMul = 5,  // *, //, %
  kPrecUnary = 6,
  kPrecPow = 7,
  kPrecAtom = 8,
};

int precedence(const SymNode& n) {
  switch (n.op) {
    case SymOp::kConst:
      return n.value < 0 ? kPrecUnary : kPrecAtom;
    case SymOp::kSymbol:
    case SymOp::kCeilDiv:
    case SymOp::kMax:
    case SymOp::kMin:
      return kPrecAtom;
    case SymOp::kAdd:
      return kPrecAdd;
    case SymOp::kMul:
    case SymOp::kFloorDiv:
    case SymOp::kMod:
      return kPrecMul;
    case SymOp::kPow:
      return kPrecPow;
    case SymOp::kEq:
    case SymOp::kNe:
    case SymOp::kLt:
    case SymOp::kLe:
    case SymOp::kGt:
    case SymOp::kGe:
      return kPrecCompare;
    case SymOp::kAnd:
      return kPrecAnd;
    case SymOp::kOr:
      return kPrecOr;
    case SymOp::kNot:
      return kPrecUnary;
  }
  return kPrecAtom;
}

bool is_comparison(SymOp op) {
  return op == SymOp::kEq || op == SymOp::kNe || op == SymOp::kLt || op == SymOp::kLe ||
         op == SymOp::kGt || op == SymOp::kGe;
}

bool is_boolean_op(SymOp op) {
  return is_comparison(op) || op == SymOp::kAnd || op == SymOp::kOr || op == SymOp::kNot;
}

const char* comparison_token(SymOp op) {
  switch (op) {
    case SymOp::kEq:
      return "==";
    case SymOp::kNe:
      return "!=";
    case SymOp::kLt:
      return "<";
    case SymOp::kLe:
      return "<=";
    case SymOp::kGt:
      return ">";
    default:
      return ">=";
  }
}

// The child's text, parenthesised when its precedence is below `min_prec`.
std::string child_text(const SymExpr& e, int min_prec) {
  if (precedence(*e.node()) < min_prec) return "(" + e.text() + ")";
  return e.text();
}

// Forward declarations: the canonicalising builders call each other.
SymExpr build_add(std::vector<SymExpr> operands);
SymExpr build_mul(std::vector<SymExpr> operands);

// Whether a product has the canonical shape: at most one constant, in front. A product whose
// constants overflowed stays unfolded (several constants) and is printed factor by factor.
bool has_single_coefficient(const std::vector<SymExpr>& ops) {
  return ops.size() >= 2 && ops[0].is_constant() && !ops[1].is_constant();
}

std::string print_mul(const std::vector<SymExpr>& ops) {
  std::string out;
  size_t first = 0;
  // `-x*y` reads back as (-x)*y, which is the same product unless x is a sum, which (-1)*x
  // would distribute: then the coefficient is written out.
  if (has_single_coefficient(ops) && *ops[0].constant() == -1 && ops[1].op() != SymOp::kAdd) {
    out = "-";
    first = 1;
  }
  for (size_t i = first; i < ops.size(); ++i) {
    if (i > first) out += "*";
    // A leading negative constant reads back as one literal; later ones need parentheses.
    // Factors bind tighter than *, // and %, so a // b is parenthesised as a factor.
    out += child_text(ops[i], i == 0 ? kPrecUnary : kPrecPow);
  }
  return out;
}

// A sum prints terms with a negative coefficient as subtraction: `s0 - 2*s1 - 3`.
std::string print_add(const std::vector<SymExpr>& ops) {
  std::string out = child_text(ops[0], kPrecAdd);
  for (size_t i = 1; i < ops.size(); ++i) {
    const SymExpr& t = ops[i];
    if (t.is_constant() && *t.constant() < 0 && *t.constant() != kInt64Min) {
      out += fmt::format(" - {}", -*t.constant());
      continue;
    }
    if (t.op() == SymOp::kMul && has_single_coefficient(t.operands())) {
      int64_t c = *t.operands()[0].constant();
      if (c < 0 && c != kInt64Min) {
        std::vector<SymExpr> negated = t.operands();
        negated[0] = SymExpr(-c);
        SymExpr positive = build_mul(std::move(negated));
        out += " - " + child_text(positive, kPrecAdd + 1);
        continue;
      }
    }
    out += " + " + child_text(t, kPrecAdd + 1);
  }
  return out;
}

std::string print_node(const SymNode& n) {
  const auto& ops = n.operands;
  switch (n.op) {
    case SymOp::kConst:
      return fmt::format("{}", n.value);
    case SymOp::kSymbol:
      return n.name;
    case SymOp::kAdd:
      return print_add(ops);
    case SymOp::kMul:
      return print_mul(ops);
    case SymOp::kFloorDiv:
    case SymOp::kMod:
      // The left operand is parenthesised unless atomic, for readability: `(4*s0) // 3`.
      return fmt::format("{} {} {}", child_text(ops[0], kPrecUnary),
                         n.op == SymOp::kFloorDiv ? "//" : "%", child_text(ops[1], kPrecUnary));
    case SymOp::kCeilDiv:
      return fmt::format("CeilDiv({}, {})", ops[0].text(), ops[1].text());
    case SymOp::kPow:
      return fmt::format("{}**{}", child_text(ops[0], kPrecAtom), child_text(ops[1], kPrecAtom));
    case SymOp::kMax:
    case SymOp::kMin: {
      std::string out = n.op == SymOp::kMax ? "Max(" : "Min(";
      for (size_t i = 0; i < ops.size(); ++i) out += (i ? ", " : "") + ops[i].text();
      return out + ")";
    }
    case SymOp::kEq:
    case SymOp::kNe:
    case SymOp::kLt:
    case SymOp::kLe:
    case SymOp::kGt:
    case SymOp::kGe:
      return fmt::format("{} {} {}", child_text(ops[0], kPrecAdd), comparison_token(n.op),
                         child_text(ops[1], kPrecAdd));
    case SymOp::kAnd:
    case SymOp::kOr: {
      std::string out;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (i) out += n.op == SymOp::kAnd ? " & " : " | ";
        out += "(" + ops[i].text() + ")";
      }
      return out;
    }
    case SymOp::kNot:
      return "~(" + ops[0].text() + ")";
  }
  return "?";
}

}  // namespace

// Creates a node from already-canonical parts (no folding), computing its cached text.
static SymExpr raw_node(SymOp op, std::vector<SymExpr> operands) {
  auto n = std::make_shared<SymNode>();
  n->op = op;
  n->operands = std::move(operands);
  int depth = 0;
  for (const SymExpr& o : n->operands) depth = std::max(depth, o.depth());
  n->depth = depth + 1;
  n->text = print_node(*n);
  return SymExpr::from_node(std::move(n));
}

namespace {

bool by_text(const SymExpr& a, const SymExpr& b) { return a.text() < b.text(); }

std::vector<SymExpr> flatten(SymOp op, std::vector<SymExpr> operands) {
  std::vector<SymExpr> flat;
  flat.reserve(operands.size());
  for (SymExpr& o : operands) {
    if (o.op() == op) {
      flat.insert(flat.end(), o.operands().begin(), o.operands().end());
    } else {
      flat.push_back(std::move(o));
    }
  }
  return flat;
}

// Kept when folding would overflow: flattened, constants at the sum's end (product's start).
SymExpr unfolded(SymOp op, std::vector<SymExpr> flat) {
  bool constants_first = op == SymOp::kMul;
  std::stable_sort(flat.begin(), flat.end(), [&](const SymExpr& a, const SymExpr& b) {
    if (a.is_constant() != b.is_constant()) return a.is_constant() == constants_first;
    return by_text(a, b);
  });
  return raw_node(op, std::move(flat));
}

// Splits a term into coefficient and base: 3*s0*s1 → (3, s0*s1); s0 → (1, s0).
std::pair<int64_t, SymExpr> split_coefficient(const SymExpr& t) {
  if (t.op() != SymOp::kMul || !t.operands()[0].is_constant()) return {1, t};
  std::vector<SymExpr> rest(t.operands().begin() + 1, t.operands().end());
  if (rest.size() == 1) return {*t.operands()[0].constant(), rest[0]};
  return {*t.operands()[0].constant(), raw_node(SymOp::kMul, std::move(rest))};
}

SymExpr build_add(std::vector<SymExpr> operands) {
  std::vector<SymExpr> flat = flatten(SymOp::kAdd, std::move(operands));
  Wide constant = 0;
  // Keyed by the base's text: std::map gives the canonical order for free.
  std::map<std::string, std::pair<Wide, SymExpr>> terms;
  for (const SymExpr& t : flat) {
    if (t.is_constant()) {
      constant += *t.constant();
      continue;
    }
    auto [coeff, base] = split_coefficient(t);
    auto it = terms.try_emplace(base.text(), Wide{0}, base).first;
    it->second.first += coeff;
  }
  if (!fits_int64(constant)) return unfolded(SymOp::kAdd, std::move(flat));
  std::vector<SymExpr> out;
  for (auto& [key, entry] : terms) {
    if (!fits_int64(entry.first)) return unfolded(SymOp::kAdd, std::move(flat));
    if (entry.first == 0) continue;
    out.push_back(entry.first == 1 ? entry.second
                                   : build_mul({SymExpr(int64_t(entry.first)), entry.second}));
  }
  if (out.empty()) return SymExpr(int64_t(constant));
  if (constant != 0) out.push_back(SymExpr(int64_t(constant)));
  if (out.size() == 1) return out[0];
  // A term may itself have stayed unfolded (overflow) and be a sum; flatten once more.
  for (const SymExpr& t : out) {
    if (t.op() == SymOp::kAdd) return unfolded(SymOp::kAdd, flatten(SymOp::kAdd, out));
  }
  return raw_node(SymOp::kAdd, std::move(out));
}

SymExpr build_pow(const SymExpr& base, const SymExpr& exponent);

// |c| as an unsigned value (exact for INT64_MIN, which std::abs and negation overflow).
uint64_t magnitude(int64_t c) {
  return c < 0 ? uint64_t{0} - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
}

SymExpr build_mul(std::vector<SymExpr> operands) {
  std::vector<SymExpr> flat = flatten(SymOp::kMul, std::move(operands));
  for (const SymExpr& f : flat) {
    if (f.is_constant() && *f.constant() == 0) return SymExpr(int64_t{0});
  }
  // The constants' product, by sign and magnitude: with no zero factor the magnitude never
  // shrinks, so whether it fits does not depend on the order of the factors (a product that
  // overflows must stay unfolded the same way however it is rebuilt).
  using UWide = unsigned __int128;
  constexpr UWide kLimit = UWide{1} << 63;
  UWide product = 1;  // the magnitude
  bool negative = false;
  bool overflow = false;
  for (const SymExpr& f : flat) {
    if (!f.is_constant() || overflow) continue;
    int64_t c = *f.constant();
    negative ^= c < 0;
    product *= magnitude(c);
    if (product > kLimit) overflow = true;
  }
  if (!negative && product == kLimit) overflow = true;
  Wide constant = negative ? -Wide(product) : Wide(product);
  // Like factors are collected into exponents: s0*s0 → s0**2.
  std::map<std::string, std::pair<Wide, SymExpr>> factors;
  for (const SymExpr& f : flat) {
    if (f.is_constant()) continue;
    SymExpr base = f;
    Wide exponent = 1;
    if (f.op() == SymOp::kPow) {
      base = f.operands()[0];
      exponent = *f.operands()[1].constant();
    }
    auto it = factors.try_emplace(base.text(), Wide{0}, base).first;
    it->second.first += exponent;
    if (!fits_int64(it->second.first)) overflow = true;
  }
  if (overflow) return unfolded(SymOp::kMul, std::move(flat));
  std::vector<SymExpr> out;
  for (auto& [key, entry] : factors) {
    out.push_back(entry.first == 1 ? entry.second
                                   : build_pow(entry.second, SymExpr(int64_t(entry.first))));
  }
  if (out.empty()) return SymExpr(int64_t(constant));
  if (constant == 1 && out.size() == 1) return out[0];
  // sympy distributes a numeric coefficient over a single sum: 2*(s0 + 1) → 2*s0 + 2.
  if (out.size() == 1 && out[0].op() == SymOp::kAdd) {
    std::vector<SymExpr> terms;
    for (const SymExpr& t : out[0].operands()) {
      terms.push_back(build_mul({SymExpr(int64_t(constant)), t}));
    }
    return build_add(std::move(terms));
  }
  for (const SymExpr& f : out) {
    if (f.op() == SymOp::kMul) return unfolded(SymOp::kMul, flatten(SymOp::kMul, out));
  }
  if (constant != 1) out.insert(out.begin(), SymExpr(int64_t(constant)));
  return raw_node(SymOp::kMul, std::move(out));
}

// Python's floor division and modulo on int64; nullopt for a zero divisor or overflow.
std::optional<int64_t> py_floordiv(int64_t a, int64_t b) {
  if (b == 0 || (a == kInt64Min && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::optional<int64_t> py_modulo(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
std::optional<int64_t> ceil_divide(int64_t a, int64_t b) {
  if (b == 0 || (a == kInt64Min && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}
std::optional<int64_t> int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) return std::nullopt;
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) {
      auto r = checked_mul(result, base);
      if (!r) return std::nullopt;
      result = *r;
    }
    exponent >>= 1;
    if (exponent == 0) break;
    auto b = checked_mul(base, base);
    if (!b) return std::nullopt;
    base = *b;
  }
  return result;
}

SymExpr build_pow(const SymExpr& base, const SymExpr& exponent) {
  int64_t k = *exponent.constant();
  if (k == 0) return SymExpr(int64_t{1});
  if (k == 1) return base;
  if (base.is_constant()) {
    if (auto v = int_pow(*base.constant(), k)) return SymExpr(*v);
  }
  if (base.op() == SymOp::kPow) {
    auto product = checked_mul(*base.operands()[1].constant(), k);
    if (product) return build_pow(base.operands()[0], SymExpr(*product));
  }
  return raw_node(SymOp::kPow, {base, exponent});
}

// A product's constant coefficient and its other factors by text with their exponents
// (4*s0**2*s1 → 4, {s0: 2, s1: 1}); nullopt for anything that is not a product, a power, a
// symbol or a constant (a sum, a floor division, ...) or whose coefficient does not fit.
struct Monomial {
  int64_t coefficient = 1;
  std::map<std::string, std::pair<int64_t, SymExpr>> factors;
};
std::optional<Monomial> monomial_of(const SymExpr& e) {
  Monomial m;
  const std::vector<SymExpr> single = {e};
  const std::vector<SymExpr>& parts = e.op() == SymOp::kMul ? e.operands() : single;
  for (const SymExpr& f : parts) {
    if (f.is_constant()) {
      const auto c = checked_mul(m.coefficient, *f.constant());
      if (!c) return std::nullopt;
      m.coefficient = *c;
    } else if (f.op() == SymOp::kPow) {
      const SymExpr& base = f.operands()[0];
      m.factors.try_emplace(base.text(), 0, base).first->second.first +=
          *f.operands()[1].constant();
    } else if (f.op() == SymOp::kSymbol) {
      m.factors.try_emplace(f.text(), 0, f).first->second.first += 1;
    } else {
      return std::nullopt;
    }
  }
  return m;
}

SymExpr monomial_expr(const Monomial& m) {
  std::vector<SymExpr> parts = {SymExpr(m.coefficient)};
  for (const auto& [text, entry] : m.factors)
    for (int64_t k = 0; k < entry.first; ++k) parts.push_back(entry.second);
  return build_mul(std::move(parts));
}

// a // b and ceil(a / b) depend only on the rational a / b, so what divides every term of a
// and b cancels: (4*s0*s1) // (s1*s2) is (4*s0) // s2, 6*s0 // 4 is 3*s0 // 2. (A reshape whose
// sizes were derived two ways gave both forms of one size.) nullopt when nothing cancels.
std::optional<std::pair<SymExpr, SymExpr>> cancel_common_factors(const SymExpr& a,
                                                                 const SymExpr& b) {
  std::optional<Monomial> den = monomial_of(b);
  if (!den || den->coefficient == 0) return std::nullopt;
  const std::vector<SymExpr> single = {a};
  const std::vector<SymExpr>& terms = a.op() == SymOp::kAdd ? a.operands() : single;
  std::vector<Monomial> num;
  for (const SymExpr& t : terms) {
    std::optional<Monomial> m = monomial_of(t);
    if (!m) return std::nullopt;
    num.push_back(std::move(*m));
  }
  // The gcd of the coefficients, on magnitudes (std::gcd would negate INT64_MIN; a gcd of 2^63,
  // every coefficient INT64_MIN, is left alone), and each factor's smallest exponent. b's
  // coefficient is not 0, so g >= 1.
  uint64_t gu = magnitude(den->coefficient);
  for (const Monomial& m : num) gu = std::gcd(gu, magnitude(m.coefficient));
  const int64_t g = gu > static_cast<uint64_t>(kInt64Max) ? 1 : static_cast<int64_t>(gu);
  std::map<std::string, int64_t> common;
  for (const auto& [text, entry] : den->factors) {
    int64_t k = entry.first;
    for (const Monomial& m : num) {
      auto it = m.factors.find(text);
      k = std::min(k, it == m.factors.end() ? 0 : it->second.first);
    }
    if (k > 0) common[text] = k;
  }
  if (g <= 1 && common.empty()) return std::nullopt;
  auto divide = [&](Monomial m) {
    m.coefficient /= g;
    for (const auto& [text, k] : common) m.factors[text].first -= k;
    return monomial_expr(m);
  };
  std::vector<SymExpr> reduced;
  for (const Monomial& m : num) reduced.push_back(divide(m));
  return std::make_pair(build_add(std::move(reduced)), divide(*den));
}

SymExpr build_binary(SymOp op, const SymExpr& a, const SymExpr& b) {
  if (op == SymOp::kFloorDiv || op == SymOp::kCeilDiv) {
    if (auto reduced = cancel_common_factors(a, b))
      return build_binary(op, reduced->first, reduced->second);
  }
  if (a.is_constant() && b.is_constant()) {
    std::optional<int64_t> v;
    if (op == SymOp::kFloorDiv) v = py_floordiv(*a.constant(), *b.constant());
    if (op == SymOp::kMod) v = py_modulo(*a.constant(), *b.constant());
    if (op == SymOp::kCeilDiv) v = ceil_divide(*a.constant(), *b.constant());
    if (v) return SymExpr(*v);
  }
  if (b.is_constant() && *b.constant() == 1) {
    return op == SymOp::kMod ? SymExpr(int64_t{0}) : a;
  }
  return raw_node(op, {a, b});
}

SymExpr build_extremum(SymOp op, std::vector<SymExpr> operands) {
  std::vector<SymExpr> flat = flatten(op, std::move(operands));
  std::optional<int64_t> constant;
  std::map<std::string, SymExpr> rest;  // dedupe and order by text
  for (const SymExpr& o : flat) {
    if (o.is_constant()) {
      int64_t v = *o.constant();
      if (!constant) constant = v;
      constant = op == SymOp::kMax ? std::max(*constant, v) : std::min(*constant, v);
    } else {
      rest.emplace(o.text(), o);
    }
  }
  std::vector<SymExpr> out;
  if (constant) out.push_back(SymExpr(*constant));
  for (auto& [key, e] : rest) out.push_back(e);
  if (out.size() == 1) return out[0];
  return raw_node(op, std::move(out));
}

SymExpr build_comparison(SymOp op, const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    int64_t x = *a.constant(), y = *b.constant();
    bool r = op == SymOp::kEq   ? x == y
             : op == SymOp::kNe ? x != y
             : op == SymOp::kLt ? x < y
             : op == SymOp::kLe ? x <= y
             : op == SymOp::kGt ? x > y
                                : x >= y;
    return SymExpr(int64_t{r});
  }
  if (a == b) {
    bool r = op == SymOp::kEq || op == SymOp::kLe || op == SymOp::kGe;
    return SymExpr(int64_t{r});
  }
  return raw_node(op, {a, b});
}

// A boolean view of an integer expression: itself when already boolean, else `x != 0`.
SymExpr as_boolean(const SymExpr& e) {
  if (e.is_constant()) return SymExpr(int64_t{*e.constant() != 0});
  if (is_boolean_op(e.op())) return e;
  return build_comparison(SymOp::kNe, e, SymExpr(int64_t{0}));
}

SymExpr build_logical(SymOp op, std::vector<SymExpr> operands) {
  bool is_and = op == SymOp::kAnd;
  std::map<std::string, SymExpr> rest;
  for (const SymExpr& o : flatten(op, std::move(operands))) {
    if (o.is_constant()) {
      bool truthy = *o.constant() != 0;
      // false absorbs an And, true absorbs an Or; the other constant is neutral.
      if (truthy != is_and) return SymExpr(int64_t{truthy});
      continue;
    }
    SymExpr b = as_boolean(o);
    rest.emplace(b.text(), b);
  }
  if (rest.empty()) return SymExpr(int64_t{is_and});
  if (rest.size() == 1) return rest.begin()->second;
  std::vector<SymExpr> out;
  for (auto& [key, e] : rest) out.push_back(e);
  return raw_node(op, std::move(out));
}

SymExpr build_not(const SymExpr& e) {
  if (e.is_constant()) return SymExpr(int64_t{*e.constant() == 0});
  const auto& ops = e.operands();
  switch (e.op()) {
    case SymOp::kNot:
      return ops[0];
    case SymOp::kEq:
      return build_comparison(SymOp::kNe, ops[0], ops[1]);
    case SymOp::kNe:
      return build_comparison(SymOp::kEq, ops[0], ops[1]);
    case SymOp::kLt:
      return build_comparison(SymOp::kGe, ops[0], ops[1]);
    case SymOp::kLe:
      return build_comparison(SymOp::kGt, ops[0], ops[1]);
    case SymOp::kGt:
      return build_comparison(SymOp::kLe, ops[0], ops[1]);
    case SymOp::kGe:
      return build_comparison(SymOp::kLt, ops[0], ops[1]);
    case SymOp::kAnd:
    case SymOp::kOr:
      return raw_node(SymOp::kNot, {e});
    default:
      return build_comparison(SymOp::kEq, e, SymExpr(int64_t{0}));
  }
}

}  // namespace

SymExpr::SymExpr(int64_t value) {
  auto n = std::make_shared<SymNode>();
  n->op = SymOp::kConst;
  n->value = value;
  n->text = fmt::format("{}", value);
  node_ = std::move(n);
}

SymExpr SymExpr::symbol(std::string name) {
  auto n = std::make_shared<SymNode>();
  n->op = SymOp::kSymbol;
  n->text = name;
  n->name = std::move(name);
  return SymExpr(SymNodePtr(std::move(n)));
}

SymExpr SymExpr::from_node(SymNodePtr node) { return SymExpr(std::move(node)); }

SymExpr SymExpr::make(SymOp op, std::vector<SymExpr> operands) {
  switch (op) {
    case SymOp::kConst:
    case SymOp::kSymbol:
      SPLICE_ASSERT(false && "use SymExpr(int64_t) or SymExpr::symbol");
      break;
    case SymOp::kAdd:
      SPLICE_ASSERT(!operands.empty());
      return build_add(std::move(operands));
    case SymOp::kMul:
      SPLICE_ASSERT(!operands.empty());
      return build_mul(std::move(operands));
    case SymOp::kFloorDiv:
    case SymOp::kMod:
    case SymOp::kCeilDiv:
      SPLICE_ASSERT(operands.size() == 2);
      return build_binary(op, operands[0], operands[1]);
    case SymOp::kPow:
      SPLICE_ASSERT(operands.size() == 2 && operands[1].is_constant() &&
                    *operands[1].constant() >= 0);
      return build_pow(operands[0], operands[1]);
    case SymOp::kMax:
    case SymOp::kMin:
      SPLICE_ASSERT(!operands.empty());
      return build_extremum(op, std::move(operands));
    case SymOp::kEq:
    case SymOp::kNe:
    case SymOp::kLt:
    case SymOp::kLe:
    case SymOp::kGt:
    case SymOp::kGe:
      SPLICE_ASSERT(operands.size() == 2);
      return build_comparison(op, operands[0], operands[1]);
    case SymOp::kAnd:
    case SymOp::kOr:
      return build_logical(op, std::move(operands));
    case SymOp::kNot:
      SPLICE_ASSERT(operands.size() == 1);
      return build_not(operands[0]);
  }
  SPLICE_ASSERT(false);
  return SymExpr();
}

SymOp SymExpr::op() const { return node_->op; }

std::optional<int64_t> SymExpr::constant() const {
  if (node_->op != SymOp::kConst) return std::nullopt;
  return node_->value;
}

const std::string& SymExpr::symbol_name() const { return node_->name; }
const std::vector<SymExpr>& SymExpr::operands() const { return node_->operands; }
int SymExpr::depth() const { return node_->depth; }
const std::string& SymExpr::text() const { return node_->text; }
std::string SymExpr::to_string() const { return node_->text; }
bool SymExpr::is_boolean() const { return is_boolean_op(node_->op); }

bool SymExpr::operator==(const SymExpr& other) const {
  if (node_ == other.node_) return true;
  const SymNode& a = *node_;
  const SymNode& b = *other.node_;
  if (a.op != b.op || a.value != b.value || a.name != b.name ||
      a.operands.size() != b.operands.size()) {
    return false;
  }
  for (size_t i = 0; i < a.operands.size(); ++i) {
    if (!(a.operands[i] == b.operands[i])) return false;
  }
  return true;
}

std::set<std::string> SymExpr::free_symbols() const {
  std::set<std::string> out;
  std::vector<const SymNode*> stack = {node_.get()};
  while (!stack.empty()) {
    const SymNode* n = stack.back();
    stack.pop_back();
    if (n->op == SymOp::kSymbol) out.insert(n->name);
    for (const SymExpr& o : n->operands) stack.push_back(o.node().get());
  }
  return out;
}

namespace {

Error overflow_error(const SymNode& n) {
  return make_error(ErrorKind::kOutOfRange, "int64 overflow evaluating '{}'", n.text);
}

// `root` is the expression being evaluated, named when a symbol in it has no value (the
// symbol's own node would only name itself: "'s0' needed by 's0'").
Result<int64_t> eval_node(const SymNode& n, const SymBindings& bindings, const SymNode& root) {
  if (n.op == SymOp::kConst) return n.value;
  if (n.op == SymOp::kSymbol) {
    auto it = bindings.find(n.name);
    SPLICE_CHECK_OR_RETURN(it != bindings.end(), ErrorKind::kBadInput,
                           "symbol '{}' has no value (needed by '{}')", n.name, root.text);
    return it->second;
  }
  std::vector<int64_t> v;
  v.reserve(n.operands.size());
  for (const SymExpr& o : n.operands) {
    SPLICE_ASSIGN_OR_RETURN(int64_t x, eval_node(*o.node(), bindings, root));
    v.push_back(x);
  }
  switch (n.op) {
    case SymOp::kAdd: {
      int64_t acc = 0;
      for (int64_t x : v) {
        auto r = checked_add(acc, x);
        if (!r) return overflow_error(n);
        acc = *r;
      }
      return acc;
    }
    case SymOp::kMul: {
      int64_t acc = 1;
      for (int64_t x : v) {
        auto r = checked_mul(acc, x);
        if (!r) return overflow_error(n);
        acc = *r;
      }
      return acc;
    }
    case SymOp::kFloorDiv:
    case SymOp::kMod:
    case SymOp::kCeilDiv: {
      SPLICE_CHECK_OR_RETURN(v[1] != 0, ErrorKind::kBadInput,
                             "division by zero evaluating '{}' (dividend {})", n.text, v[0]);
      std::optional<int64_t> r = n.op == SymOp::kFloorDiv ? py_floordiv(v[0], v[1])
                                 : n.op == SymOp::kMod    ? py_modulo(v[0], v[1])
                                                          : ceil_divide(v[0], v[1]);
      if (!r) return overflow_error(n);
      return *r;
    }
    case SymOp::kPow: {
      auto r = int_pow(v[0], v[1]);
      if (!r) return overflow_error(n);
      return *r;
    }
    case SymOp::kMax:
      return *std::max_element(v.begin(), v.end());
    case SymOp::kMin:
      return *std::min_element(v.begin(), v.end());
    case SymOp::kEq:
      return int64_t{v[0] == v[1]};
    case SymOp::kNe:
      return int64_t{v[0] != v[1]};
    case SymOp::kLt:
      return int64_t{v[0] < v[1]};
    case SymOp::kLe:
      return int64_t{v[0] <= v[1]};
    case SymOp::kGt:
      return int64_t{v[0] > v[1]};
    case SymOp::kGe:
      return int64_t{v[0] >= v[1]};
    case SymOp::kAnd:
      return int64_t{std::all_of(v.begin(), v.end(), [](int64_t x) { return x != 0; })};
    case SymOp::kOr:
      return int64_t{std::any_of(v.begin(), v.end(), [](int64_t x) { return x != 0; })};
    case SymOp::kNot:
      return int64_t{v[0] == 0};
    default:
      break;
  }
  return make_error(ErrorKind::kInternal, "unknown symbolic op in '{}'", n.text);
}

}  // namespace

Result<int64_t> SymExpr::evaluate(const SymBindings& bindings) const {
  return eval_node(*node_, bindings, *node_);
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymOp::kAdd, {a, b}); }
SymExpr operator-(const SymExpr& a, const SymExpr& b) { return a + -b; }
SymExpr operator-(const SymExpr& a) { return SymExpr::make(SymOp::kMul, {SymExpr(-1), a}); }
SymExpr operator*(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymOp::kMul, {a, b}); }
SymExpr floor_div(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymOp::kFloorDiv, {a, b});
}
SymExpr py_mod(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymOp::kMod, {a, b}); }
SymExpr ceil_div(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymOp::kCeilDiv, {a, b});
}
SymExpr sym_max(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymOp::kMax, {a, b}); }
SymExpr sym_min(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymOp::kMin, {a, b}); }

std::optional<std::vector<int64_t>> constant_values(const std::vector<SymExpr>& exprs) {
  std::vector<int64_t> values;
  values.reserve(exprs.size());
  for (const SymExpr& e : exprs) {
    const std::optional<int64_t> c = e.constant();
    if (!c) return std::nullopt;
    values.push_back(*c);
  }
  return values;
}

std::string SymRange::to_string() const {
  if (!max) return fmt::format("[{}, inf]", min);
  return fmt::format("[{}, {}]", min, *max);
}

}  // namespace splice
