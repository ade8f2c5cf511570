// Interval bounds, range-aware simplification, exact division and decision of symbolic
// conditions (sym_bounds.h). Bounds are computed in 128-bit integers with a saturating
// "infinity" far beyond int64, so that an unbounded end stays unbounded through sums and
// products and no intermediate overflows.
#include "ir/sym_bounds.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace splice {

namespace {

using Wide = __int128;
constexpr Wide kInf = Wide{1} << 100;

Wide saturate(Wide v) { return std::clamp(v, -kInf, kInf); }

struct Range {
  Wide lo = -kInf;
  Wide hi = kInf;
};

Range point(Wide v) { return {v, v}; }

Wide mul_sat(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  const bool negative = (a < 0) != (b < 0);
  const Wide ma = a < 0 ? -a : a;
  const Wide mb = b < 0 ? -b : b;
  if (ma >= kInf || mb >= kInf || ma > kInf / mb) return negative ? -kInf : kInf;
  return negative ? -(ma * mb) : ma * mb;
}

// Floor and ceiling of a / b for b != 0 (either may be "infinite").
Wide floor_div_wide(Wide a, Wide b) {
  if (a >= kInf || a <= -kInf) return (a > 0) == (b > 0) ? kInf : -kInf;
  if (b >= kInf || b <= -kInf) return (a == 0 || (a > 0) == (b > 0)) ? 0 : -1;
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
Wide ceil_div_wide(Wide a, Wide b) {
  if (a >= kInf || a <= -kInf) return (a > 0) == (b > 0) ? kInf : -kInf;
  if (b >= kInf || b <= -kInf) return (a == 0 || (a > 0) != (b > 0)) ? 0 : 1;
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}

Range from_corners(std::initializer_list<Wide> corners) {
  Range r{kInf, -kInf};
  for (Wide c : corners) {
    r.lo = std::min(r.lo, c);
    r.hi = std::max(r.hi, c);
  }
  return r;
}

Range pow_range(Range base, int64_t k) {
  auto p = [k](Wide b) {
    Wide r = 1;
    for (int64_t i = 0; i < k; ++i) r = mul_sat(r, b);
    return r;
  };
  if (k == 0) return point(1);
  if (k > 64) return {};  // beyond anything a shape needs; keep it unbounded
  if (k % 2 == 1) return {p(base.lo), p(base.hi)};
  if (base.lo >= 0) return {p(base.lo), p(base.hi)};
  if (base.hi <= 0) return {p(base.hi), p(base.lo)};
  return {0, std::max(p(base.lo), p(base.hi))};
}

// `simplify`: simplify a comparison's operands first (the public entry); false where they are
// simplified already (inside sym_simplify and range_of), which keeps nested Max/Min linear
// rather than re-simplifying every subtree at every level.
std::optional<bool> decide_impl(const SymExpr& c, const SymRanges& ranges, bool simplify);

Range range_of(const SymExpr& e, const SymRanges& ranges) {
  if (auto c = e.constant()) return point(*c);
  const auto& ops = e.operands();
  switch (e.op()) {
    case SymOp::kConst:
      break;
    case SymOp::kSymbol: {
      auto it = ranges.find(e.symbol_name());
      if (it == ranges.end()) return {};
      Range r;
      if (it->second.min != std::numeric_limits<int64_t>::min()) r.lo = it->second.min;
      if (it->second.max) r.hi = *it->second.max;
      return r;
    }
    case SymOp::kAdd: {
      Range r = point(0);
      for (const SymExpr& o : ops) {
        Range x = range_of(o, ranges);
        r.lo = saturate(r.lo + x.lo);
        r.hi = saturate(r.hi + x.hi);
      }
      return r;
    }
    case SymOp::kMul: {
      Range r = point(1);
      for (const SymExpr& o : ops) {
        Range x = range_of(o, ranges);
        r = from_corners(
            {mul_sat(r.lo, x.lo), mul_sat(r.lo, x.hi), mul_sat(r.hi, x.lo), mul_sat(r.hi, x.hi)});
      }
      return r;
    }
    case SymOp::kFloorDiv:
    case SymOp::kCeilDiv: {
      Range a = range_of(ops[0], ranges), b = range_of(ops[1], ranges);
      if (b.lo <= 0 && b.hi >= 0) return {};  // the divisor may be 0 or change sign
      auto div = e.op() == SymOp::kFloorDiv ? floor_div_wide : ceil_div_wide;
      return from_corners({div(a.lo, b.lo), div(a.lo, b.hi), div(a.hi, b.lo), div(a.hi, b.hi)});
    }
    case SymOp::kMod: {
      Range a = range_of(ops[0], ranges), b = range_of(ops[1], ranges);
      if (b.lo <= 0) return {};  // Python's modulo takes the divisor's sign
      if (b.lo == b.hi && a.lo > -kInf && a.hi < kInf) {
        const Wide m = b.lo;
        if (floor_div_wide(a.lo, m) == floor_div_wide(a.hi, m)) {
          const Wide base = floor_div_wide(a.lo, m) * m;
          return {a.lo - base, a.hi - base};
        }
      }
      return {0, b.hi >= kInf ? kInf : b.hi - 1};
    }
    case SymOp::kPow:
      return pow_range(range_of(ops[0], ranges), *ops[1].constant());
    case SymOp::kMax:
    case SymOp::kMin: {
      Range r = range_of(ops[0], ranges);
      for (size_t i = 1; i < ops.size(); ++i) {
        Range x = range_of(ops[i], ranges);
        if (e.op() == SymOp::kMax) {
          r = {std::max(r.lo, x.lo), std::max(r.hi, x.hi)};
        } else {
          r = {std::min(r.lo, x.lo), std::min(r.hi, x.hi)};
        }
      }
      return r;
    }
    default: {
      auto d = decide_impl(e, ranges, false);
      if (d) return point(*d ? 1 : 0);
      return {0, 1};
    }
  }
  return {};
}

// Decides a comparison between a and b through the range of a - b.
std::optional<bool> compare(SymOp op, const SymExpr& a, const SymExpr& b, const SymRanges& ranges,
                            bool simplify) {
  SymExpr diff = simplify ? sym_simplify(a, ranges) - sym_simplify(b, ranges) : a - b;
  Range d = range_of(diff, ranges);
  switch (op) {
    case SymOp::kEq:
      if (d.lo == 0 && d.hi == 0) return true;
      if (d.lo > 0 || d.hi < 0) return false;
      return std::nullopt;
    case SymOp::kNe:
      if (d.lo == 0 && d.hi == 0) return false;
      if (d.lo > 0 || d.hi < 0) return true;
      return std::nullopt;
    case SymOp::kLt:
      if (d.hi < 0) return true;
      if (d.lo >= 0) return false;
      return std::nullopt;
    case SymOp::kLe:
      if (d.hi <= 0) return true;
      if (d.lo > 0) return false;
      return std::nullopt;
    case SymOp::kGt:
      if (d.lo > 0) return true;
      if (d.hi <= 0) return false;
      return std::nullopt;
    case SymOp::kGe:
      if (d.lo >= 0) return true;
      if (d.hi < 0) return false;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<bool> decide_impl(const SymExpr& c, const SymRanges& ranges, bool simplify) {
  if (auto v = c.constant()) return *v != 0;
  const auto& ops = c.operands();
  switch (c.op()) {
    case SymOp::kEq:
    case SymOp::kNe:
    case SymOp::kLt:
    case SymOp::kLe:
    case SymOp::kGt:
    case SymOp::kGe:
      return compare(c.op(), ops[0], ops[1], ranges, simplify);
    case SymOp::kAnd: {
      bool all = true;
      for (const SymExpr& o : ops) {
        auto d = decide_impl(o, ranges, simplify);
        if (d == false) return false;
        all = all && d.has_value();
      }
      return all ? std::optional<bool>(true) : std::nullopt;
    }
    case SymOp::kOr: {
      bool all = true;
      for (const SymExpr& o : ops) {
        auto d = decide_impl(o, ranges, simplify);
        if (d == true) return true;
        all = all && d.has_value();
      }
      return all ? std::optional<bool>(false) : std::nullopt;
    }
    case SymOp::kNot: {
      auto d = decide_impl(ops[0], ranges, simplify);
      if (!d) return std::nullopt;
      return !*d;
    }
    default:
      return compare(SymOp::kNe, c, SymExpr(0), ranges, simplify);
  }
}

// A product term as a coefficient and base factors with exponents (keyed by the base's text).
struct Monomial {
  int64_t coefficient = 1;
  std::map<std::string, std::pair<int64_t, SymExpr>> factors;
};

Monomial monomial_of(const SymExpr& t) {
  Monomial m;
  auto add_factor = [&m](const SymExpr& f) {
    SymExpr base = f;
    int64_t exponent = 1;
    if (f.op() == SymOp::kPow) {
      base = f.operands()[0];
      exponent = *f.operands()[1].constant();
    }
    auto it = m.factors.try_emplace(base.text(), 0, base).first;
    it->second.first += exponent;
  };
  if (auto c = t.constant()) {
    m.coefficient = *c;
  } else if (t.op() == SymOp::kMul) {
    for (const SymExpr& f : t.operands()) {
      if (auto c = f.constant()) {
        m.coefficient *= *c;  // canonical products hold one constant: no overflow here
      } else {
        add_factor(f);
      }
    }
  } else {
    add_factor(t);
  }
  return m;
}

std::optional<SymExpr> divide_monomial(const SymExpr& term, const Monomial& d) {
  Monomial t = monomial_of(term);
  if (d.coefficient == 0 || t.coefficient % d.coefficient != 0) return std::nullopt;
  if (d.coefficient == -1 && t.coefficient == std::numeric_limits<int64_t>::min())
    return std::nullopt;
  std::vector<SymExpr> factors = {SymExpr(t.coefficient / d.coefficient)};
  for (const auto& [key, entry] : d.factors) {
    auto it = t.factors.find(key);
    if (it == t.factors.end() || it->second.first < entry.first) return std::nullopt;
    it->second.first -= entry.first;
  }
  for (const auto& [key, entry] : t.factors) {
    if (entry.first == 0) continue;
    factors.push_back(SymExpr::make(SymOp::kPow, {entry.second, SymExpr(entry.first)}));
  }
  return SymExpr::make(SymOp::kMul, std::move(factors));
}

}  // namespace

SymInterval sym_bounds(const SymExpr& e, const SymRanges& ranges) {
  Range r = range_of(e, ranges);
  SymInterval out;
  if (r.lo > -kInf && r.lo >= std::numeric_limits<int64_t>::min())
    out.lo = static_cast<int64_t>(r.lo);
  if (r.hi < kInf && r.hi <= std::numeric_limits<int64_t>::max())
    out.hi = static_cast<int64_t>(r.hi);
  return out;
}

std::optional<SymExpr> sym_exact_quotient(const SymExpr& a, const SymExpr& b) {
  if (a == b && !b.is_constant()) return SymExpr(1);
  if (b.op() == SymOp::kAdd) return std::nullopt;  // only monomial divisors
  Monomial d = monomial_of(b);
  if (d.coefficient == 0) return std::nullopt;
  if (a.op() != SymOp::kAdd) return divide_monomial(a, d);
  std::vector<SymExpr> terms;
  for (const SymExpr& t : a.operands()) {
    auto q = divide_monomial(t, d);
    if (!q) return std::nullopt;
    terms.push_back(*q);
  }
  return SymExpr::make(SymOp::kAdd, std::move(terms));
}

SymExpr sym_simplify(const SymExpr& e, const SymRanges& ranges) {
  if (e.is_constant() || e.op() == SymOp::kSymbol) {
    if (auto v = sym_bounds(e, ranges).value()) return SymExpr(*v);
    return e;
  }
  std::vector<SymExpr> ops;
  for (const SymExpr& o : e.operands()) ops.push_back(sym_simplify(o, ranges));
  SymExpr out = e;
  switch (e.op()) {
    case SymOp::kMax:
    case SymOp::kMin: {
      const bool is_max = e.op() == SymOp::kMax;
      std::vector<SymExpr> kept;
      for (size_t i = 0; i < ops.size(); ++i) {
        bool dominated = false;
        for (size_t j = 0; j < ops.size() && !dominated; ++j) {
          if (i == j) continue;
          // ops[j] is at least (max) / at most (min) ops[i] everywhere: ops[i] never wins.
          // Of two provably equal operands the later one is kept.
          auto d = decide_impl(is_max ? SymExpr::make(SymOp::kGe, {ops[j], ops[i]})
                                      : SymExpr::make(SymOp::kLe, {ops[j], ops[i]}),
                               ranges, false);
          if (d == true) {
            auto eq = decide_impl(SymExpr::make(SymOp::kEq, {ops[j], ops[i]}), ranges, false);
            dominated = eq != true || j > i;
          }
        }
        if (!dominated) kept.push_back(ops[i]);
      }
      if (kept.empty()) kept.push_back(ops.back());
      out = kept.size() == 1 ? kept[0] : SymExpr::make(e.op(), std::move(kept));
      break;
    }
    case SymOp::kFloorDiv:
    case SymOp::kCeilDiv: {
      if (auto q = sym_exact_quotient(ops[0], ops[1])) {
        out = *q;
        break;
      }
      out = SymExpr::make(e.op(), ops);
      break;
    }
    case SymOp::kMod: {
      if (sym_exact_quotient(ops[0], ops[1])) {
        out = SymExpr(0);
        break;
      }
      // A dividend in [0, divisor) is its own remainder.
      auto in_period =
          decide_impl(SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kGe, {ops[0], SymExpr(0)}),
                                                  SymExpr::make(SymOp::kLt, {ops[0], ops[1]})}),
                      ranges, false);
      out = in_period == true ? ops[0] : SymExpr::make(e.op(), ops);
      break;
    }
    default:
      out = SymExpr::make(e.op(), ops);
      break;
  }
  if (auto v = sym_bounds(out, ranges).value()) return SymExpr(*v);
  return out;
}

SymExpr sym_substitute(const SymExpr& e,
                       const std::map<std::string, SymExpr, std::less<>>& values) {
  if (e.op() == SymOp::kSymbol) {
    auto it = values.find(e.symbol_name());
    return it == values.end() ? e : it->second;
  }
  if (e.is_constant()) return e;
  std::vector<SymExpr> ops;
  for (const SymExpr& o : e.operands()) ops.push_back(sym_substitute(o, values));
  return SymExpr::make(e.op(), std::move(ops));
}

std::optional<bool> sym_decide(const SymExpr& condition, const SymRanges& ranges) {
  return decide_impl(condition, ranges, true);
}

}  // namespace splice
