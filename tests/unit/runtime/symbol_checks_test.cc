// Values are bound before shapes are trusted (write-semantics.md §3.8): a data-dependent
// symbol read by .item() is checked against the range the program declares for it, and the
// program's _assert_scalar conditions are evaluated, each on its own. Exported programs
// usually carry an assert for every bound of a range, so the recorded cases cannot tell
// whether the range check runs at all; these programs (text IR) have only one of the two. A
// shape check on a data-dependent symbol runs as soon as the symbol is bound.
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>

#include "ir/parser.h"
#include "ir/type_check.h"
#include "runtime/executor.h"

namespace splice::runtime {
namespace {

// y = x with column `pos` replaced by s; u0 (the position) is declared in [0, 3], and no
// assert repeats that range.
constexpr std::string_view kRangeOnly = R"(symbols {
  u0: [0, 3]
}
signature {
  input %x: user_input
  input %s: user_input
  input %pos: user_input
  output 0: user_output
}
graph(%x: f32[2, 4], %s: f32[2, 1], %pos: i64[]) {
  %p: SymInt(u0) = aten._local_scalar_dense.default(%pos)
  %end: SymInt = _operator.add(%p, 1)
  %y: f32[2, 4] = aten.slice_scatter.default(%x, %s, 1, %p, %end, 1)
  return (%y)
}
)";

// The same write where u0 has no declared range; an assert requires it to be even.
constexpr std::string_view kAssertOnly = R"(signature {
  input %x: user_input
  input %s: user_input
  input %pos: user_input
  output 0: user_output
}
graph(%x: f32[2, 4], %s: f32[2, 1], %pos: i64[]) {
  %p: SymInt(u0) = aten._local_scalar_dense.default(%pos)
  %mod: SymInt = _operator.mod(%p, 2)
  %even: SymBool = _operator.eq(%mod, 0)
  aten._assert_scalar.default(%even, "position must be even")
  %end: SymInt = _operator.add(%p, 1)
  %y: f32[2, 4] = aten.slice_scatter.default(%x, %s, 1, %p, %end, 1)
  return (%y)
}
)";

detail::ModelImpl prepared(std::string_view text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message();
  if (!program.ok()) std::abort();
  auto model = prepare(std::move(*program), PrepareOptions{});
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model.ok()) std::abort();
  return std::move(*model);
}

Tensor filled(DType dtype, Shape shape, std::initializer_list<float> values) {
  Tensor t = Tensor::empty(dtype, shape).value();
  float* p = t.data<float>();
  for (float v : values) *p++ = v;
  return t;
}

Tensor position(int64_t p) {
  Tensor t = Tensor::empty(DType::kInt64, {}).value();
  *t.data<int64_t>() = p;
  return t;
}

Result<CallOutputs> run_at(const detail::ModelImpl& model, int64_t pos) {
  TensorMap inputs;
  inputs.emplace("x", filled(DType::kFloat32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}));
  inputs.emplace("s", filled(DType::kFloat32, {2, 1}, {-1, -2}));
  inputs.emplace("pos", position(pos));
  SPLICE_ASSIGN_OR_RETURN(detail::SessionState state, open_session_state(model));
  return execute(model, inputs, state);
}

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(SymbolChecks, ItemValueOutsideItsDeclaredRangeIsRejected) {
  detail::ModelImpl model = prepared(kRangeOnly);
  auto last = run_at(model, 3);
  ASSERT_TRUE(last.ok()) << last.error().message();
  ASSERT_EQ(last->user_outputs.size(), 1u);
  EXPECT_EQ(values(*last->user_outputs[0]), (std::vector<float>{0, 1, 2, -1, 4, 5, 6, -2}));
  for (int64_t bad : {4, -1}) {
    auto r = run_at(model, bad);
    ASSERT_FALSE(r.ok()) << "position " << bad << " is outside u0's range [0, 3]";
    EXPECT_EQ(r.error().kind(), ErrorKind::kOutOfRange) << r.error().message();
    EXPECT_NE(r.error().message().find("the value " + std::to_string(bad) +
                                       " read into symbol u0 is outside its range [0, 3]"),
              std::string::npos)
        << r.error().message();
  }
}

