// `splice bench MODEL --inputs IN [--state-in S] [--outputs OUT] [--warmup N] [--iters N]
// [--json]`: loads the program once, opens one session and times Session::run on the same
// inputs, trtexec-style, printing the median, p90, min and mean latency per call. --outputs
// writes the first call's outputs (as `splice run` does) so a benchmark script can check them
// against PyTorch before trusting a time. Every call starts from the state --state-in gives (or
// the program's initial buffers; restored untimed), so a program that mutates its state times the
// same call each time. A call is timed from the host: it includes copying the inputs in and the
// outputs out, which is all of a call on the CPU and, on the GPU, the transfers around the kernels.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "splice/splice.h"
#include "support/file_identity.h"
#include "support/file_writer.h"
#include "tensor/safetensors.h"
#include "tools/splice/commands.h"

namespace splice::tools {

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms = 0, p90_ms = 0, min_ms = 0, mean_ms = 0;
};

// Nearest-rank percentiles over the sorted times.
Stats stats_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const auto rank = [&](double q) {
    const size_t i = static_cast<size_t>(q * static_cast<double>(ms.size()) + 0.5);
    return ms[std::min(ms.size() - 1, i == 0 ? 0 : i - 1)];
  };
  Stats s;
  s.median_ms = rank(0.5);
  s.p90_ms = rank(0.9);
  s.min_ms = ms.front();
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  return s;
}

Result<std::map<std::string, Tensor>> outputs_of(const RunResult& result) {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    if (!result.present[i]) continue;
    const HostTensor& h = result.outputs[i];
    SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(h.dtype, h.shape));
    if (!h.bytes.empty()) std::memcpy(t.raw_data(), h.bytes.data(), h.bytes.size());
    out.emplace(fmt::format("output.{}", i), std::move(t));
  }
  return out;
}

}  // namespace

Result<void> run_bench(const BenchOptions& options) {
  std::vector<NamedPath> reads = {{"the model", options.model}}, writes;
  if (!options.inputs.empty()) reads.push_back({"--inputs", options.inputs});
  if (!options.state_in.empty()) reads.push_back({"--state-in", options.state_in});
  if (!options.outputs.empty()) writes.push_back({"--outputs", options.outputs});
  SPLICE_TRY(check_distinct_files(reads, writes));

  SPLICE_ASSIGN_OR_RETURN(LoadOptions load_options,
                          to_load_options(options.planning, options.threads));
  SPLICE_ASSIGN_OR_RETURN(Model model, Model::load(options.model, load_options));
  SPLICE_ASSIGN_OR_RETURN(Session session, model.open_session());
  std::map<std::string, Tensor> inputs, state;
  if (!options.inputs.empty()) {
    SPLICE_ASSIGN_OR_RETURN(inputs, read_safetensors(options.inputs));
  }
  if (!options.state_in.empty()) {
    SPLICE_ASSIGN_OR_RETURN(state, read_safetensors(options.state_in));
  }
  // The safetensors reader gives contiguous tensors in their own storage, as TensorArg needs.
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : inputs) args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  // Before every call, untimed: the starting state (--state-in's values, or the program's
  // initial buffers), so a program that mutates its state times the same call every time.
  const bool has_state = !model.state_names().empty();
  const auto restore_state = [&]() -> Result<void> {
    if (!has_state) return ok_result();
    if (state.empty()) return session.reset_state();
    for (auto& [name, t] : state) {
      auto r = session.set_state(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
      if (!r.ok()) return r.error().with_context(fmt::format("--state-in {}", options.state_in));
    }
    return ok_result();
  };

  SPLICE_TRY(restore_state());
  SPLICE_ASSIGN_OR_RETURN(RunResult first, session.run(args));
  if (!options.outputs.empty()) {
    SPLICE_ASSIGN_OR_RETURN(auto out, outputs_of(first));
    std::vector<PendingFile> files;
    SPLICE_ASSIGN_OR_RETURN(PendingFile f, prepare_safetensors_file(options.outputs, out));
    files.push_back(std::move(f));
    SPLICE_TRY(commit_files(files));
  }
  for (int i = 0; i < options.warmup; ++i) {
    SPLICE_TRY(restore_state());
    SPLICE_TRY(session.run(args));
  }
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(options.iters));
  for (int i = 0; i < options.iters; ++i) {
    SPLICE_TRY(restore_state());
    const auto t0 = Clock::now();
    SPLICE_TRY(session.run(args));
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  const Stats s = stats_of(ms);
  if (options.json) {
    std::printf(
        "{\"model\": \"%s\", \"device\": \"%s\", \"threads\": %d, \"warmup\": %d, "
        "\"iters\": %d, \"median_ms\": %.6f, \"p90_ms\": %.6f, \"min_ms\": %.6f, "
        "\"mean_ms\": %.6f}\n",
        options.model.c_str(), model.device().c_str(), model.threads(), options.warmup,
        options.iters, s.median_ms, s.p90_ms, s.min_ms, s.mean_ms);
  } else {
    std::printf("%s on %s (%d threads): %d calls after %d warm-up\n", options.model.c_str(),
                model.device().c_str(), model.threads(), options.iters, options.warmup);
    std::printf("  median %.4f ms   p90 %.4f ms   min %.4f ms   mean %.4f ms\n", s.median_ms,
                s.p90_ms, s.min_ms, s.mean_ms);
  }
  return ok_result();
}

}  // namespace splice::tools
