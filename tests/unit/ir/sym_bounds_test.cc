// Range-aware reasoning on symbolic sizes (ir/sym_bounds.h): bounds, simplification, exact
// division and deciding conditions, with the worked examples of the header.
#include <gtest/gtest.h>

#include <chrono>

#include "ir/sym_bounds.h"

namespace splice {
namespace {

SymExpr parse(std::string_view text) {
  auto e = parse_sym_expr(text);
  EXPECT_TRUE(e.ok()) << text << ": " << (e.ok() ? "" : e.error().message());
  return e.ok() ? *e : SymExpr(0);
}

const SymRanges kRanges = {
    {"s0", SymRange{2, 64}}, {"s1", SymRange{2, std::nullopt}}, {"u0", SymRange{0, 7}}};

TEST(SymBounds, Intervals) {
  auto b = sym_bounds(parse("s0 - 1"), kRanges);
  EXPECT_EQ(b.lo, 1);
  EXPECT_EQ(b.hi, 63);
  b = sym_bounds(parse("s0 // 8"), kRanges);
  EXPECT_EQ(b.lo, 0);
  EXPECT_EQ(b.hi, 8);
  b = sym_bounds(parse("Max(1, s0)"), kRanges);
  EXPECT_EQ(b.lo, 2);
  EXPECT_EQ(b.hi, 64);
  b = sym_bounds(parse("s1*s0"), kRanges);
  EXPECT_EQ(b.lo, 4);
  EXPECT_FALSE(b.hi.has_value());
  b = sym_bounds(parse("u0 % 8"), kRanges);
  EXPECT_EQ(b.lo, 0);
  EXPECT_EQ(b.hi, 7);
  // A symbol without a range is unbounded.
  b = sym_bounds(parse("t0 + 1"), kRanges);
  EXPECT_FALSE(b.lo.has_value());
  EXPECT_FALSE(b.hi.has_value());
  // A huge product saturates instead of overflowing.
  b = sym_bounds(parse("s1*s1*s1*s1*9223372036854775807"), kRanges);
  EXPECT_FALSE(b.hi.has_value());
}

TEST(SymBounds, Simplify) {
  EXPECT_EQ(sym_simplify(parse("Max(1, s0)"), kRanges).to_string(), "s0");
  EXPECT_EQ(sym_simplify(parse("Min(s0, s0 - 1)"), kRanges).to_string(), "s0 - 1");
  EXPECT_EQ(sym_simplify(parse("(4*s0) // 4"), kRanges).to_string(), "s0");
  EXPECT_EQ(sym_simplify(parse("s0 % 128"), kRanges).to_string(), "s0");
  EXPECT_EQ(sym_simplify(parse("u0 // 8"), kRanges).to_string(), "0");
  EXPECT_EQ(sym_simplify(parse("(6*s0*s1) % (2*s0)"), kRanges).to_string(), "0");
  // Undecidable pieces stay.
  EXPECT_EQ(sym_simplify(parse("Max(s0, s1)"), kRanges).to_string(), "Max(s0, s1)");
}

TEST(SymBounds, ExactQuotient) {
  EXPECT_EQ(sym_exact_quotient(parse("6*s0*s1"), parse("2*s0"))->to_string(), "3*s1");
  EXPECT_EQ(sym_exact_quotient(parse("4*s0 + 8"), SymExpr(4))->to_string(), "s0 + 2");
  EXPECT_EQ(sym_exact_quotient(parse("s0**2*s1"), parse("s0"))->to_string(), "s0*s1");
  EXPECT_FALSE(sym_exact_quotient(parse("s0 + 1"), parse("s0")).has_value());
  EXPECT_FALSE(sym_exact_quotient(parse("3*s0"), SymExpr(2)).has_value());
  EXPECT_FALSE(sym_exact_quotient(parse("s0"), SymExpr(0)).has_value());
}

TEST(SymBounds, Decide) {
  EXPECT_EQ(sym_decide(parse("s0 >= 1"), kRanges), true);
  EXPECT_EQ(sym_decide(parse("s0 == 1"), kRanges), false);
  EXPECT_EQ(sym_decide(parse("s0 == 8"), kRanges), std::nullopt);
  EXPECT_EQ(sym_decide(parse("s0 + 1 == s0 + 1"), kRanges), true);
  EXPECT_EQ(sym_decide(parse("s0 + 1 > s0"), kRanges), true);
  EXPECT_EQ(sym_decide(parse("Max(1, s0) == s0"), kRanges), true);
  EXPECT_EQ(sym_decide(parse("(s0 == 1) | (s0 >= 2)"), kRanges), true);
  EXPECT_EQ(sym_decide(parse("(s0 == 1) & (s1 == 3)"), kRanges), false);
  EXPECT_EQ(sym_decide(parse("u0 < 8"), kRanges), true);
  EXPECT_EQ(sym_decide(parse("s0 == s1"), kRanges), std::nullopt);
}

// Alternating Max/Min nest as deep as an archive's expressions may (kSymMaxDepth): simplifying
// and deciding stay fast (no subtree is re-simplified at every level).
TEST(SymBounds, DeepNestingStaysFast) {
  std::string text = "s0";
  for (int i = 0; i < 90; ++i)
    text = (i % 2 ? "Max(" : "Min(") + text + ", s1 + " + std::to_string(i) + ")";
  const SymExpr e = parse(text);
  const auto start = std::chrono::steady_clock::now();
  SymExpr s = sym_simplify(e, kRanges);
  (void)sym_decide(SymExpr::make(SymOp::kEq, {s, parse("s0")}), kRanges);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SymBounds, Substitute) {
  std::map<std::string, SymExpr, std::less<>> values = {{"u0", parse("2*s0")}};
  EXPECT_EQ(sym_substitute(parse("u0 + 1"), values).to_string(), "2*s0 + 1");
}

}  // namespace
}  // namespace splice
