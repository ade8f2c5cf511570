// The matmul family on the GPU through MatmulRunner (suite GpuMatmul): every case of
// matmul_cases.h in every dtype against the CPU backend, large and split-K-prone shapes in the
// 16-bit types (float32 accumulation), the algorithm cache (one entry per configuration, none
// added by a repeated call), and the scratch query. Tolerances: matmul_tolerance in
// matmul_cases.h (float32 1e-5 relative + 2e-6·sqrt(k) absolute; float16 2e-3 + 1e-3·sqrt(k);
// bfloat16 1.6e-2 + 8e-3·sqrt(k); integers exact).
#include <gtest/gtest.h>

#include <cstdio>

#include "backends/cuda/matmul.h"
#include "matmul_cases.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

class GpuMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    workspace_ = arena_.alloc(kWorkspace);
    ASSERT_NE(workspace_, nullptr);
    auto runner = MatmulRunner::create(workspace_, kWorkspace);
    ASSERT_TRUE(runner.ok()) << runner.error().message();
    runner_ = std::move(*runner);
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
    runner_.reset();
  }

  // Runs one case: CPU reference, poisoned (maybe strided) output, the runner, comparison.
  void run_case(const MatmulCase& mc, DType dt, const KernelScratch& scratch,
                const std::string& extra = "") {
    if (decomposed_before_backends(kind_target(mc.kind))) return;  // no CPU kernel to compare
    const MatmulInputs in = make_matmul_inputs(mc, dt, gen_);
    MatmulArgs args;
    args.kind = mc.kind;
    args.a = arena_.to_device(in.a);
    args.b = arena_.to_device(in.b);
    DeviceTensor c;
    if (in.c) {
      c = arena_.to_device(*in.c);
      args.c = &c;
    }
    args.alpha = is_floating(dt) ? mc.alpha : std::trunc(mc.alpha);
    args.beta = is_floating(dt) ? mc.beta : std::trunc(mc.beta);
    log_.record(case_label(mc, dt) + extra,
                check_against_cpu(arena_, kind_target(mc.kind), in.args,
                                  [&](const std::vector<DeviceTensor>& o) {
                                    args.out = o[0];
                                    return launch_problem(runner_->run(args, scratch, nullptr));
                                  },
                                  mc.strided_out, {matmul_tolerance(dt, case_k(mc))}));
  }

  static constexpr size_t kWorkspace = 32 << 20;
  DeviceArena arena_;
  void* workspace_ = nullptr;
  std::unique_ptr<MatmulRunner> runner_;
  CaseLog log_;
  std::mt19937 gen_{4321};
};

TEST_F(GpuMatmul, EveryCaseEveryDtype) {
  const KernelScratch scratch = arena_.scratch(8 << 20);
  const DType dtypes[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                          DType::kBFloat16, DType::kInt32,   DType::kInt64,
                          DType::kUInt8,    DType::kInt16,   DType::kInt8};
  for (const MatmulCase& mc : matmul_cases())
    for (DType dt : dtypes) run_case(mc, dt, scratch);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuMatmul, LargeAndSplitKShapes) {
  const KernelScratch scratch = arena_.scratch(8 << 20);
  using L = Layout;
  const MatmulCase cases[] = {
      make_case(MatmulKind::kMm, {{64, 8192}, L::kContiguous}, {{8192, 64}, L::kContiguous}),
      make_case(MatmulKind::kLinear, {{2, 128, 1024}, L::kContiguous},
                {{3072, 1024}, L::kContiguous}, OperandSpec{{3072}, L::kContiguous}),
      make_case(MatmulKind::kBmm, {{32, 128, 64}, L::kContiguous}, {{32, 64, 128}, L::kTransposed}),
      make_case(MatmulKind::kMatmul, {{1, 4096}, L::kContiguous}, {{4096, 4096}, L::kTransposed}),
  };
  for (const MatmulCase& mc : cases)
    for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) run_case(mc, dt, scratch);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuMatmul, AlgorithmCachedOncePerConfiguration) {
  const MatmulCase mc =
      make_case(MatmulKind::kMm, {{33, 17}, Layout::kContiguous}, {{17, 9}, Layout::kContiguous});
  const size_t before = runner_->cached_algorithms();
  run_case(mc, DType::kFloat32, {});
  const size_t after_first = runner_->cached_algorithms();
  run_case(mc, DType::kFloat32, {});
  EXPECT_EQ(after_first, before + 1);
  EXPECT_EQ(runner_->cached_algorithms(), after_first);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuMatmul, ScratchQueryAndErrors) {
  // 20 rows: cuBLASLt's path (at 16 rows or fewer the GEMV kernels read any layout in place).
  const Tensor a = random_tensor(DType::kFloat32, {20, 10}, Layout::kSliced, gen_);
  const Tensor b = random_tensor(DType::kFloat32, {10, 4}, Layout::kContiguous, gen_);
  const Tensor out = make_output(DType::kFloat32, {20, 4}, false);
  MatmulArgs args;
  args.kind = MatmulKind::kMm;
  args.a = arena_.to_device(a);
  args.b = arena_.to_device(b);
  args.out = arena_.to_device(out);
  auto bytes = MatmulRunner::scratch_bytes(args);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  EXPECT_EQ(*bytes, 1024u);  // 20 x 10 floats, rounded to 256 bytes
  auto r = runner_->run(args, {}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBackend);
  const Tensor contiguous = random_tensor(DType::kFloat32, {20, 10}, Layout::kTransposed, gen_);
  args.a = arena_.to_device(contiguous);
  bytes = MatmulRunner::scratch_bytes(args);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 0u);  // a transposed operand is read in place
}

// Up to kGemvMaxRows rows (batch dims folded in) the runner launches the GEMV kernels; above,
// cuBLASLt (one more algorithm cached); both agree with the CPU.
TEST_F(GpuMatmul, GemvAtSixteenRowsOrFewerCublasAbove) {
  using L = Layout;
  const size_t gemv_before = runner_->gemv_launches();
  const size_t algos_before = runner_->cached_algorithms();
  run_case(make_case(MatmulKind::kLinear, {{2, 8, 256}, L::kContiguous},
                     {{96, 256}, L::kContiguous}, OperandSpec{{96}, L::kContiguous}),
           DType::kFloat16, {});
  EXPECT_EQ(runner_->gemv_launches(), gemv_before + 1);
  EXPECT_EQ(runner_->cached_algorithms(), algos_before);
  run_case(make_case(MatmulKind::kLinear, {{17, 256}, L::kContiguous}, {{96, 256}, L::kContiguous},
                     OperandSpec{{96}, L::kContiguous}),
           DType::kFloat16, {});
  EXPECT_EQ(runner_->gemv_launches(), gemv_before + 1);
  EXPECT_EQ(runner_->cached_algorithms(), algos_before + 1);
  runner_->set_gemv_enabled(false);  // the benchmark's cuBLASLt baseline at one row
  run_case(make_case(MatmulKind::kLinear, {{1, 256}, L::kContiguous}, {{96, 256}, L::kContiguous}),
           DType::kFloat16, {});
  EXPECT_EQ(runner_->gemv_launches(), gemv_before + 1);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

}  // namespace
}  // namespace splice::cuda
