// Parameters whose dtype and sizes match the program are checked once, when the model is
// prepared (check_weights_at_load), and bound as they are on every call; a parameter that does
// not match is still refused by every call, with the message naming it.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "ir/parser.h"
#include "runtime/executor.h"

namespace splice::runtime {
namespace {

constexpr std::string_view kProgram = R"(signature {
  input %p_w: parameter "w"
  input %x: user_input
  output 0: user_output
}
graph(%p_w: f32[3], %x: f32[2, 3]) {
  %y: f32[2, 3] = aten.mul.Tensor(%x, %p_w)
  return (%y)
}
)";

Tensor filled(const Shape& sizes, float start) {
  Tensor t = Tensor::empty(DType::kFloat32, sizes).value();
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

Result<CallOutputs> run_with_weight(const Tensor& w) {
  auto program = ir::parse_program(kProgram);
  if (!program.ok()) return program.error();
  program->weights["w"] = w;
  SPLICE_ASSIGN_OR_RETURN(auto model, prepare(std::move(*program), PrepareOptions{}));
  SPLICE_ASSIGN_OR_RETURN(auto state, open_session_state(model));
  TensorMap inputs;
  inputs.emplace("x", filled({2, 3}, 1));
  SPLICE_ASSIGN_OR_RETURN(auto first, execute(model, inputs, state));
  // A second call binds the weight again (the session's steady state).
  return execute(model, inputs, state);
}

TEST(WeightBinding, AMatchingWeightIsBoundEveryCall) {
  auto out = run_with_weight(filled({3}, 10));
  ASSERT_TRUE(out.ok()) << out.error().message();
  const Tensor y = out->user_outputs[0]->contiguous_copy().value();
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 6),
            (std::vector<float>{10, 22, 36, 40, 55, 72}));
}

TEST(WeightBinding, AMismatchedWeightIsRefusedByTheCall) {
  auto wrong_size = run_with_weight(filled({4}, 0));
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_EQ(wrong_size.error().message(),
            "weight 'w' has shape [4], the program expects f32[3] (dim 0 should be 3)");
  Tensor f64 = Tensor::empty(DType::kFloat64, {3}).value();
  auto wrong_dtype = run_with_weight(f64);
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_EQ(wrong_dtype.error().message(), "weight 'w' has dtype f64, the program expects f32");
}

}  // namespace
}  // namespace splice::runtime
