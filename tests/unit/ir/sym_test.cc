// Tests for symbolic expressions: folding with Python semantics, canonical forms, evaluation
// errors, the infix text round trip, sympy srepr parsing and its error/depth handling.

#include "ir/sym.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace splice {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

SymExpr sym(const char* name) { return SymExpr::symbol(name); }

SymExpr parse(std::string_view text) {
  auto r = parse_sym_expr(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : SymExpr(int64_t{-999999});
}

SymExpr srepr(std::string_view text) {
  auto r = parse_srepr(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : SymExpr(int64_t{-999999});
}

int64_t eval(const SymExpr& e, const SymBindings& b) {
  auto r = e.evaluate(b);
  EXPECT_TRUE(r.ok()) << e.to_string() << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : -999999;
}

TEST(SymFold, FloorDivModCeilDivFollowPython) {
  EXPECT_EQ(floor_div(7, 2).constant(), 3);
  EXPECT_EQ(floor_div(-7, 2).constant(), -4);
  EXPECT_EQ(floor_div(7, -2).constant(), -4);
  EXPECT_EQ(floor_div(-7, -2).constant(), 3);
  EXPECT_EQ(floor_div(-8, 2).constant(), -4);
  EXPECT_EQ(py_mod(7, 3).constant(), 1);
  EXPECT_EQ(py_mod(-7, 3).constant(), 2);
  EXPECT_EQ(py_mod(7, -3).constant(), -2);
  EXPECT_EQ(py_mod(-7, -3).constant(), -1);
  EXPECT_EQ(py_mod(kMin, -1).constant(), 0);
  EXPECT_EQ(ceil_div(7, 2).constant(), 4);
  EXPECT_EQ(ceil_div(-7, 2).constant(), -3);
  EXPECT_EQ(ceil_div(7, -2).constant(), -3);
  EXPECT_EQ(ceil_div(8, 2).constant(), 4);
}

TEST(SymFold, OtherConstantFolding) {
  EXPECT_EQ((SymExpr(3) + 4).constant(), 7);
  EXPECT_EQ((SymExpr(3) * -4).constant(), -12);
  EXPECT_EQ(SymExpr::make(SymOp::kPow, {3, 4}).constant(), 81);
  EXPECT_EQ(SymExpr::make(SymOp::kMax, {3, 5, 2}).constant(), 5);
  EXPECT_EQ(SymExpr::make(SymOp::kMin, {3, 5, 2}).constant(), 2);
  EXPECT_EQ(SymExpr::make(SymOp::kEq, {3, 3}).constant(), 1);
  EXPECT_EQ(SymExpr::make(SymOp::kLt, {3, 2}).constant(), 0);
  EXPECT_EQ(SymExpr::make(SymOp::kGe, {sym("s0"), sym("s0")}).constant(), 1);
  EXPECT_EQ(SymExpr::make(SymOp::kAnd, {1, SymExpr::make(SymOp::kNe, {2, 3})}).constant(), 1);
  EXPECT_EQ(SymExpr::make(SymOp::kOr, {0, 0}).constant(), 0);
  EXPECT_EQ(SymExpr::make(SymOp::kNot, {0}).constant(), 1);
  // Division by zero and overflow are not folded: evaluation reports them.
  EXPECT_EQ(floor_div(1, 0).to_string(), "1 // 0");
  EXPECT_EQ(floor_div(kMin, -1).to_string(), "-9223372036854775808 // -1");
  EXPECT_FALSE((SymExpr(kMax) + 1).is_constant());
}

TEST(SymCanonical, IdentitiesAndOrdering) {
  SymExpr s0 = sym("s0"), s1 = sym("s1");
  EXPECT_EQ(s0 + s1, s1 + s0);
  EXPECT_EQ((s0 + s1).to_string(), "s0 + s1");
  EXPECT_EQ((2 + s0).to_string(), "s0 + 2");
  EXPECT_EQ((s0 * 2).to_string(), "2*s0");
  EXPECT_EQ(s0 * s1, s1 * s0);
  EXPECT_EQ((s0 + 0), s0);
  EXPECT_EQ((s0 * 1), s0);
  EXPECT_EQ((s0 * 0).constant(), 0);
  EXPECT_EQ((s0 - 2).to_string(), "s0 - 2");
  EXPECT_EQ((s1 - s0).to_string(), "-s0 + s1");
  EXPECT_EQ(((s0 + 1) + (s1 + 2)).to_string(), "s0 + s1 + 3");
  EXPECT_EQ(((s0 + 1) * s1).to_string(), "(s0 + 1)*s1");
  EXPECT_EQ(floor_div(s0, 1), s0);
  EXPECT_EQ(py_mod(s0, 1).constant(), 0);
  EXPECT_EQ(sym_max(s0, sym_max(1, s0)).to_string(), "Max(1, s0)");
  EXPECT_EQ(sym_min(s0, 4).to_string(), "Min(4, s0)");
  EXPECT_EQ(sym_max(s0, s0), s0);
  EXPECT_EQ(SymExpr::make(SymOp::kNot, {SymExpr::make(SymOp::kLt, {s0, 4})}).to_string(),
            "s0 >= 4");
}

TEST(SymCanonical, LikeTermsAndPowers) {
  SymExpr s0 = sym("s0"), s1 = sym("s1");
  EXPECT_EQ((s0 + s0).to_string(), "2*s0");
  EXPECT_EQ((s0 - s0).constant(), 0);
  EXPECT_EQ((2 * s0 + 3 * s0 - s1).to_string(), "5*s0 - s1");
  EXPECT_EQ((s0 * s1 - s1 * s0).constant(), 0);
  EXPECT_EQ((2 * (s0 + 1)).to_string(), "2*s0 + 2");
  EXPECT_EQ((2 * (s0 + 1) - 2 * s0).constant(), 2);
  EXPECT_EQ((s0 * s0).to_string(), "s0**2");
  EXPECT_EQ((s0 * s0 * s0), SymExpr::make(SymOp::kPow, {s0, 3}));
  EXPECT_EQ(SymExpr::make(SymOp::kPow, {s0, 0}).constant(), 1);
  EXPECT_EQ(SymExpr::make(SymOp::kPow, {s0, 1}), s0);
  EXPECT_EQ(floor_div(s0 * 4, 3).to_string(), "(4*s0) // 3");
}

TEST(SymCanonical, FloorAndCeilDivisionCancelCommonFactors) {
  // Both depend only on the rational quotient: what divides every term of the numerator and
  // the denominator cancels (a reshape's size derived two ways, Falcon's ALiBi with a dynamic
  // batch: (4*s43*s53) // (s53*s72) against (4*s43) // s72).
  SymExpr s0 = sym("s0"), s1 = sym("s1"), s2 = sym("s2");
  EXPECT_EQ(floor_div(4 * s0 * s1, s1 * s2), floor_div(4 * s0, s2));
  EXPECT_EQ(floor_div(4 * s0 * s1, s1 * s2).to_string(), "(4*s0) // s2");
  EXPECT_EQ(floor_div(6 * s0, 4).to_string(), "(3*s0) // 2");
  EXPECT_EQ(floor_div(s0 * s1, s1), s0);
  EXPECT_EQ(floor_div(s0 * s0 * s1, s0), s0 * s1);
  EXPECT_EQ(floor_div(2 * s0 + 4 * s1, 2), s0 + 2 * s1);
  EXPECT_EQ(floor_div(2 * s0 * s1 + 4 * s1, 2 * s1), s0 + 2);
  EXPECT_EQ(ceil_div(s0 * s1, 2 * s1), ceil_div(s0, 2));
  EXPECT_EQ(floor_div(-6 * s0, 4).to_string(), "(-3*s0) // 2");
  EXPECT_EQ(floor_div(6 * s0, -4).to_string(), "(3*s0) // -2");
  // The extreme coefficient (its magnitude does not fit int64).
  EXPECT_EQ(floor_div(kMin * s0, 2).to_string(), "-4611686018427387904*s0");
  EXPECT_EQ(floor_div(kMin * s0, kMin).to_string(),
            "(-9223372036854775808*s0) // -9223372036854775808");
  // Nothing common: unchanged.
  EXPECT_EQ(floor_div(s0 + 1, s0).to_string(), "(s0 + 1) // s0");
  EXPECT_EQ(floor_div(3 * s0, 2).to_string(), "(3*s0) // 2");
  // The same values wherever the original divides by something other than 0.
  for (int64_t a : {-7, -1, 1, 3, 8})
    for (int64_t b : {-3, 1, 2, 5}) {
      const SymBindings v = {{"s0", a}, {"s1", b}, {"s2", 3}};
      EXPECT_EQ(eval(floor_div(6 * s0 * s1, 4 * s1 * s2), v),
                eval(SymExpr::make(SymOp::kFloorDiv, {6 * a * b, 4 * b * 3}), {}));
      EXPECT_EQ(eval(ceil_div(6 * s0 * s1, 4 * s1), v), eval(ceil_div(6 * a * b, 4 * b), {}));
    }
}

TEST(SymEvaluate, Values) {
  SymBindings b = {{"s0", -7}, {"s1", 4}};
  EXPECT_EQ(eval(parse("s0 + 2*s1"), b), 1);
  EXPECT_EQ(eval(parse("s0 // 2"), b), -4);
  EXPECT_EQ(eval(parse("s0 % 3"), b), 2);
  EXPECT_EQ(eval(parse("s1 % -3"), b), -2);
  EXPECT_EQ(eval(parse("CeilDiv(s0, 2)"), b), -3);
  EXPECT_EQ(eval(parse("s0**3"), b), -343);
  EXPECT_EQ(eval(parse("Max(s0, s1, 2)"), b), 4);
  EXPECT_EQ(eval(parse("Min(s0, s1, 2)"), b), -7);
  EXPECT_EQ(eval(parse("(s1 >= 2) & (s1 <= 64)"), b), 1);
  EXPECT_EQ(eval(parse("(s1 >= 5) | (s0 > 0)"), b), 0);
  EXPECT_EQ(eval(parse("~((s1 == 1) & (s0 == 1))"), b), 1);
  EXPECT_EQ(eval(parse("s0 != 4"), b), 1);
  EXPECT_EQ(eval(SymExpr(42), {}), 42);
  EXPECT_EQ(parse("Max(s0, u0 + 1) * s1").free_symbols(),
            (std::set<std::string>{"s0", "s1", "u0"}));
}

TEST(SymEvaluate, Errors) {
  auto missing = parse("s0 + u0").evaluate({{"s0", 1}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kBadInput);
  EXPECT_NE(missing.error().message().find("'u0'"), std::string::npos);

  for (const char* text : {"s0 // s1", "s0 % s1", "CeilDiv(s0, s1)"}) {
    auto r = parse(text).evaluate({{"s0", 5}, {"s1", 0}});
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadInput);
    EXPECT_NE(r.error().message().find("division by zero"), std::string::npos);
  }

  auto mul = parse("s0*s1").evaluate({{"s0", int64_t{1} << 62}, {"s1", 4}});
  ASSERT_FALSE(mul.ok());
  EXPECT_EQ(mul.error().kind(), ErrorKind::kOutOfRange);
  EXPECT_NE(mul.error().message().find("s0*s1"), std::string::npos);

  EXPECT_FALSE(parse("s0 + 1").evaluate({{"s0", kMax}}).ok());
  EXPECT_EQ(eval(parse("s0 - 1"), {{"s0", kMin + 1}}), kMin);
  EXPECT_FALSE(parse("s0 - 1").evaluate({{"s0", kMin}}).ok());
  EXPECT_FALSE(parse("s0 // s1").evaluate({{"s0", kMin}, {"s1", -1}}).ok());
  EXPECT_EQ(eval(parse("s0**62"), {{"s0", 2}}), int64_t{1} << 62);
  EXPECT_EQ(parse("s0**63").evaluate({{"s0", 2}}).error().kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(eval(parse("s0**63"), {{"s0", -2}}), kMin);

  SymExpr unfolded = SymExpr(kMax) + 1;
  EXPECT_EQ(unfolded.evaluate({}).error().kind(), ErrorKind::kOutOfRange);
}

struct RoundTrip {
  const char* input;
  const char* printed;
};

TEST(SymText, RoundTripIsFixedPoint) {
  const RoundTrip cases[] = {
      {"s0 + 2", "s0 + 2"},
      {"2*s0", "2*s0"},
      {"s0*2", "2*s0"},
      {"(s0 + 1)*s1", "(s0 + 1)*s1"},
      {"s0 // 2", "s0 // 2"},
      {"s0 % 3", "s0 % 3"},
      {"CeilDiv(s0, 2)", "CeilDiv(s0, 2)"},
      {"s0**2", "s0**2"},
      {"Max(1, s0)", "Max(1, s0)"},
      {"Min(s0, 4)", "Min(4, s0)"},
      {"s0 == 4", "s0 == 4"},
      {"s0 != 4", "s0 != 4"},
      {"s0 < 4", "s0 < 4"},
      {"s0 <= 4", "s0 <= 4"},
      {"s0 > 4", "s0 > 4"},
      {"s0 >= 4", "s0 >= 4"},
      {"(s1 < 8) & (s0 >= 2)", "(s0 >= 2) & (s1 < 8)"},
      {"(s0 == 1) | (s1 == 1)", "(s0 == 1) | (s1 == 1)"},
      {"~((s0 == 1) & (s1 == 2))", "~((s0 == 1) & (s1 == 2))"},
      {"~(s0 == 4)", "s0 != 4"},
      {"-3", "-3"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"s0 - 2", "s0 - 2"},
      {"s0 + -2", "s0 - 2"},
      {"(s0*4) // 3", "(4*s0) // 3"},
      {"3 - 2*s1 + s0", "s0 - 2*s1 + 3"},
      {"-s0*s1", "-s0*s1"},
      {"-s0**2", "-s0**2"},
      {"(-2)**2 + s0", "s0 + 4"},
      {"-2**2 + s0", "s0 - 4"},
      {"(s0 + 1)**2", "(s0 + 1)**2"},
      {"2*(s0 // 2)", "2*(s0 // 2)"},
      {"-(s0 // 2)", "-(s0 // 2)"},
      {"s1 - (s0 // 2)", "-(s0 // 2) + s1"},
      {"s0 // -2", "s0 // -2"},
      {"(s0 + 1) // (s1 - 1)", "(s0 + 1) // (s1 - 1)"},
      {"(s0 % 3) % 2", "(s0 % 3) % 2"},
      {"Max(s0 + 1, 2*s1) - Min(u0, 3)", "Max(2*s1, s0 + 1) - Min(3, u0)"},
      {"(s0 == 4) + 1", "(s0 == 4) + 1"},
      {"s1**3*s0**2", "s0**2*s1**3"},
      {"s0 - (s1 - s2)", "s0 - s1 + s2"},
      {"9223372036854775807 + 1", "1 + 9223372036854775807"},
      {"  s_long_Name0   +3 ", "s_long_Name0 + 3"},
  };
  for (const RoundTrip& c : cases) {
    SymExpr e = parse(c.input);
    EXPECT_EQ(e.to_string(), c.printed) << c.input;
    SymExpr again = parse(e.to_string());
    EXPECT_EQ(again, e) << c.input;
    EXPECT_EQ(again.to_string(), e.to_string()) << c.input;
  }
}

TEST(SymText, ParseErrors) {
  for (const char* text : {"", "s0 +", "s0 + 2)", "(s0", "s0 / 2", "s0 $ 1", "sin(s0)", "Max()",
                           "CeilDiv(s0)", "s0**s1", "s0**-1", "1 < s0 < 3", "99999999999999999999",
                           "-9223372036854775809", "Symbol('s0')"}) {
    auto r = parse_sym_expr(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive) << text;
    EXPECT_NE(r.error().message().find("position"), std::string::npos) << text;
  }
  EXPECT_NE(parse_sym_expr("s0 + )").error().message().find("position 5"), std::string::npos);
}

// A small deterministic generator: random trees must print, parse back equal, and evaluate the
// same (including the same failures).
class Gen {
 public:
  explicit Gen(uint64_t seed) : state_(seed) {}
  int next(int n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state_ >> 33) % static_cast<uint64_t>(n));
  }
  SymExpr expr(int depth) {
    if (depth == 0 || next(4) == 0) {
      if (next(2) == 0) return SymExpr(int64_t{next(11) - 5});
      static const char* kNames[] = {"s0", "s1", "u0"};
      return SymExpr::symbol(kNames[next(3)]);
    }
    SymExpr a = expr(depth - 1), b = expr(depth - 1);
    switch (next(12)) {
      case 0:
        return a + b;
      case 1:
        return a - b;
      case 2:
        return a * b;
      case 3:
        return floor_div(a, b);
      case 4:
        return py_mod(a, b);
      case 5:
        return ceil_div(a, b);
      case 6:
        return sym_max(a, b);
      case 7:
        return sym_min(a, b);
      case 8:
        return SymExpr::make(SymOp::kPow, {a, next(3)});
      case 9:
        return -a;
      case 10:
        return SymExpr::make(static_cast<SymOp>(static_cast<int>(SymOp::kEq) + next(6)), {a, b});
      default:
        return SymExpr::make(next(2) ? SymOp::kAnd : SymOp::kOr, {a, b});
    }
  }

 private:
  uint64_t state_;
};

TEST(SymText, RandomTreesRoundTripAndEvaluateAlike) {
  Gen gen(12345);
  const SymBindings bindings[] = {
      {{"s0", 3}, {"s1", -2}, {"u0", 7}},
      {{"s0", 0}, {"s1", 5}, {"u0", -1}},
      {{"s0", -4}, {"s1", 1}, {"u0", 2}},
  };
  for (int i = 0; i < 2000; ++i) {
    SymExpr e = gen.expr(4);
    auto parsed = parse_sym_expr(e.to_string());
    ASSERT_TRUE(parsed.ok()) << e.to_string() << ": " << parsed.error().message();
    ASSERT_EQ(parsed->to_string(), e.to_string());
    ASSERT_EQ(*parsed, e) << e.to_string();
    for (const SymBindings& b : bindings) {
      auto x = e.evaluate(b), y = parsed->evaluate(b);
      ASSERT_EQ(x.ok(), y.ok()) << e.to_string();
      if (x.ok()) {
        ASSERT_EQ(*x, *y) << e.to_string();
      }
    }
  }
}

TEST(SymSrepr, Forms) {
  const RoundTrip cases[] = {
      {"Add(Symbol('s98', positive=True, integer=True), Integer(2))", "s98 + 2"},
      {"Mul(Integer(2), Symbol('s0', integer=True, positive=True))", "2*s0"},
      {"FloorDiv(Symbol('s0', integer=True, positive=True), Integer(2))", "s0 // 2"},
      {"Mod(Symbol('s0', integer=True, positive=True), Integer(3))", "s0 % 3"},
      {"PythonMod(Symbol('s0', integer=True), Integer(3))", "s0 % 3"},
      {"CeilToInt(IntTrueDiv(Symbol('s0', integer=True, positive=True), Integer(4)))",
       "CeilDiv(s0, 4)"},
      {"FloorToInt(IntTrueDiv(Symbol('s0'), Integer(4)))", "s0 // 4"},
      {"Max(Integer(1), Symbol('u0', integer=True))", "Max(1, u0)"},
      {"Min(Symbol('s0', integer=True), Integer(4))", "Min(4, s0)"},
      {"Pow(Symbol('s0', integer=True, positive=True), Integer(2))", "s0**2"},
      {"Integer(-1)", "-1"},
      {"Symbol('u0', integer=True)", "u0"},
      {"Symbol(\"s1\")", "s1"},
      {"Eq(Symbol('s0'), Integer(4))", "s0 == 4"},
      {"Equality(Symbol('s0'), Integer(4))", "s0 == 4"},
      {"Ne(Symbol('s0'), Integer(4))", "s0 != 4"},
      {"Unequality(Symbol('s0'), Integer(4))", "s0 != 4"},
      {"StrictLessThan(Symbol('s0'), Integer(4))", "s0 < 4"},
      {"LessThan(Symbol('s0'), Integer(4))", "s0 <= 4"},
      {"StrictGreaterThan(Symbol('s0'), Integer(4))", "s0 > 4"},
      {"GreaterThan(Symbol('s0'), Integer(4))", "s0 >= 4"},
      {"And(GreaterThan(Symbol('s0', integer=True), Integer(2)), "
       "LessThan(Symbol('s0', integer=True), Integer(64)))",
       "(s0 <= 64) & (s0 >= 2)"},
      {"Or(Eq(Symbol('u0'), Integer(0)), Eq(Symbol('u0'), Integer(1)))", "(u0 == 0) | (u0 == 1)"},
      {"Not(Eq(Symbol('s0'), Integer(4)))", "s0 != 4"},
      {"Not(And(Eq(Symbol('s0'), Integer(1)), Eq(Symbol('s1'), Integer(1))))",
       "~((s0 == 1) & (s1 == 1))"},
      {"true", "1"},
      {"false", "0"},
      {"BooleanTrue()", "1"},
      {"BooleanFalse()", "0"},
      {"ModularIndexing(Symbol('s0'), Integer(2), Integer(8))", "(s0 // 2) % 8"},
      // Realistic nesting, as torch.export writes it.
      {"Add(Mul(Integer(-1), Symbol('s0', integer=True, positive=True)), "
       "Mul(Integer(2), FloorDiv(Add(Symbol('s1', integer=True, positive=True), Integer(-1)), "
       "Integer(2))), Integer(3))",
       "2*((s1 - 1) // 2) - s0 + 3"},
      {"Max(Integer(1), Mul(Symbol('s0', integer=True, positive=True), "
       "Add(Symbol('s1', integer=True, positive=True), Integer(1))))",
       "Max(1, s0*(s1 + 1))"},
      // Infix expr_str as PyTorch sometimes writes it.
      {"s0 + 2", "s0 + 2"},
      {"2*s0", "2*s0"},
      {"s0", "s0"},
      {"4", "4"},
      {"(s0//2)", "s0 // 2"},
      {"Mod(s0, 2)", "s0 % 2"},
      {"-s0 + 4", "-s0 + 4"},
      {"Eq(s0, 4)", "s0 == 4"},
  };
  for (const RoundTrip& c : cases) {
    SymExpr e = srepr(c.input);
    EXPECT_EQ(e.to_string(), c.printed) << c.input;
    EXPECT_EQ(parse(e.to_string()), e) << c.input;
  }
  SymExpr nested = srepr(cases[30].input);
  EXPECT_EQ(eval(nested, {{"s0", 5}, {"s1", 8}}), 4);
  EXPECT_EQ(
      srepr("Add(Symbol('s0'), Integer(9223372036854775807))").evaluate({{"s0", 1}}).error().kind(),
      ErrorKind::kOutOfRange);
}

TEST(SymSrepr, Errors) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {"sin(Symbol('s0'))", "'sin'"},
      {"Float('1.5', precision=53)", "'Float'"},
      {"Mul(Rational(1, 2), Symbol('s0'))", "'Rational'"},
      {"Pow(Symbol('s0'), Integer(-1))", "exponent '-1'"},
      {"Pow(Symbol('s0'), Symbol('s1'))", "exponent 's1'"},
      {"IntTrueDiv(Symbol('s0'), Integer(2))", "IntTrueDiv"},
      {"CeilToInt(Symbol('s0'))", "CeilToInt"},
      {"Add(Symbol('s0'), ", "expected an expression"},
      {"Symbol(s0)", "quoted name"},
      {"Symbol('s 0')", "not an identifier"},
      {"Symbol('s0", "unterminated"},
      {"Integer(99999999999999999999)", "does not fit in int64"},
      {"Integer(Symbol('s0'))", "Integer of non-constant"},
      {"FloorDiv(Symbol('s0'))", "FloorDiv takes 2"},
      {"Not(Integer(1), Integer(2))", "Not takes 1"},
      {"Add(Integer(1), Integer(2)) junk", "after the expression"},
  };
  for (const Case& c : cases) {
    auto r = parse_srepr(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive) << c.text;
    EXPECT_NE(r.error().message().find(c.needle), std::string::npos)
        << c.text << " → " << r.error().message();
  }
}

