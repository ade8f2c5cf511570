// The executor resolves each step's arguments once per model and patches a session's copy of
// them per call (runtime/node_exec.h). These calls check what that must not change: every call
// sees its own inputs and symbols (a symbolic int list, a tensor list), and when a call
// returns the session holds none of the caller's tensors.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "ir/parser.h"
#include "runtime/executor.h"

namespace splice::runtime {
namespace {

// view(cat([x, x * x]), [s0, 4]): a tensor list and an int list with a symbol in it.
constexpr std::string_view kProgram = R"(symbols {
  s0: [2, 64]
}
signature {
  input %x: user_input
  output 0: user_output
}
graph(%x: f32[s0, 2]) {
  %n: SymInt(s0) = aten.sym_size.int(%x, 0)
  %y: f32[s0, 2] = aten.mul.Tensor(%x, %x)
  %c: f32[2*s0, 2] = aten.cat.default([%x, %y], 0)
  %v: f32[s0, 4] = aten.view.default(%c, [%n, 4])
  return (%v)
}
)";

Tensor rows_of(int64_t n) {
  Tensor x = Tensor::empty(DType::kFloat32, {n, 2}).value();
  for (int64_t i = 0; i < 2 * n; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  return x;
}

std::vector<float> values(const Tensor& t) {
  Tensor c = t.contiguous_copy().value();
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

TEST(StepArgs, EachCallSeesItsOwnInputsAndSymbolsAndKeepsNoneOfThem) {
  auto program = ir::parse_program(kProgram);
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto model = prepare(std::move(*program), PrepareOptions{});
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto state = open_session_state(*model);
  ASSERT_TRUE(state.ok()) << state.error().message();
  const std::vector<std::vector<float>> want = {
      {1, 2, 3, 4, 1, 4, 9, 16},
      {1, 2, 3, 4, 5, 6, 1, 4, 9, 16, 25, 36},
      {1, 2, 3, 4, 1, 4, 9, 16},
  };
  for (int64_t call = 0; call < 3; ++call) {
    const int64_t n = call == 1 ? 3 : 2;
    Tensor x = rows_of(n);
    {
      TensorMap inputs;
      inputs.emplace("x", x);
      auto out = execute(*model, inputs, *state);
      ASSERT_TRUE(out.ok()) << out.error().message();
      ASSERT_TRUE(out->user_outputs[0].has_value());
      EXPECT_EQ(out->user_outputs[0]->sizes(), (Shape{n, 4}));
      EXPECT_EQ(values(*out->user_outputs[0]), want[call]) << "call " << call;
    }
    // Only this test holds x's storage now: not the frame, not the session's arguments.
    EXPECT_EQ(x.storage().use_count(), 1) << "call " << call;
  }
}

}  // namespace
}  // namespace splice::runtime
