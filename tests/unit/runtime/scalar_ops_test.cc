// Python semantics of the scalar operators that programs evaluate at run time
// (`_operator.*`, `torch.sym_*`, `math.*`), one expectation per operator of the op table.
#include "runtime/scalar_ops.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/ops.h"

namespace splice::runtime {
namespace {

// By export target, so the tests read like the programs.
Result<Scalar> eval_target(std::string_view target, const std::vector<Scalar>& args) {
  const ir::OpSchema* op = ir::find_op(target);
  if (op == nullptr) return make_error(ErrorKind::kInternal, "no op {}", target);
  return eval_scalar_op(op->id, args);
}

Scalar eval(std::string_view target, std::vector<Scalar> args) {
  auto r = eval_target(target, args);
  EXPECT_TRUE(r.ok()) << target << ": " << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : Scalar{int64_t{-999}};
}

TEST(ScalarOps, IntegerArithmeticIsPython) {
  EXPECT_EQ(std::get<int64_t>(eval("_operator.add", {int64_t{7}, int64_t{-9}})), -2);
  EXPECT_EQ(std::get<int64_t>(eval("_operator.sub", {int64_t{7}, int64_t{9}})), -2);
  EXPECT_EQ(std::get<int64_t>(eval("_operator.mul", {int64_t{-3}, int64_t{4}})), -12);
  // Floor division and modulo round toward -inf (Python), unlike C++.
  EXPECT_EQ(std::get<int64_t>(eval("_operator.floordiv", {int64_t{-7}, int64_t{2}})), -4);
  EXPECT_EQ(std::get<int64_t>(eval("_operator.mod", {int64_t{-7}, int64_t{2}})), 1);
  EXPECT_EQ(std::get<int64_t>(eval("_operator.mod", {int64_t{7}, int64_t{-2}})), -1);
  EXPECT_EQ(std::get<int64_t>(eval("_operator.pow", {int64_t{3}, int64_t{4}})), 81);
  EXPECT_EQ(std::get<int64_t>(eval("_operator.neg", {int64_t{5}})), -5);
  // int / int is a float in Python 3.
  EXPECT_DOUBLE_EQ(std::get<double>(eval("_operator.truediv", {int64_t{7}, int64_t{2}})), 3.5);
}

TEST(ScalarOps, ComparisonsAndLogic) {
  EXPECT_TRUE(std::get<bool>(eval("_operator.eq", {int64_t{3}, int64_t{3}})));
  EXPECT_TRUE(std::get<bool>(eval("_operator.ne", {int64_t{3}, int64_t{4}})));
  EXPECT_TRUE(std::get<bool>(eval("_operator.lt", {int64_t{3}, 3.5})));
  EXPECT_FALSE(std::get<bool>(eval("_operator.le", {int64_t{4}, int64_t{3}})));
  EXPECT_TRUE(std::get<bool>(eval("_operator.gt", {int64_t{4}, int64_t{3}})));
  EXPECT_TRUE(std::get<bool>(eval("_operator.ge", {int64_t{3}, int64_t{3}})));
  EXPECT_FALSE(std::get<bool>(eval("_operator.and_", {true, false})));
  EXPECT_TRUE(std::get<bool>(eval("_operator.or_", {true, false})));
  EXPECT_TRUE(std::get<bool>(eval("_operator.not_", {false})));
  EXPECT_FALSE(std::get<bool>(eval("torch.sym_not", {true})));
}

TEST(ScalarOps, SymFunctions) {
  EXPECT_EQ(std::get<int64_t>(eval("torch.sym_max", {int64_t{2}, int64_t{9}})), 9);
  EXPECT_EQ(std::get<int64_t>(eval("torch.sym_min", {int64_t{2}, int64_t{9}})), 2);
  EXPECT_DOUBLE_EQ(std::get<double>(eval("torch.sym_float", {int64_t{3}})), 3.0);
  EXPECT_EQ(std::get<int64_t>(eval("torch.sym_int", {-2.7})), -2);  // truncation
  EXPECT_EQ(std::get<int64_t>(eval("math.ceil", {2.1})), 3);
  EXPECT_EQ(std::get<int64_t>(eval("math.floor", {-2.1})), -3);
}

TEST(ScalarOps, ErrorsAreReported) {
  auto div0 = eval_target("_operator.floordiv", {int64_t{1}, int64_t{0}});
  ASSERT_FALSE(div0.ok());
  EXPECT_NE(div0.error().message().find("division by zero"), std::string::npos);
  auto overflow = eval_target("_operator.mul", {int64_t{1} << 62, int64_t{4}});
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.error().message().find("overflow"), std::string::npos);
  auto arity = eval_target("_operator.add", {int64_t{1}});
  ASSERT_FALSE(arity.ok());
}

// Every scalar operator of the op table is evaluated here (so none can be added to the table
// without an implementation).
TEST(ScalarOps, EveryScalarOperatorOfTheTableEvaluates) {
  for (const ir::OpSchema* op : ir::all_ops()) {
    // aten ops and custom tensor ops (transformers.grouped_mm_fallback) are no scalar operators.
    if (op->target.rfind("aten.", 0) == 0 || !op->runs_on_host()) continue;
    std::vector<Scalar> args(op->args.size(), Scalar{int64_t{3}});
    auto r = eval_scalar_op(op->id, args);
    EXPECT_TRUE(r.ok()) << op->target << ": " << (r.ok() ? "" : r.error().message());
  }
}

}  // namespace
}  // namespace splice::runtime
