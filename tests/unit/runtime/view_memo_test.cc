// A session remembers the view a view node made and makes it again, without the kernel, when
// the node's input has the same geometry (NodeExec::memoised_view). These calls change the
// input's geometry between calls — contiguous, transposed (a reshape that must copy), at
// another offset — and check that every call gets PyTorch's values and aliasing, not the
// previous call's view.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "ir/parser.h"
#include "runtime/executor.h"

namespace splice::runtime {
namespace {

constexpr std::string_view kProgram = R"(signature {
  input %x: user_input
  output 0: user_output
  output 1: user_output
}
graph(%x: f32[2, 3]) {
  %r: f32[6] = aten.reshape.default(%x, [6])
  %u: f32[1, 6] = aten.unsqueeze.default(%r, 0)
  %s: f32[3] = aten.select.int(%x, 0, 1)
  return (%u, %s)
}
)";

// A storage of n floats 0, 1, 2, ...
Tensor counting(int64_t n) {
  Tensor t = Tensor::empty(DType::kFloat32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

std::vector<float> values(const Tensor& t) {
  Tensor c = t.contiguous_copy().value();
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

TEST(ViewMemo, EachCallViewsItsOwnInputGeometry) {
  auto program = ir::parse_program(kProgram);
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto model = prepare(std::move(*program), PrepareOptions{});
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto state = open_session_state(*model);
  ASSERT_TRUE(state.ok()) << state.error().message();

  const Tensor storage = counting(12);
  struct Geometry {
    const char* what;
    Shape strides;
    int64_t offset;
    std::vector<float> flat;  // x's values in row-major order
  };
  const std::vector<Geometry> calls = {
      {"contiguous", {3, 1}, 0, {0, 1, 2, 3, 4, 5}},
      {"contiguous again", {3, 1}, 0, {0, 1, 2, 3, 4, 5}},
      {"transposed", {1, 2}, 0, {0, 2, 4, 1, 3, 5}},
      {"contiguous at offset 6", {3, 1}, 6, {6, 7, 8, 9, 10, 11}},
      {"transposed at offset 5", {1, 2}, 5, {5, 7, 9, 6, 8, 10}},
      {"contiguous at offset 6 again", {3, 1}, 6, {6, 7, 8, 9, 10, 11}},
  };
  for (const Geometry& call : calls) {
    SCOPED_TRACE(call.what);
    const Tensor x = storage.view_as({2, 3}, call.strides, call.offset);
    ASSERT_EQ(values(x), call.flat);
    TensorMap inputs;
    inputs.emplace("x", x);
    auto out = execute(*model, inputs, *state);
    ASSERT_TRUE(out.ok()) << out.error().message();
    ASSERT_TRUE(out->user_outputs[0].has_value() && out->user_outputs[1].has_value());
    const Tensor& u = *out->user_outputs[0];
    const Tensor& s = *out->user_outputs[1];
    EXPECT_EQ(u.sizes(), (Shape{1, 6}));
    EXPECT_EQ(values(u), call.flat);
    EXPECT_EQ(values(s), std::vector<float>(call.flat.begin() + 3, call.flat.end()));
  }
}

}  // namespace
}  // namespace splice::runtime
