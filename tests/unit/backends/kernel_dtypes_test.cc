// Backends declare what they run, op × dtype, in their kernel tables (KernelEntry::dtypes):
// the Target carries it, refuses an op × dtype the table lacks with a message naming the op,
// the dtype and the backend, and loading a program that needs one fails at load (exit 2), not
// at its first call. The CPU table narrows exactly the rows whose kernels refuse dtypes.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/registry.h"
#include "ir/parser.h"
#include "runtime/executor.h"
#include "runtime/kernel_check.h"
#include "splice/splice.h"

namespace splice {
namespace {

using ir::OpId;

const std::string kCases = std::string(SPLICE_SOURCE_DIR) + "/tests/cases/";

Result<std::vector<Tensor>> no_kernel(const backend::KernelCall&,
                                      std::span<const backend::KernelArg>) {
  return make_error(ErrorKind::kInternal, "not called");
}

TEST(KernelDtypes, ATargetRefusesAnOpTimesDtypeItsTableLacks) {
  const backend::KernelEntry kernels[] = {
      backend::KernelEntry{OpId::mm, no_kernel}.accepting(DTypeSet::floating()),
      backend::KernelEntry{OpId::add_Tensor, no_kernel},
  };
  const backend::Target t = backend::Target::from_kernels("fake", kernels);
  EXPECT_TRUE(t.runs(OpId::mm, DType::kFloat32));
  EXPECT_TRUE(t.runs(OpId::mm, DType::kBFloat16));
  EXPECT_FALSE(t.runs(OpId::mm, DType::kInt64));
  EXPECT_TRUE(t.runs(OpId::add_Tensor, DType::kBool)) << "a row runs every dtype by default";
  EXPECT_FALSE(t.runs(OpId::bmm, DType::kFloat32)) << "no kernel at all";

  EXPECT_TRUE(t.check_runs(OpId::mm, DType::kFloat16).ok());
  auto refused = t.check_runs(OpId::mm, DType::kInt64);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUnsupportedOp);
  EXPECT_EQ(refused.error().exit_code(), 2);
  EXPECT_EQ(refused.error().message(),
            "the fake backend has no kernel for aten.mm.default on i64 tensors (it runs f16, f32, "
            "f64, bf16)");
  auto missing = t.check_runs(OpId::bmm, DType::kFloat32);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "the fake backend has no kernel for aten.bmm.default");
}

// The rows narrowed where the CPU kernels refuse dtypes (as PyTorch does): no bool matmul,
// floating softmax, norms and attention; everything else runs every dtype.
TEST(KernelDtypes, TheCpuTableNarrowsTheRowsItsKernelsRefuse) {
  const backend::Target& cpu = backend::find_backend("cpu")->target();
  EXPECT_FALSE(cpu.runs(OpId::mm, DType::kBool));
  EXPECT_TRUE(cpu.runs(OpId::mm, DType::kInt64));
  EXPECT_FALSE(cpu.runs(OpId::_softmax, DType::kInt64));
  EXPECT_TRUE(cpu.runs(OpId::_softmax, DType::kBFloat16));
  EXPECT_FALSE(cpu.runs(OpId::layer_norm, DType::kInt32));
  EXPECT_FALSE(cpu.runs(OpId::scaled_dot_product_attention, DType::kInt64));
  EXPECT_TRUE(cpu.runs(OpId::add_Tensor, DType::kBool));
  EXPECT_TRUE(cpu.runs(OpId::softmax_int, DType::kInt64)) << "its dtype argument may cast";
}

// The dtype checked is the one a kernel switches on: the first tensor argument's (the first
// tensor of a list), else the first output's.
TEST(KernelDtypes, TheDispatchDtypeIsTheFirstTensorArgumentsElseTheOutputs) {
  auto p = ir::parse_program(R"(graph(%a: i32[2], %b: f32[2]) {
  %cat: f32[4] = aten.cat.default([%b, %b], 0)
  %add: f32[2] = aten.add.Tensor(%b, %a)
  %zeros: i64[3] = aten.zeros.default([3], dtype=i64)
  return (%cat, %add, %zeros)
}
)");
  ASSERT_TRUE(p.ok()) << p.error().message();
  const auto& nodes = p->graph.nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(runtime::dispatch_dtype(*nodes[0]), DType::kFloat32);
  EXPECT_EQ(runtime::dispatch_dtype(*nodes[1]), DType::kFloat32);
  EXPECT_EQ(runtime::dispatch_dtype(*nodes[2]), DType::kInt64);
}

