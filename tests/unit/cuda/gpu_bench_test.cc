// `splice bench --device cuda` on a GPU (suite GpuBench, ctest label gpu; skipped without a
// device): for programs without library calls (pointwise ops, casts and reductions: no matmul,
// attention or convolution, whose libraries may launch any number of kernels) the kernels CUPTI
// counts per call equal the launches the plan says (`splice inspect --plan --json --device
// cuda`: totals.kernels); each call also copies every input in and every output out; calls are
// timed with CUDA events. Session::measure gives the same count through the API.
//
// The CLI is the bundle's on the GPU host: SPLICE_TEST_SPLICE_BINARY and SPLICE_TEST_SOURCE_DIR
// (set by scripts/gpu_run.sh) override the build's binary and source tree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/cuda/device_info.h"
#include "splice/splice.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::cuda {
namespace {

using nlohmann::json;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

const std::string kSplice = env_or("SPLICE_TEST_SPLICE_BINARY", SPLICE_BINARY_DIR "/bin/splice");
const std::string kCases = env_or("SPLICE_TEST_SOURCE_DIR", SPLICE_SOURCE_DIR) + "/tests/cases";

// Targets that call a library or a kernel family whose launch count is not one per node.
const std::vector<std::string> kLibraryTargets = {"aten.mm",
                                                  "aten.bmm",
                                                  "aten.addmm",
                                                  "aten.baddbmm",
                                                  "aten.matmul",
                                                  "aten.linear",
                                                  "aten.convolution",
                                                  "aten._scaled_dot_product",
                                                  "aten.scaled_dot_product",
                                                  "aten._grouped_mm"};

// (case, user inputs, user outputs): the count of each bounds the memcpys of a call from below.
struct BenchCase {
  std::string name;
  int inputs;
  int outputs;
};
// x2_rms_norm: pow, mean.dim, add, rsqrt, mul and casts (26 launches); sum: six reductions over
// every dim form and dtype (small enough that no reduction splits into a second kernel).
const std::vector<BenchCase> kCasesWithoutLibraryCalls = {{"x2_rms_norm.default", 4, 4},
                                                          {"sum.default", 3, 6}};

test::Outcome splice(const std::vector<std::string>& args) {
  return test::run_program(kSplice, args, std::chrono::seconds(90));
}

class GpuBench : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
  }
};

// The plan's kernel launches per call for the cuda target, after checking that the program
// has no library call.
int64_t plan_kernels(const std::string& model) {
  test::Outcome ir = splice({"inspect", "--no-cache", model});
  EXPECT_EQ(ir.exit_code, 0) << test::describe(ir);
  for (const std::string& t : kLibraryTargets)
    EXPECT_EQ(ir.out.find(t), std::string::npos) << model << " calls " << t;
  test::Outcome o =
      splice({"inspect", "--plan", "--json", "--device", "cuda", "--no-cache", model});
  EXPECT_EQ(o.exit_code, 0) << test::describe(o);
  const json j = json::parse(o.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("totals")) {
    ADD_FAILURE() << "no plan totals: " << o.out.substr(0, 500);
    return -1;
  }
  EXPECT_EQ(j["backend"], "cuda");
  return j["totals"]["kernels"].get<int64_t>();
}

