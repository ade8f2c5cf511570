// bench_step_overhead: the runtime's fixed cost per plan step (issue 17). Times one call of a
// program of many tiny steps (a chain of pointwise ops on 16 floats, so the arithmetic is a few
// nanoseconds and what is measured is the executor and the kernel entry: argument resolution,
// destination lookup, output checks, the kernel's own argument parsing and dispatch), through
// runtime::execute, the call Session::run makes. The counter "per_step" is the time of one call
// divided by its number of steps (so it also carries the call's own fixed cost spread over the
// steps: an upper bound on the per-step cost). The chain is timed twice: planned with pointwise
// groups off, so each op is its own step (the fixed cost this bench exists for), and planned as
// the CPU backend plans it, where the whole chain is one group (one loop nest: what grouping
// saves). Without the first, the planner's grouping hides the per-step cost.
//
//   build/bin/bench_step_overhead [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "backends/backend.h"
#include "ir/parser.h"
#include "plan/build.h"
#include "runtime/executor.h"

namespace splice::runtime {
namespace {

// A chain of `steps` binary ops over f32[16] (add, mul, sub in turn, each reading the previous
// result and the input), so every step is a kernel with a planned destination.
std::string chain_program(int steps) {
  std::string text =
      "signature {\n  input %x: user_input\n  output 0: user_output\n}\n"
      "graph(%x: f32[16]) {\n";
  const char* const ops[] = {"aten.add.Tensor", "aten.mul.Tensor", "aten.sub.Tensor"};
  std::string prev = "%x";
  for (int i = 0; i < steps; ++i) {
    const std::string name = "%v" + std::to_string(i);
    text += "  " + name + ": f32[16] = " + ops[i % 3] + "(" + prev + ", %x)\n";
    prev = name;
  }
  text += "  return (" + prev + ")\n}\n";
  return text;
}

void BM_StepOverhead(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const bool grouped = state.range(2) != 0;
  auto program = ir::parse_program(chain_program(steps));
  if (!program.ok()) {
    state.SkipWithError(program.error().message().c_str());
    return;
  }
  backend::Target target = backend::find_backend("cpu")->target();
  if (!grouped) target.pointwise_classes.clear();  // every op its own kernel
  plan::Plan plan = plan::build_plan(*program, plan::PlanMode::kPlanned, target);
  PrepareOptions options;
  options.threads = threads;
  auto model = prepare(std::move(*program), options, std::move(plan));
  if (!model.ok()) {
    state.SkipWithError(model.error().message().c_str());
    return;
  }
  auto session = open_session_state(*model);
  if (!session.ok()) {
    state.SkipWithError(session.error().message().c_str());
    return;
  }
  Tensor x = Tensor::empty(DType::kFloat32, {16}).value();
  for (int i = 0; i < 16; ++i) x.data<float>()[i] = 0.5f + 0.01f * static_cast<float>(i);
  TensorMap inputs;
  inputs.emplace("x", x);
  for (auto _ : state) {
    auto out = execute(*model, inputs, *session);
    if (!out.ok()) {
      state.SkipWithError(out.error().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["steps"] = steps;
  state.counters["kernels"] = static_cast<double>(model->plan.totals.kernels);
  // Seconds per step: iterations * steps per second, inverted.
  state.counters["per_step"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * steps,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Ops per call x model threads x grouped (0: one kernel per op; 1: the backend's groups).
BENCHMARK(BM_StepOverhead)
    ->ArgNames({"ops", "threads", "grouped"})
    ->Args({256, 1, 0})
    ->Args({256, 2, 0})
    ->Args({16, 1, 0})
    ->Args({256, 1, 1});

}  // namespace
}  // namespace splice::runtime

BENCHMARK_MAIN();
