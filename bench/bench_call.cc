// bench_call: times splice's public API (Model::load once, then Session::run) on one program and
// one set of inputs, for bench/compare.py, which times ONNX Runtime and PyTorch eager on the
// same inputs in the same run. It runs the call once, writes that call's user outputs to
// OUTPUTS (safetensors, "output.N") so the script can check them against PyTorch before
// trusting any time, then times calls for about SECONDS (after warm-up calls) and prints one
// JSON line: {"median_ms": ..., "mean_ms": ..., "min_ms": ..., "calls": N}.
//
//   bench_call MODEL.pt2 INPUTS.safetensors OUTPUTS.safetensors THREADS SECONDS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "splice/splice.h"
#include "tensor/safetensors.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "bench_call: %s\n", what.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6)
    return fail(
        "usage: bench_call MODEL.pt2 INPUTS.safetensors OUTPUTS.safetensors THREADS "
        "SECONDS");
  const std::string model_path = argv[1], inputs_path = argv[2], outputs_path = argv[3];
  const int threads = std::atoi(argv[4]);
  const double seconds = std::atof(argv[5]);
  if (threads < 1 || !(seconds > 0)) return fail("THREADS must be >= 1 and SECONDS > 0");

  splice::LoadOptions options;
  options.threads = threads;  // no cache_dir: plan in memory
  auto model = splice::Model::load(model_path, options);
  if (!model.ok()) return fail("load: " + model.error().message());
  auto inputs = splice::read_safetensors(inputs_path);
  if (!inputs.ok()) return fail(inputs.error().message());
  std::map<std::string, splice::TensorArg> args;
  // The safetensors reader gives contiguous tensors in their own storage, as TensorArg needs.
  for (auto& [name, t] : *inputs)
    args.emplace(name, splice::TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  auto session = model->open_session();
  if (!session.ok()) return fail("session: " + session.error().message());

  auto first = session->run(args);
  if (!first.ok()) return fail("run: " + first.error().message());
  std::map<std::string, splice::Tensor> outputs;
  for (size_t i = 0; i < first->outputs.size(); ++i) {
    if (!first->present[i]) continue;
    const splice::HostTensor& h = first->outputs[i];
    auto t = splice::Tensor::empty(h.dtype, h.shape);
    if (!t.ok()) return fail(t.error().message());
    if (!h.bytes.empty()) std::memcpy(t->raw_data(), h.bytes.data(), h.bytes.size());
    outputs.emplace("output." + std::to_string(i), std::move(*t));
  }
  auto written = splice::write_safetensors(outputs_path, outputs);
  if (!written.ok()) return fail(written.error().message());

  using Clock = std::chrono::steady_clock;
  // Warm-up: the first calls allocate the session's buffers and touch the weights.
  for (int i = 0; i < 10; ++i)
    if (!session->run(args).ok()) return fail("run failed during warm-up");
  std::vector<double> ms;
  const auto start = Clock::now();
  while (ms.size() < 20 || std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const auto t0 = Clock::now();
    auto r = session->run(args);
    const auto t1 = Clock::now();
    if (!r.ok()) return fail("run: " + r.error().message());
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  std::printf("{\"median_ms\": %.6f, \"mean_ms\": %.6f, \"min_ms\": %.6f, \"calls\": %zu}\n",
              sorted[sorted.size() / 2], mean, sorted.front(), ms.size());
  return 0;
}