TEST_F(GpuBench, KernelsPerCallAreThePlansForProgramsWithoutLibraryCalls) {
  for (const BenchCase& c : kCasesWithoutLibraryCalls) {
    SCOPED_TRACE(c.name);
    const std::string dir = kCases + "/" + c.name;
    const int64_t want = plan_kernels(dir + "/model.pt2");
    ASSERT_GT(want, 0);
    test::Outcome o =
        splice({"bench", dir + "/model.pt2", "--inputs", dir + "/call0.inputs.safetensors",
                "--device", "cuda", "--warmup", "3", "--iters", "20", "--json", "--no-cache"});
    ASSERT_EQ(o.exit_code, 0) << test::describe(o);
    const json j = json::parse(o.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << o.out;
    EXPECT_EQ(j["device"], "cuda");
    EXPECT_EQ(j["clock"], "cuda_events");
    EXPECT_GT(j["min_ms"].get<double>(), 0.0);
    EXPECT_LE(j["median_ms"].get<double>(), j["p90_ms"].get<double>());
    ASSERT_FALSE(j["kernels_per_call"].is_null())
        << "nothing counted: " << j.value("cupti_note", std::string("(no note)"));
    EXPECT_FALSE(j.contains("cupti_note")) << o.out;
    EXPECT_EQ(j["kernels_per_call"].get<double>(), static_cast<double>(want)) << o.out;
    // Every input is copied in and every output out (the error word's reads come on top).
    EXPECT_GE(j["memcpys_per_call"].get<double>(), c.inputs + c.outputs) << o.out;
    EXPECT_GE(j["memsets_per_call"].get<double>(), 0.0) << o.out;

    test::Outcome text =
        splice({"bench", dir + "/model.pt2", "--inputs", dir + "/call0.inputs.safetensors",
                "--device", "cuda", "--warmup", "1", "--iters", "3", "--no-cache"});
    ASSERT_EQ(text.exit_code, 0) << test::describe(text);
    EXPECT_NE(text.out.find("timed with CUDA events"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(fmt::format("per call: {} kernels,", want)), std::string::npos)
        << text.out;
  }
}

// The same count through the API, as the total over the timed calls.
TEST_F(GpuBench, MeasureCountsThroughTheApi) {
  const BenchCase& c = kCasesWithoutLibraryCalls.front();
  const std::string dir = kCases + "/" + c.name;
  const int64_t want = plan_kernels(dir + "/model.pt2");
  LoadOptions options;
  options.device = "cuda";
  auto model = Model::load(dir + "/model.pt2", options);
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto session = model->open_session();
  ASSERT_TRUE(session.ok()) << session.error().message();
  auto inputs = test::read_tensors(dir + "/call0.inputs.safetensors");
  std::map<std::string, TensorArg> args;
  for (auto& [name, t] : inputs) args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  MeasureOptions measure;
  measure.warmup = 2;
  measure.iters = 7;
  auto times = session->measure(args, measure);
  ASSERT_TRUE(times.ok()) << times.error().message();
  EXPECT_EQ(times->clock, "cuda_events");
  ASSERT_EQ(times->ms.size(), 7u);
  for (double ms : times->ms) EXPECT_GT(ms, 0.0);
  ASSERT_TRUE(times->counted) << times->count_note;
  EXPECT_EQ(times->kernels, 7 * want);
  EXPECT_GE(times->memcpys, 7 * (c.inputs + c.outputs));
}

// `bench --profile --json` on the GPU: one row per kernel (name, grid, GPU time from CUPTI's
// records) mapped to the plan step that launched it; for a program without library calls the
// rows' calls add up to the plan's kernels, every row has a step of the plan, and the kernels'
// GPU time fits in the profiled call's time (one stream: they run one after another).
TEST_F(GpuBench, ProfileRowsPerKernelMappedToSteps) {
  const BenchCase& c = kCasesWithoutLibraryCalls.front();
  const std::string dir = kCases + "/" + c.name;
  const int64_t want = plan_kernels(dir + "/model.pt2");
  test::Outcome o = splice({"bench", dir + "/model.pt2", "--inputs",
                            dir + "/call0.inputs.safetensors", "--device", "cuda", "--warmup", "3",
                            "--iters", "5", "--json", "--profile", "--no-cache"});
  ASSERT_EQ(o.exit_code, 0) << test::describe(o);
  const json j = json::parse(o.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << o.out;
  EXPECT_EQ(j["profile_source"], "cupti");
  const json& rows = j["profile"];
  ASSERT_TRUE(rows.is_array()) << o.out;
  int64_t calls = 0;
  double sum = 0, last = 1e300;
  for (const json& r : rows) {
    ASSERT_TRUE(r["kernel"].is_string()) << r.dump();
    ASSERT_TRUE(r["grid"].is_array()) << r.dump();
    EXPECT_EQ(r["grid"].size(), 3u) << r.dump();
    EXPECT_GE(r["step"].get<int64_t>(), 0) << "a kernel outside every step: " << r.dump();
    EXPECT_FALSE(r["op"].get<std::string>().empty()) << r.dump();
    const double ms = r["ms"].get<double>();
    EXPECT_GT(ms, 0.0) << r.dump();
    EXPECT_LE(ms, last) << "not sorted by ms";
    last = ms;
    sum += ms;
    calls += r["calls"].get<int64_t>();
  }
  EXPECT_EQ(calls, want) << o.out;
  EXPECT_LE(sum, j["profile_call_ms"].get<double>()) << o.out;

  test::Outcome text = splice({"bench", dir + "/model.pt2", "--inputs",
                               dir + "/call0.inputs.safetensors", "--device", "cuda", "--warmup",
                               "1", "--iters", "1", "--profile", "--top", "3", "--no-cache"});
  ASSERT_EQ(text.exit_code, 0) << test::describe(text);
  EXPECT_NE(text.out.find("GPU time per kernel, CUPTI"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace splice::cuda
