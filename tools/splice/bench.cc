// `splice bench MODEL --inputs IN [--state-in S] [--outputs OUT] [--device D] [--warmup N]
// [--iters N] [--json]`: loads the program once, opens one session and measures its calls on
// the same inputs with Session::measure, trtexec-style: the median, p90, min and mean latency
// per call and, on a GPU, the kernels, memory copies and memsets each call runs (counted with
// CUPTI; "n/a" with the reason where they cannot be). On a GPU a call is timed with CUDA events
// on the session's stream, on the CPU with the host's clock; either way the time covers
// copying the inputs in and the outputs out, which on the GPU are the transfers around the
// kernels. --outputs writes the first call's outputs (as `splice run` does) so a benchmark
// script can check them against PyTorch before trusting a time. Every call starts from the
// state --state-in gives (or the program's initial buffers; restored untimed), so a program
// that mutates its state times the same call each time. --profile then profiles one more call
// (Session::profile, like trtexec's --dumpProfile): a table of the top --top rows, or with
// --json a "profile" list of {step, op, kernel, grid, calls, ms} rows sorted by ms (on the GPU
// one per kernel from CUPTI's records, mapped to the plan step that launched it; on the CPU one
// per plan step, timed on the host), with "profile_call_ms" (that call's own time) and
// "profile_source" ("cupti" or "host").
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "splice/splice.h"
#include "support/file_identity.h"
#include "support/file_writer.h"
#include "tensor/safetensors.h"
#include "tools/splice/commands.h"

namespace splice::tools {

namespace {

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

// A count over all timed calls as a per-call figure (a fraction only if calls differed).
double per_call(int64_t total, size_t calls) {
  return static_cast<double>(total) / static_cast<double>(calls);
}

// The profile's rows as JSON (bench --json --profile).
nlohmann::ordered_json profile_json(const CallProfile& profile) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ProfileRow& r : profile.rows) {
    nlohmann::ordered_json row = {{"step", r.step}, {"op", r.op}};
    row["kernel"] = r.kernel ? nlohmann::ordered_json(*r.kernel) : nullptr;
    row["grid"] = r.grid ? nlohmann::ordered_json(*r.grid) : nullptr;
    row["calls"] = r.calls;
    row["ms"] = r.ms;
    rows.push_back(std::move(row));
  }
  return rows;
}

void print_json(const BenchOptions& options, const Model& model, const CallTimes& times,
                const Stats& s, const GraphStats& graphs, const CallProfile* profile) {
  nlohmann::ordered_json j = {{"model", options.model},
                              {"device", model.device()},
                              {"threads", model.threads()},
                              {"warmup", options.warmup},
                              {"iters", options.iters},
                              {"clock", times.clock},
                              {"cuda_graphs", !options.no_graphs},
                              {"device_io", options.device_io},
                              {"graph_replays", graphs.replayed},
                              {"graph_refusal", graphs.refusal},
                              {"median_ms", s.median_ms},
                              {"p90_ms", s.p90_ms},
                              {"min_ms", s.min_ms},
                              {"mean_ms", s.mean_ms}};
  const size_t calls = times.ms.size();
  for (const auto& [key, total] :
       {std::pair<const char*, int64_t>{"kernels_per_call", times.kernels},
        {"memcpys_per_call", times.memcpys},
        {"memsets_per_call", times.memsets}}) {
    if (times.counted)
      j[key] = per_call(total, calls);
    else
      j[key] = nullptr;
  }
  if (!times.counted) j["cupti_note"] = times.count_note;
  if (profile != nullptr) {
    j["profile_call_ms"] = profile->call_ms;
    j["profile_source"] = profile->source;
    j["profile"] = profile_json(*profile);
  }
  const std::string text = j.dump() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
}

