// Each model runs its kernels on its own thread pool of the size it was loaded with: two
// models loaded with 1 and 2 threads, running at the same time in one process, each use
// their own count (issue 10: the thread count is per model, not process-wide).
#include <gtest/gtest.h>

#include <string_view>
#include <thread>

#include "ir/parser.h"
#include "runtime/executor.h"

namespace splice::runtime {
namespace {

// One pointwise op over 2^18 elements: big enough that parallel_for splits it.
constexpr std::string_view kBigPointwise = R"(signature {
  input %x: user_input
  output 0: user_output
}
graph(%x: f32[262144]) {
  %y: f32[262144] = aten.mul.Tensor(%x, %x)
  return (%y)
}
)";

detail::ModelImpl prepared(int threads) {
  auto program = ir::parse_program(kBigPointwise);
  EXPECT_TRUE(program.ok()) << program.error().message();
  PrepareOptions options;
  options.threads = threads;
  auto model = prepare(std::move(*program), options);
  EXPECT_TRUE(model.ok()) << model.error().message();
  return std::move(*model);
}

// Runs `calls` calls of `model` in a session of its own; returns false on any failure.
bool run_calls(const detail::ModelImpl& model, int calls) {
  auto state = open_session_state(model);
  if (!state.ok()) return false;
  Tensor x = Tensor::empty(DType::kFloat32, {262144}).value();
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 101);
  TensorMap inputs;
  inputs.emplace("x", x);
  for (int i = 0; i < calls; ++i) {
    auto out = execute(model, inputs, *state);
    if (!out.ok() || out->user_outputs[0]->data<float>()[100] != 100.0f * 100.0f) return false;
  }
  return true;
}

TEST(ModelThreads, TwoModelsAtOnceEachUseTheirOwnThreadCount) {
  const detail::ModelImpl one = prepared(1);
  const detail::ModelImpl two = prepared(2);
  EXPECT_EQ(one.backend_model->threads(), 1);
  EXPECT_EQ(two.backend_model->threads(), 2);
  bool ok_one = false, ok_two = false;
  std::thread a([&] { ok_one = run_calls(one, 20); });
  std::thread b([&] { ok_two = run_calls(two, 20); });
  a.join();
  b.join();
  EXPECT_TRUE(ok_one);
  EXPECT_TRUE(ok_two);
  // The 1-thread model never split a loop; the 2-thread model ran loops on both its threads,
  // whatever the other model was doing (its pool is its own).
  EXPECT_EQ(one.backend_model->threads_used(), 1);
  EXPECT_EQ(two.backend_model->threads_used(), 2);
}

}  // namespace
}  // namespace splice::runtime
