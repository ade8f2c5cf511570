// bench_fusion: what pointwise groups (docs/planning.md, "Pointwise groups") save per call. It
// prepares one program twice on the CPU backend — planned with groups, and planned for the
// same backend with groups turned off (every op its own kernel) — checks that both give the
// same output bytes, then times calls of each, interleaved in rounds so that both see the
// same machine load, and prints one JSON line with both medians and each plan's kernels.
//
//   bench_fusion MODEL.pt2 INPUTS.safetensors THREADS SECONDS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "plan/build.h"
#include "runtime/executor.h"
#include "tensor/safetensors.h"

namespace {

using namespace splice;

int fail(const std::string& what) {
  std::fprintf(stderr, "bench_fusion: %s\n", what.c_str());
  return 2;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return fail("usage: bench_fusion MODEL.pt2 INPUTS.safetensors THREADS SECONDS");
  const int threads = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  if (threads < 1 || !(seconds > 0)) return fail("THREADS must be >= 1 and SECONDS > 0");
  auto inputs = read_safetensors(argv[2]);
  if (!inputs.ok()) return fail(inputs.error().message());
  const runtime::TensorMap in(inputs->begin(), inputs->end());

  const backend::Backend* cpu = backend::find_backend("cpu");
  backend::Target no_groups = cpu->target();
  no_groups.pointwise_classes.clear();
  detail::ModelImpl models[2];
  detail::SessionState states[2];
  for (int m = 0; m < 2; ++m) {
    auto program = compiler::load_program(argv[1]);
    if (!program.ok()) return fail("load: " + program.error().message());
    plan::Plan plan =
        plan::build_plan(*program, plan::PlanMode::kPlanned, m == 0 ? cpu->target() : no_groups);
    runtime::PrepareOptions options;
    options.threads = threads;
    auto model = runtime::prepare(std::move(*program), options, std::move(plan));
    if (!model.ok()) return fail("prepare: " + model.error().message());
    models[m] = std::move(*model);
    auto state = runtime::open_session_state(models[m]);
    if (!state.ok()) return fail("session: " + state.error().message());
    states[m] = std::move(*state);
  }
  // Both plans must compute the same bytes before any time counts.
  std::vector<Tensor> first[2];
  for (int m = 0; m < 2; ++m) {
    auto r = runtime::execute(models[m], in, states[m]);
    if (!r.ok()) return fail("run: " + r.error().message());
    for (const auto& t : r->user_outputs)
      if (t) first[m].push_back(t->contiguous_copy().value());
  }
  if (first[0].size() != first[1].size()) return fail("the two plans give different outputs");
  for (size_t i = 0; i < first[0].size(); ++i)
    if (first[0][i].nbytes() != first[1][i].nbytes() ||
        std::memcmp(first[0][i].raw_data(), first[1][i].raw_data(), first[0][i].nbytes()) != 0)
      return fail("output " + std::to_string(i) + " differs between the two plans");

  using Clock = std::chrono::steady_clock;
  std::vector<double> ms[2];
  const auto start = Clock::now();
  while (ms[0].size() < 20 ||
         std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    for (int m = 0; m < 2; ++m) {
      for (int i = 0; i < 10; ++i) {
        const auto t0 = Clock::now();
        if (!runtime::execute(models[m], in, states[m]).ok()) return fail("run failed");
        ms[m].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    }
  }
  std::printf(
      "{\"groups_median_ms\": %.6f, \"no_groups_median_ms\": %.6f, \"groups_kernels\": %lld, "
      "\"no_groups_kernels\": %lld, \"groups\": %zu, \"calls\": %zu}\n",
      median(ms[0]), median(ms[1]), static_cast<long long>(models[0].plan.totals.kernels),
      static_cast<long long>(models[1].plan.totals.kernels), models[0].plan.groups.size(),
      ms[0].size());
  return 0;
}
