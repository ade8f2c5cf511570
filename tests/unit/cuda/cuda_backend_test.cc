// The CUDA backend behind the backend interface, on a machine without a GPU: it registers as
// "cuda" with a kernel for every op that reaches a backend (the CPU backend's coverage, the
// decomposed composites excluded), the write kernels honour in-place and pointwise kernels
// store into destinations (what planning reads), plans for the cuda target are made without a
// device (`splice inspect --plan --device cuda`: slice writes stay slice writes, the KV-cache
// update moves only the update, every matrix product has a kernel and a reason), and
// `splice run --device cuda` without a GPU fails with a clear message and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/backend.h"
#include "backends/cuda/device_info.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::cuda {
namespace {

using nlohmann::json;

const backend::Backend& cuda_backend() {
  const backend::Backend* b = backend::find_backend("cuda");
  EXPECT_NE(b, nullptr) << "a CUDA build registers the cuda backend";
  return *b;
}

TEST(CudaBackend, RegistersAsCudaWithItsDevice) {
  const backend::Backend& b = cuda_backend();
  EXPECT_EQ(b.name(), "cuda");
  EXPECT_EQ(b.device().type, DeviceType::kCUDA);
  EXPECT_EQ(b.target().name, "cuda");
  const auto names = backend::backend_names();
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "cuda"}));
}

// Recording calls is an optional part of a backend (backends/call_recorder.h): the CUDA
// backend hands out a recorder, the CPU backend none, so the runtime never records on it.
TEST(CudaBackend, RecordsCallsThroughItsRecorderAndTheCpuBackendHasNone) {
  EXPECT_NE(cuda_backend().recorder(), nullptr);
  const backend::Backend* cpu = backend::find_backend("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->recorder(), nullptr);
}

// Every op that reaches a backend has a CUDA kernel: the CPU backend has a kernel for exactly
// those (decompositions_test checks that side), so the two tables must cover the same ops.
TEST(CudaBackend, HasAKernelForEveryOpThatReachesABackend) {
  const backend::Backend& cuda = cuda_backend();
  const backend::Backend* cpu = backend::find_backend("cpu");
  ASSERT_NE(cpu, nullptr);
  const auto decomposed = passes::decomposed_targets();
  std::vector<std::string> missing, extra;
  for (const ir::OpSchema* op : ir::all_ops()) {
    const bool on_cpu = cpu->kernel(op->id) != nullptr;
    const bool on_cuda = cuda.kernel(op->id) != nullptr;
    if (on_cpu && !on_cuda) missing.push_back(op->target);
    if (on_cuda && !on_cpu) extra.push_back(op->target);
    if (std::find(decomposed.begin(), decomposed.end(), op->target) != decomposed.end()) {
      EXPECT_FALSE(on_cuda) << op->target << " is decomposed before any backend";
    }
  }
  EXPECT_TRUE(missing.empty()) << "ops without a CUDA kernel: "
                               << ::testing::PrintToString(missing);
  EXPECT_TRUE(extra.empty()) << "CUDA kernels for ops no backend receives: "
                             << ::testing::PrintToString(extra);
}

// What planning reads: the slice and index writes run in place on their base (so a KV-cache
// update is planned into the state itself), and producers store into a write's slice.
TEST(CudaBackend, CapabilitiesLetWritesRunInPlaceAndProducersStoreIntoSlices) {
  const backend::Target& t = cuda_backend().target();
  for (ir::OpId op : {ir::OpId::slice_scatter, ir::OpId::select_scatter, ir::OpId::index_put,
                      ir::OpId::index_copy})
    EXPECT_TRUE(t.has(op, backend::kWritesInPlace)) << ir::op_target(op);
  for (ir::OpId op : {ir::OpId::add_Tensor, ir::OpId::mul_Tensor, ir::OpId::clone,
                      ir::OpId::_to_copy, ir::OpId::copy, ir::OpId::silu, ir::OpId::where_self})
    EXPECT_TRUE(t.has(op, backend::kStoresIntoDestination)) << ir::op_target(op);
}

// ---- the CLI -------------------------------------------------------------------------------

std::string model_of(const std::string& c) { return test::kCasesDir + "/" + c + "/model.pt2"; }

json plan_json(const std::string& model, const std::string& device) {
  test::Outcome o = test::run_splice({"inspect", "--plan", "--json", "--device", device, model},
                                     std::chrono::seconds(60));
  EXPECT_EQ(o.exit_code, 0) << test::describe(o);
  json j = json::parse(o.out, nullptr, /*allow_exceptions=*/false);
  return o.exit_code == 0 && !j.is_discarded() ? j : json();
}

TEST(CudaPlan, KvCacheUpdateIsWrittenIntoTheStateAndMovesOnlyTheUpdate) {
  // index_put(cache, [None, None, pos], k) and slice_scatter(cache, k, 2, u0, u0 + 1): k
  // (f32[1, 2, 1, 4]: 32 bytes) is all that moves, on the cuda target as on the cpu one.
  for (const auto& [c, target] : std::vector<std::pair<std::string, std::string>>{
           {"kv_cache_reads_old_state.default", "aten.index_put.default"},
           {"w_kv_item_slice_3_7_0_f32.default", "aten.slice_scatter.default"}}) {
    SCOPED_TRACE(c);
    json report = plan_json(model_of(c), "cuda");
    ASSERT_FALSE(report.is_null());
    EXPECT_EQ(report["backend"], "cuda");
    ASSERT_EQ(report["writes"].size(), 1u);
    const json& w = report["writes"][0];
    EXPECT_EQ(w["target"], target);
    EXPECT_EQ(w["strategy"], "in_place_state");
    EXPECT_EQ(w["bytes"], 32);
    EXPECT_EQ(report["totals"]["copy_bytes"], 32);
  }
}

// On every case with slice or index writes: the cuda plan writes the same nodes with the same
// targets and strategies as the cpu plan (a slice write stays a slice write, never a scatter
// through an index tensor; it copies its base only where the CPU's plan must too, when the
// base is read again) and moves no more bytes.
TEST(CudaPlan, SliceWritesStaySliceWritesAndMoveNoMoreThanOnTheCpu) {
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::kCasesDir)) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".default") || !std::filesystem::exists(e.path() / "model.pt2")) continue;
    if (name.find("scatter") == std::string::npos && name.find("kv") == std::string::npos &&
        name.find("slice") == std::string::npos && name.find("index") == std::string::npos &&
        name.find("rotary") == std::string::npos)
      continue;
    SCOPED_TRACE(name);
    json cpu = plan_json(e.path() / "model.pt2", "cpu");
    json cuda = plan_json(e.path() / "model.pt2", "cuda");
    if (cpu.is_null() || cuda.is_null()) continue;
    ASSERT_EQ(cuda["writes"].size(), cpu["writes"].size());
    for (size_t i = 0; i < cpu["writes"].size(); ++i) {
      const json &a = cpu["writes"][i], &b = cuda["writes"][i];
      EXPECT_EQ(b["node"], a["node"]);
      EXPECT_EQ(b["target"], a["target"]);
      EXPECT_EQ(b["strategy"], a["strategy"]) << b.dump();
      EXPECT_LE(b["bytes"].get<int64_t>(), a["bytes"].get<int64_t>()) << b.dump();
    }
    EXPECT_LE(cuda["totals"]["copy_bytes"].get<int64_t>(),
              cpu["totals"]["copy_bytes"].get<int64_t>());
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

