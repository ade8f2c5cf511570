// A second backend behind the interface, registered by this test only: the CPU kernels with
// other capability flags (no kernel stores into a strided destination). Planning takes the
// backend as data, so the rotary chain is planned differently for it; programs run through the
// interface alone on it and match PyTorch; and an engine compiled for the CPU backend is refused
// on it (exit 2) — what a CUDA build relies on.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/registry.h"
#include "compiler/driver.h"
#include "plan/build.h"
#include "splice/splice.h"
#include "tensor/safetensors.h"
#include "tests/conformance/compare.h"
#include "tests/unit/backends/recorded_calls.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

constexpr const char* kTestBackend = "cpu_nostride";
const std::string kCases = std::string(SPLICE_SOURCE_DIR) + "/tests/cases/";

// The CPU backend's kernels, memory and contexts, with kStoresIntoDestination removed from
// every kernel: a backend whose producers can only hand back their own outputs.
class NoStrideBackend final : public backend::Backend {
 public:
  NoStrideBackend() {
    std::vector<backend::KernelEntry> kernels(cpu::kernels().begin(), cpu::kernels().end());
    for (auto& k : kernels) k.caps &= ~uint32_t{backend::kStoresIntoDestination};
    set_kernels(kTestBackend, kernels);
  }
  std::string_view name() const override { return kTestBackend; }
  Device device() const override { return cpu().device(); }
  Result<std::shared_ptr<Storage>> allocate(size_t n) const override { return cpu().allocate(n); }
  Result<void> copy(const Tensor& dst, const Tensor& src,
                    backend::SessionContext* s) const override {
    return cpu().copy(dst, src, s);
  }
  Result<std::shared_ptr<backend::ModelContext>> open_model(
      const backend::ModelOptions& o) const override {
    return cpu().open_model(o);
  }
  Result<std::unique_ptr<backend::SessionContext>> open_session(
      backend::ModelContext& m) const override {
    return cpu().open_session(m);
  }

 private:
  static const backend::Backend& cpu() { return *backend::find_backend("cpu"); }
};

const bool kRegistered = backend::register_backend(std::make_unique<NoStrideBackend>());

TEST(TestBackend, IsRegisteredBesideTheCpuBackend) {
  ASSERT_TRUE(kRegistered);
  const auto names = backend::backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), kTestBackend), names.end());
  auto missing = backend::require_backend("tpu");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code(), 2);
  EXPECT_NE(missing.error().message().find("no 'tpu' backend (it has: cpu, cpu_nostride"),
            std::string::npos)
      << missing.error().message();
}

TEST(TestBackend, TheRotaryChainIsPlannedForTheBackendsCapabilities) {
  auto program = compiler::load_program(kCases + "rotary_halves_f16.default/model.pt2");
  ASSERT_TRUE(program.ok()) << program.error().message();
  const plan::Plan on_cpu =
      plan::build_plan(*program, plan::PlanMode::kPlanned, backend::find_backend("cpu")->target());
  const plan::Plan on_test = plan::build_plan(*program, plan::PlanMode::kPlanned,
                                              backend::find_backend(kTestBackend)->target());
  EXPECT_EQ(on_cpu.backend, "cpu");
  EXPECT_EQ(on_test.backend, kTestBackend);
  ASSERT_EQ(on_cpu.writes.size(), 2u);
  ASSERT_EQ(on_test.writes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    // On the CPU the two halves' producers store straight into their slices...
    EXPECT_EQ(on_cpu.writes[i].src, plan::SrcMode::kProducerWrites);
    EXPECT_EQ(on_cpu.writes[i].bytes, 0);
    // ...on a backend whose kernels cannot, each half is computed, then copied in, and the
    // plan says why.
    EXPECT_EQ(on_test.writes[i].src, plan::SrcMode::kCopied);
    EXPECT_GT(on_test.writes[i].bytes, 0);
    bool said_why = false;
    for (const auto& r : on_test.writes[i].rejected)
      said_why |= r.strategy == "producer_writes" &&
                  r.reason.find(
                      "cannot store into a strided destination on the cpu_nostride "
                      "backend") != std::string::npos;
    EXPECT_TRUE(said_why);
  }
  EXPECT_GT(on_test.totals.copy_bytes, on_cpu.totals.copy_bytes);
}

// A few recorded cases (writes, state across calls, a model block) through the public API on
// the test backend: every output and buffer after every call matches PyTorch.
TEST(TestBackend, RecordedCasesRunThroughTheInterface) {
  for (const char* name :
       {"rotary_halves_f16.default", "rotary_halves_into_empty_like.keep",
        "kv_cache_index_copy.keep", "slice_scatter_basic.default", "llama_block_2layer.default"}) {
    SCOPED_TRACE(name);
    testing::expect_recorded_calls_match(kCases + name + "/", kTestBackend);
  }
}

class TestBackendEngine : public testing::TempDirTest {
 protected:
  std::string path(const char* name) const { return (dir_ / name).string(); }
};

TEST_F(TestBackendEngine, AnEngineCompiledForTheCpuIsRefused) {
  const std::string engine = path("model.splice");
  ASSERT_TRUE(Model::compile(kCases + "rotary_halves_f16.default/model.pt2", engine).ok());
  LoadOptions options;
  options.device = kTestBackend;
  auto refused = Model::load(engine, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().exit_code(), 2);
  EXPECT_NE(refused.error().message().find("compiled for the cpu backend, not cpu_nostride"),
            std::string::npos)
      << refused.error().message();
  // The same engine loads on the backend it was compiled for.
  EXPECT_TRUE(Model::load(engine).ok());
  // And one compiled for the test backend loads there.
  const std::string mine = path("mine.splice");
  ASSERT_TRUE(Model::compile(kCases + "rotary_halves_f16.default/model.pt2", mine, options).ok());
  EXPECT_TRUE(Model::load(mine, options).ok());
  EXPECT_FALSE(Model::load(mine).ok());
}

}  // namespace
}  // namespace splice