// The profile's top rows as a table, with each row's share of the profiled call.
void print_profile(const CallProfile& profile, int top) {
  double total = 0;
  for (const ProfileRow& r : profile.rows) total += r.ms;
  std::printf("profile of one call (%s): %.4f ms, rows sum to %.4f ms; top %d of %zu rows\n",
              profile.source == "cupti" ? "GPU time per kernel, CUPTI" : "host time per plan step",
              profile.call_ms, total, std::min<int>(top, static_cast<int>(profile.rows.size())),
              profile.rows.size());
  std::printf("  %10s %6s %6s %5s  %-28s %s\n", "ms", "%", "calls", "step", "op", "kernel [grid]");
  int shown = 0;
  for (const ProfileRow& r : profile.rows) {
    if (shown++ >= top) break;
    std::string kernel = r.kernel.value_or("");
    if (r.grid) kernel += fmt::format(" [{}, {}, {}]", (*r.grid)[0], (*r.grid)[1], (*r.grid)[2]);
    const std::string line =
        fmt::format("  {:10.4f} {:6.1f} {:6} {:5}  {:<28} {}\n", r.ms,
                    total > 0 ? 100.0 * r.ms / total : 0.0, r.calls, r.step, r.op, kernel);
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
}

void print_text(const BenchOptions& options, const Model& model, const CallTimes& times,
                const Stats& s) {
  std::printf("%s on %s (%d threads): %d calls after %d warm-up, timed with %s\n",
              options.model.c_str(), model.device().c_str(), model.threads(), options.iters,
              options.warmup, times.clock == "cuda_events" ? "CUDA events" : "the host clock");
  std::printf("  median %.4f ms   p90 %.4f ms   min %.4f ms   mean %.4f ms\n", s.median_ms,
              s.p90_ms, s.min_ms, s.mean_ms);
  if (!times.counted) {
    std::printf("  kernels: n/a (%s)\n", times.count_note.c_str());
    return;
  }
  const size_t calls = times.ms.size();
  const std::string line = fmt::format(
      "  per call: {} kernels, {} memcpys, {} memsets\n", per_call(times.kernels, calls),
      per_call(times.memcpys, calls), per_call(times.memsets, calls));
  std::fwrite(line.data(), 1, line.size(), stdout);
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
  load_options.cuda_graphs = !options.no_graphs;
  SPLICE_ASSIGN_OR_RETURN(Model model, Model::load(options.model, load_options));
  for (const std::string& w : model.warnings())
    std::fprintf(stderr, "splice: warning: %s\n", w.c_str());
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
  MeasureOptions measure;
  measure.warmup = options.warmup;
  measure.iters = options.iters;
  measure.device_io = options.device_io;
  for (auto& [name, t] : state)
    measure.start_state.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});

  // The first call, untimed, from the same starting state as every measured one: a bad
  // --state-in is reported naming the file, and --outputs gets this call's outputs.
  if (!model.state_names().empty()) {
    if (state.empty()) SPLICE_TRY(session.reset_state());
    for (const auto& [name, value] : measure.start_state) {
      auto r = session.set_state(name, value);
      if (!r.ok()) return r.error().with_context(fmt::format("--state-in {}", options.state_in));
    }
  }
  SPLICE_ASSIGN_OR_RETURN(RunResult first, session.run(args));
  if (!options.outputs.empty()) {
    SPLICE_ASSIGN_OR_RETURN(auto out, outputs_of(first));
    std::vector<PendingFile> files;
    SPLICE_ASSIGN_OR_RETURN(PendingFile f, prepare_safetensors_file(options.outputs, out));
    files.push_back(std::move(f));
    SPLICE_TRY(commit_files(files));
  }
  SPLICE_ASSIGN_OR_RETURN(CallTimes times, session.measure(args, measure));
  const Stats s = stats_of(times.ms);
  std::optional<CallProfile> profile;
  if (options.profile) {
    // Warm already: the measured calls compiled and cached everything.
    MeasureOptions once = measure;
    once.warmup = 0;
    SPLICE_ASSIGN_OR_RETURN(profile, session.profile(args, once));
  }
  if (options.json) {
    print_json(options, model, times, s, session.graph_stats(), profile ? &*profile : nullptr);
  } else {
    print_text(options, model, times, s);
    if (profile) print_profile(*profile, options.top);
  }
  return ok_result();
}

}  // namespace splice::tools