TEST(SymSrepr, DepthLimit) {
  auto nest = [](const std::string& open, const std::string& leaf, const std::string& close,
                 int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += leaf;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  // Within the limit: parses and folds.
  EXPECT_EQ(srepr(nest("Add(Integer(1), ", "Integer(0)", ")", 150)).constant(), 150);
  EXPECT_EQ(parse(nest("(", "s0", ")", 150)), SymExpr::symbol("s0"));
  // Beyond it, however deep: an error, not a stack overflow.
  for (const std::string& text :
       {nest("Add(Integer(1), ", "Integer(0)", ")", 300), nest("(", "s0", ")", 100000),
        nest("-", "s0", "", 100000), nest("Max(", "s0", ")", 100000)}) {
    auto r = parse_srepr(text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadArchive);
    EXPECT_NE(r.error().message().find("nested deeper than 200"), std::string::npos);
  }
  // Tree height also counts: a long chain of // builds a deep left-nested tree.
  std::string chain = "s0";
  for (int i = 0; i < 300; ++i) chain += " // s1";
  auto r = parse_sym_expr(chain);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("nested deeper"), std::string::npos);
  // A long flat sum is not deep.
  std::string sum = "s0";
  for (int i = 0; i < 20000; ++i) sum += " + s0";
  EXPECT_EQ(parse(sum).to_string(), "20001*s0");
}

TEST(SymRange, ToString) {
  EXPECT_EQ((SymRange{2, 64}).to_string(), "[2, 64]");
  EXPECT_EQ((SymRange{2, std::nullopt}).to_string(), "[2, inf]");
  EXPECT_EQ((SymRange{-3, 0}).to_string(), "[-3, 0]");
  EXPECT_TRUE((SymRange{2, std::nullopt}).contains(kMax));
  EXPECT_FALSE((SymRange{2, 64}).contains(65));
}

}  // namespace
}  // namespace splice