// Every matrix product of a decoder with a static cache gets a kernel and a reason in the cuda
// plan (plan/matmul_kernels.h), chosen without a GPU; the CPU's plan reports none.
TEST(CudaPlan, EveryMatrixProductHasAKernelAndAReason) {
  const std::string model = model_of("hf_llama_static_cache.default");
  json cuda = plan_json(model, "cuda");
  ASSERT_FALSE(cuda.is_null());
  ASSERT_TRUE(cuda.contains("matmuls")) << cuda.dump();
  int gemv = 0;
  for (const json& m : cuda["matmuls"]) {
    EXPECT_TRUE(m["kernel"] == "gemv" || m["kernel"] == "cublaslt") << m.dump();
    EXPECT_FALSE(m["reason"].get<std::string>().empty()) << m.dump();
    gemv += m["kernel"] == "gemv";
  }
  EXPECT_GT(gemv, 0) << cuda["matmuls"].dump();
  json cpu = plan_json(model, "cpu");
  ASSERT_FALSE(cpu.is_null());
  EXPECT_FALSE(cpu.contains("matmuls"));
}

TEST(CudaPlan, TextPlanNamesTheCudaBackend) {
  test::Outcome o = test::run_splice(
      {"inspect", "--plan", "--device", "cuda", model_of("kv_cache_reads_old_state.default")});
  EXPECT_EQ(o.exit_code, 0) << test::describe(o);
  EXPECT_NE(o.out.find("in_place_state"), std::string::npos) << o.out;
}

TEST(CudaRun, WithoutAGpuFailsWithAClearMessage) {
  if (device_available()) GTEST_SKIP() << "this machine has a GPU";
  const std::string dir = test::kCasesDir + "/kv_cache_reads_old_state.default";
  test::Outcome o = test::run_splice({"run", "--device", "cuda", dir + "/model.pt2", "--inputs",
                                      dir + "/call0.inputs.safetensors"});
  EXPECT_EQ(o.exit_code, 2) << test::describe(o);
  EXPECT_NE(o.err.find("no usable CUDA device"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("inspect --plan --device cuda"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace splice::cuda
