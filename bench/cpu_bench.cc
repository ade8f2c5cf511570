// bench_cpu: the CPU benchmark of issue 6. Times Session::run on each workload of
// bench/workloads/generated (bench/workloads/generate.py writes them there, seeded; run_cpu.sh
// generates them when missing; git ignores them) under the planned engine and under the naive plan
// (every write copies its base, then writes; no buffer reuse), as benchmarks named
// "<workload>/planned" and "<workload>/naive". bench/run_cpu.sh runs it next to PyTorch eager.
//
// Each model is loaded and checked against PyTorch's recorded outputs once, before any timing,
// so a wrong or failing engine is reported as that benchmark's error instead of a fast number.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "splice/splice.h"
#include "tensor/safetensors.h"

namespace {

const char* const kWorkloads[] = {"rotary", "block2"};
// Two threads: the benchmark machine's core count, and what torch_eager.py gives PyTorch.
constexpr int kThreads = 2;

// One loaded model with its session and inputs, alive for the whole process: Google Benchmark
// calls a benchmark function several times while it picks the iteration count, and loading
// (import, passes, planning) must not be part of what is timed.
struct Fixture {
  std::unique_ptr<splice::Session> session;
  std::map<std::string, splice::Tensor> input_tensors;  // own the bytes `inputs` points at
  std::map<std::string, splice::TensorArg> inputs;
  std::string error;  // non-empty: the workload cannot be timed, and why
};

// Largest |splice - PyTorch| over output.0, scaled by the reference's largest magnitude so
// one tolerance fits both workloads (rotary's values are O(1), block2's residual stream
// grows). Returns a negative number when shapes or dtypes differ.
double relative_max_diff(const splice::HostTensor& got, const splice::Tensor& want) {
  if (got.dtype != splice::DType::kFloat32 || want.dtype() != splice::DType::kFloat32 ||
      got.shape != want.sizes())
    return -1;
  const float* a = got.data<float>();
  const float* b = want.data<float>();
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return diff / scale;
}

Fixture failure(std::string why) {
  Fixture f;
  f.error = std::move(why);
  return f;
}

Fixture load_fixture(const std::string& dir, splice::PlanMode mode) {
  Fixture f;
  if (!std::filesystem::exists(dir + "/model.pt2"))
    return failure(dir +
                   "/model.pt2 is missing: the workloads are generated, not committed; "
                   "run bench/run_cpu.sh or python3 bench/workloads/generate.py");
  splice::LoadOptions options;
  options.threads = kThreads;
  options.plan_mode = mode;  // no cache_dir: plan in memory, so a stale engine is never timed
  auto model = splice::Model::load(dir + "/model.pt2", options);
  if (!model.ok()) return failure("load: " + model.error().message());
  auto inputs = splice::read_safetensors(dir + "/inputs.safetensors");
  auto expected = splice::read_safetensors(dir + "/expected_outputs.safetensors");
  if (!inputs.ok()) return failure(inputs.error().message());
  if (!expected.ok()) return failure(expected.error().message());
  f.input_tensors = std::move(*inputs);
  // The safetensors reader gives contiguous tensors in their own storage, as TensorArg needs.
  for (auto& [name, t] : f.input_tensors)
    f.inputs.emplace(name, splice::TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  f.session = std::make_unique<splice::Session>(model->open_session().value());
  auto result = f.session->run(f.inputs);
  if (!result.ok()) return failure("run: " + result.error().message());
  const double diff = relative_max_diff(result->outputs.at(0), expected->at("output.0"));
  // 1e-4 relative: f32 with a different summation order (OpenBLAS vs MKL) stays far below it.
  if (diff < 0 || diff > 1e-4) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "output.0 differs from PyTorch (relative max diff %.3g)", diff);
    return failure(msg);
  }
  return f;
}

void run_workload(benchmark::State& state, Fixture* f) {
  if (!f->error.empty()) {
    state.SkipWithError(f->error.c_str());
    return;
  }
  for (auto _ : state) {
    auto result = f->session->run(f->inputs);
    if (!result.ok()) {
      state.SkipWithError(result.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // Kept alive until main returns: the registered lambdas point into it.
  std::vector<std::unique_ptr<Fixture>> fixtures;
  for (const char* workload : kWorkloads) {
    const std::string dir = std::string(SPLICE_BENCH_DIR) + "/" + workload;
    for (auto [mode, label] : {std::pair{splice::PlanMode::kPlanned, "planned"},
                               std::pair{splice::PlanMode::kNaive, "naive"}}) {
      fixtures.push_back(std::make_unique<Fixture>(load_fixture(dir, mode)));
      Fixture* f = fixtures.back().get();
      benchmark::RegisterBenchmark((std::string(workload) + "/" + label).c_str(),
                                   [f](benchmark::State& s) { run_workload(s, f); })
          ->Unit(benchmark::kMillisecond)
          // Wall time: kernels run on kThreads threads, so CPU time would over-count.
          ->UseRealTime()
          // 2 s per repetition: each repetition averages hundreds of calls.
          ->MinTime(2.0)
          // The median of 5 repetitions is the reported number: on a shared 2-core machine one
          // repetition can be slowed by a neighbour, and torch_eager.py also reports a median.
          ->Repetitions(5)
          ->ReportAggregatesOnly(true);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