TEST(SymbolChecks, AssertScalarIsEvaluatedWithoutARange) {
  detail::ModelImpl model = prepared(kAssertOnly);
  auto even = run_at(model, 2);
  ASSERT_TRUE(even.ok()) << even.error().message();
  EXPECT_EQ(values(*even->user_outputs[0]), (std::vector<float>{0, 1, -1, 3, 4, 5, -2, 7}));
  auto odd = run_at(model, 1);
  ASSERT_FALSE(odd.ok()) << "the program asserts an even position";
  EXPECT_EQ(odd.error().kind(), ErrorKind::kAssertFailed) << odd.error().message();
  EXPECT_NE(odd.error().message().find("position must be even"), std::string::npos)
      << odd.error().message();
}

// A recorded size that only a data-dependent symbol decides: the write takes x[:, u0:] (4 - u0
// columns) for a src of 3, which the load-time type check keeps as a shape check. The runtime
// evaluates it as soon as .item() binds u0, before the write's kernel runs.
constexpr std::string_view kTailWrite = R"(symbols {
  u0: [0, 3]
}
signature {
  input %x: user_input
  input %s: user_input
  input %pos: user_input
  output 0: user_output
}
graph(%x: f32[2, 4], %s: f32[2, 3], %pos: i64[]) {
  %p: SymInt(u0) = aten._local_scalar_dense.default(%pos)
  %y: f32[2, 4] = aten.slice_scatter.default(%x, %s, 1, %p, None, 1)
  return (%y)
}
)";

TEST(SymbolChecks, ShapeChecksOnDataDependentSymbolsRunWhenTheyAreBound) {
  auto program = ir::parse_program(kTailWrite);
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto checks = ir::check_types(*program);
  ASSERT_TRUE(checks.ok()) << checks.error().message();
  ASSERT_EQ(checks->size(), 1u);
  program->shape_checks = std::move(*checks);
  auto model = prepare(std::move(*program), PrepareOptions{});
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto run = [&](int64_t pos, CallStats* stats) -> Result<CallOutputs> {
    TensorMap inputs;
    inputs.emplace("x", filled(DType::kFloat32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}));
    inputs.emplace("s", filled(DType::kFloat32, {2, 3}, {-1, -2, -3, -4, -5, -6}));
    inputs.emplace("pos", position(pos));
    SPLICE_ASSIGN_OR_RETURN(detail::SessionState state, open_session_state(*model));
    return execute(*model, inputs, state, stats);
  };
  auto fits = run(1, nullptr);
  ASSERT_TRUE(fits.ok()) << fits.error().message();
  EXPECT_EQ(values(*fits->user_outputs[0]), (std::vector<float>{0, -1, -2, -3, 4, -4, -5, -6}));
  CallStats stats;
  auto misfit = run(2, &stats);
  ASSERT_FALSE(misfit.ok());
  EXPECT_EQ(misfit.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(misfit.error().message(),
            "node 'y' (aten.slice_scatter.default): src has shape [2, 3] but the slice of self "
            "is [2, -u0 + 4] (with u0 = 2)");
  for (const StepRecord& step : stats.steps) EXPECT_NE(step.node, "y") << "the write ran";
}

}  // namespace
}  // namespace splice::runtime

namespace splice::runtime {
namespace {

// Issue 34 item 11: an input dim recorded as an expression of a symbol that no input dim is
// alone (2*s0) once failed with "symbol 's0' has no value (needed by 's0')"; the message now
// names the input, the dim, the expression and the symbol.
constexpr std::string_view kOnlyAnExpression = R"(symbols {
  s0: [1, 8]
}
signature {
  input %x: user_input
  output 0: user_output
}
graph(%x: f32[2*s0, 4]) {
  %y: f32[2*s0, 4] = aten.neg.default(%x)
  return (%y)
}
)";

TEST(SymbolChecks, AnInputDimThatIsOnlyAnExpressionNamesInputDimAndSymbol) {
  detail::ModelImpl model = prepared(kOnlyAnExpression);
  TensorMap inputs;
  inputs.emplace("x", Tensor::empty(DType::kFloat32, {6, 4}).value());
  auto state = open_session_state(model);
  ASSERT_TRUE(state.ok()) << state.error().message();
  auto r = execute(model, inputs, *state);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadInput);
  EXPECT_NE(r.error().message().find(
                "input 'x': dim 0 is recorded as the expression 2*s0, which needs symbol 's0', "
                "but no input dim is 's0' alone, so no call can give it a value"),
            std::string::npos)
      << r.error().message();
}

TEST(SymbolChecks, AMissingSymbolNamesTheWholeExpression) {
  auto r = (SymExpr(2) * SymExpr::symbol("s0")).evaluate({});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "symbol 's0' has no value (needed by '2*s0')");
}

}  // namespace
}  // namespace splice::runtime