// A bool matmul (which PyTorch refuses too) is refused when the program is loaded on the CPU
// backend, naming the op, the dtype, the backend and the node, before any call.
TEST(KernelDtypes, LoadRefusesABoolMatmulOnTheCpu) {
  auto p = ir::parse_program(R"(graph(%x: bool[2, 3], %y: bool[3, 2]) {
  %mm: bool[2, 2] = aten.mm.default(%x, %y)
  return (%mm)
}
)");
  ASSERT_TRUE(p.ok()) << p.error().message();
  for (ir::Value* v : p->graph.inputs()) {
    ir::InputSpec spec;
    spec.value = v;
    p->signature.inputs.push_back(spec);
  }
  p->signature.outputs.resize(p->graph.outputs().size());
  auto model = runtime::prepare(std::move(*p), runtime::PrepareOptions{});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().exit_code(), 2);
  EXPECT_EQ(model.error().message(),
            "the cpu backend has no kernel for aten.mm.default on bool tensors (it runs u8, i8, "
            "i16, i32, i64, f16, f32, f64, bf16), needed by node 'mm'");
}

// The CPU kernels with aten.mul.Tensor declared for every dtype but f16: a backend whose table
// lacks one op × dtype that a recorded case needs. (Named to sort after test_backend_test.cc's
// cpu_nostride, whose test reads the list of backends.)
constexpr const char* kNoHalfMulBackend = "cpu_without_f16_mul";

class NoHalfMulBackend final : public backend::Backend {
 public:
  NoHalfMulBackend() {
    std::vector<backend::KernelEntry> kernels(cpu::kernels().begin(), cpu::kernels().end());
    for (auto& k : kernels)
      if (k.op == OpId::mul_Tensor) k.dtypes = DTypeSet::all().without(DType::kFloat16);
    set_kernels(kNoHalfMulBackend, kernels);
  }
  std::string_view name() const override { return kNoHalfMulBackend; }
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

const bool kRegistered = backend::register_backend(std::make_unique<NoHalfMulBackend>());

TEST(KernelDtypes, LoadingAProgramWhoseOpTimesDtypeTheBackendLacksFailsAtLoad) {
  ASSERT_TRUE(kRegistered);
  LoadOptions options;
  options.device = kNoHalfMulBackend;
  auto model = Model::load(kCases + "rotary_halves_f16.default/model.pt2", options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().exit_code(), 2);
  EXPECT_NE(model.error().message().find("the cpu_without_f16_mul backend has no kernel for "
                                         "aten.mul.Tensor on f16 tensors (it runs u8, i8, i16, "
                                         "i32, i64, f32, f64, bool, bf16), needed by node 'mul"),
            std::string::npos)
      << model.error().message();
  // The same program loads on the CPU backend, whose mul runs every dtype.
  EXPECT_TRUE(Model::load(kCases + "rotary_halves_f16.default/model.pt2").ok());
}

// compile() refuses an engine its backend would refuse at load, and writes nothing.
TEST(KernelDtypes, CompilingForABackendThatLacksAnOpTimesDtypeFailsAndWritesNothing) {
  const std::string engine = ::testing::TempDir() + "kernel_dtypes_refused.splice";
  std::remove(engine.c_str());
  LoadOptions options;
  options.device = kNoHalfMulBackend;
  auto compiled = Model::compile(kCases + "rotary_halves_f16.default/model.pt2", engine, options);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.error().exit_code(), 2);
  EXPECT_NE(compiled.error().message().find("has no kernel for aten.mul.Tensor on f16 tensors"),
            std::string::npos)
      << compiled.error().message();
  EXPECT_FALSE(std::filesystem::exists(engine));
}

}  // namespace
}  // namespace splice
