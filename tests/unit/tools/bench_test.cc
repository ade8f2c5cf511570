// `splice bench`: the timing summary (text and JSON) of real cases — on the CPU timed with the
// host clock, the launch counts null with the reason —, the first call's outputs (written with
// --outputs) equal to PyTorch's recorded ones from the initial state and from --state-in, every
// timed call starting from the same state, and exit code 2 with a message for bad input, bad
// options and `--device cuda` where there is no GPU. (On a GPU, tests/unit/cuda/
// gpu_bench_test.cc checks the counts.)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

using nlohmann::json;

// A KV cache program: each call writes the cache at a position and reads the state it had.
const std::string kCase = kCasesDir + "/kv_cache_reads_old_state.default";

std::string file(const std::string& name) { return kCase + "/" + name; }

TEST(SpliceBench, PrintsTheTimesAsJson) {
  Outcome o =
      run_splice({"bench", file("model.pt2"), "--inputs", file("call0.inputs.safetensors"),
                  "--warmup", "2", "--iters", "7", "--threads", "1", "--json", "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  const json j = json::parse(o.out);
  EXPECT_EQ(j["iters"], 7);
  EXPECT_EQ(j["warmup"], 2);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_GT(j["min_ms"].get<double>(), 0.0);
  EXPECT_LE(j["min_ms"].get<double>(), j["median_ms"].get<double>());
  EXPECT_LE(j["median_ms"].get<double>(), j["p90_ms"].get<double>());
  EXPECT_LE(j["min_ms"].get<double>(), j["mean_ms"].get<double>());
  EXPECT_EQ(j["clock"], "host");
  // The CPU backend launches nothing to count: the fields are there, null, with the reason.
  EXPECT_TRUE(j["kernels_per_call"].is_null()) << o.out;
  EXPECT_TRUE(j["memcpys_per_call"].is_null()) << o.out;
  EXPECT_TRUE(j["memsets_per_call"].is_null()) << o.out;
  EXPECT_EQ(j["cupti_note"], "the cpu backend launches no device work to count");
}

TEST(SpliceBench, NoWarmupIsAllowed) {
  Outcome o = run_splice({"bench", file("model.pt2"), "--inputs", file("call0.inputs.safetensors"),
                          "--warmup", "0", "--iters", "1", "--json", "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  const json j = json::parse(o.out);
  EXPECT_EQ(j["warmup"], 0);
  EXPECT_EQ(j["iters"], 1);
  EXPECT_EQ(j["min_ms"], j["p90_ms"]);  // one call: every statistic is its time
}

TEST(SpliceBench, PrintsATextSummary) {
  Outcome o = run_splice({"bench", file("model.pt2"), "--inputs", file("call0.inputs.safetensors"),
                          "--iters", "3", "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_NE(o.out.find("3 calls after 10 warm-up"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("median"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("p90"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("timed with the host clock"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("kernels: n/a (the cpu backend launches no device work to count)"),
            std::string::npos)
      << o.out;
}

// The first call starts from the program's initial buffers, as PyTorch's call 0 did; with
// --state-in call0's state, from where PyTorch's call 1 started. Every later (timed) call starts
// there again, so the warm-up calls do not move the cache.
TEST(SpliceBench, FirstCallOutputsArePyTorchs) {
  TempDir tmp;
  Outcome o = run_splice({"bench", file("model.pt2"), "--inputs", file("call0.inputs.safetensors"),
                          "--iters", "2", "--outputs", tmp.file("out0.safetensors"), "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  auto out0 = read_tensors(tmp.file("out0.safetensors"));
  auto want0 = read_tensors(file("call0.outputs.safetensors"));
  for (auto it = want0.begin(); it != want0.end();)
    it = it->first.rfind("output.", 0) == 0 ? std::next(it) : want0.erase(it);
  expect_same_tensors(out0, want0);

  o = run_splice({"bench", file("model.pt2"), "--inputs", file("call1.inputs.safetensors"),
                  "--state-in", file("call0.state.safetensors"), "--iters", "2", "--outputs",
                  tmp.file("out1.safetensors"), "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  auto want1 = read_tensors(file("call1.outputs.safetensors"));
  for (auto it = want1.begin(); it != want1.end();)
    it = it->first.rfind("output.", 0) == 0 ? std::next(it) : want1.erase(it);
  expect_same_tensors(read_tensors(tmp.file("out1.safetensors")), want1);
}

void expect_user_error(const std::vector<std::string>& args, const std::string& substring) {
  Outcome o = run_splice(args);
  EXPECT_EQ(o.exit_code, 2) << describe(o);
  EXPECT_NE((o.err + o.out).find(substring), std::string::npos)
      << "expected '" << substring << "'\n"
      << describe(o);
}

TEST(SpliceBench, BadInputAndOptionsExitTwo) {
  expect_user_error({"bench", file("model.pt2"), "--no-cache"}, "missing input 'k'");
  expect_user_error({"bench", file("model.pt2"), "--iters", "0"}, "--iters");
  expect_user_error({"bench", file("model.pt2"), "--warmup", "-1"}, "--warmup");
  expect_user_error({"bench", file("model.pt2"), "--inputs", file("call0.inputs.safetensors"),
                     "--outputs", file("model.pt2")},
                    "--outputs");
  expect_user_error({"bench", kCase + "/no-such.pt2"}, "no-such.pt2");
  expect_user_error({"bench", file("model.pt2"), "--device", "tpu", "--no-cache"},
                    "this splice has no 'tpu' backend");
}

// `--device cuda` where it cannot run: exit 2, the reason on stderr, nothing on stdout (no
// half-written JSON for a script to parse). A build without the CUDA backend names the backends
// it has; a CUDA build on a machine without a GPU says so. With a GPU the GpuBench suite runs.
TEST(SpliceBench, DeviceCudaWithoutAGpuExitsTwoWithTheReason) {
  Outcome o = run_splice({"bench", file("model.pt2"), "--inputs", file("call0.inputs.safetensors"),
                          "--device", "cuda", "--iters", "2", "--json", "--no-cache"});
  if (o.exit_code == 0) GTEST_SKIP() << "this machine runs --device cuda (GpuBench covers it)";
  EXPECT_EQ(o.exit_code, 2) << describe(o);
  EXPECT_EQ(o.out, "");
  if (backend::find_backend("cuda") == nullptr) {
    EXPECT_NE(o.err.find("this splice has no 'cuda' backend (it has: cpu)"), std::string::npos)
        << o.err;
  } else {
    EXPECT_NE(o.err.find("no usable CUDA device"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("inspect --plan --device cuda"), std::string::npos) << o.err;
  }
}

}  // namespace
}  // namespace splice::test

namespace splice::test {
namespace {

// `bench --profile` on the CPU: with --json the bench fields plus "profile", one row per plan
// step {step, op, kernel: null, grid: null, calls, ms} sorted by ms, adding up to the profiled
// call's time ("profile_call_ms") within 25%; without --json a table of the top --top rows.
const std::string kLlama = kCasesDir + "/llama_block_2layer.default";

TEST(SpliceBench, ProfileAsJson) {
  Outcome o = run_splice({"bench", kLlama + "/model.pt2", "--inputs",
                          kLlama + "/call0.inputs.safetensors", "--warmup", "2", "--iters", "3",
                          "--threads", "1", "--json", "--profile", "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  const json j = json::parse(o.out);
  EXPECT_EQ(j["iters"], 3);  // the bench fields stay
  EXPECT_EQ(j["profile_source"], "host");
  const json& rows = j["profile"];
  ASSERT_TRUE(rows.is_array());
  ASSERT_GT(rows.size(), 3u);
  double sum = 0, last = 1e300;
  for (const json& r : rows) {
    ASSERT_EQ(r.size(), 6u) << r.dump();
    EXPECT_TRUE(r["step"].is_number_integer()) << r.dump();
    EXPECT_TRUE(r["op"].is_string()) << r.dump();
    EXPECT_TRUE(r["kernel"].is_null()) << r.dump();
    EXPECT_TRUE(r["grid"].is_null()) << r.dump();
    EXPECT_EQ(r["calls"], 1) << r.dump();
    const double ms = r["ms"].get<double>();
    EXPECT_LE(ms, last) << "not sorted by ms";
    last = ms;
    sum += ms;
  }
  const double call = j["profile_call_ms"].get<double>();
  EXPECT_NEAR(sum, call, 0.25 * call) << o.out;
}

TEST(SpliceBench, ProfileAsATable) {
  Outcome o = run_splice({"bench", kLlama + "/model.pt2", "--inputs",
                          kLlama + "/call0.inputs.safetensors", "--warmup", "1", "--iters", "1",
                          "--threads", "1", "--profile", "--top", "5", "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  EXPECT_NE(o.out.find("profile of one call (host time per plan step)"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("top 5 of"), std::string::npos) << o.out;
}

TEST(SpliceBench, ProfileTopMustBePositive) {
  Outcome o = run_splice({"bench", kLlama + "/model.pt2", "--inputs",
                          kLlama + "/call0.inputs.safetensors", "--profile", "--top", "0"});
  EXPECT_EQ(o.exit_code, 2) << describe(o);
  EXPECT_NE(o.err.find("--top"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace splice::test
