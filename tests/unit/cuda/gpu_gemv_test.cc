// splice's GEMV kernels (gemv.h) against the CPU backend (suite GpuGemv): M = 1, 2, 7, 16
// rows; K and N multiples of 8 and not (a 16-byte load that is not aligned falls back to
// element loads); float16, bfloat16, float32; with and without a bias; linear's [N, K] weight,
// its transpose, mm's [K, N] weight and its transpose, a sliced input; every product once as
// the GPU's multiprocessor count splits it and once with k split as far as it goes (a narrow
// output on a large GPU). Also: split-k gives the same bits twice and leaves the arrival
// counters at zero. The launch goes through describe_matmul and choose_gemv, as the runner's.
// This file also builds in the host emulation (tests/cuda_emulation/run.sh), which runs the
// kernels' blocks as threads.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "backends/cuda/device_info.h"
#include "backends/cuda/gemv.h"
#include "matmul_cases.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

class GpuGemv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    counters_ = static_cast<unsigned*>(arena_.alloc(kGemvCounters * sizeof(unsigned)));
    ASSERT_NE(counters_, nullptr);
    ASSERT_EQ(cudaMemset(counters_, 0, kGemvCounters * sizeof(unsigned)), cudaSuccess);
    auto sms = current_sm_count();
    ASSERT_TRUE(sms.ok());
    sm_count_ = *sms;
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
  }

  // describe_matmul -> choose_gemv -> plan_gemv(sm_count) -> gemv; "" or the problem.
  std::string launch(const MatmulArgs& args, int sm_count, GemvLayout* layout = nullptr) {
    auto exec = describe_matmul(kind_target(args.kind), args);
    if (!exec.ok()) return "describe_matmul: " + exec.error().message();
    const GemvChoice choice = choose_gemv(*exec);
    if (!choice.use) return "GEMV not chosen: " + choice.reason;
    const GemvLaunch l = plan_gemv(choice.args, sm_count);
    if (layout) *layout = l.layout;
    const KernelScratch scratch = arena_.scratch(l.partial_bytes);
    return launch_problem(gemv(choice.args, l, scratch, counters_, nullptr));
  }

  void run_case(const MatmulCase& mc, DType dt, int sm_count, const std::string& extra,
                GemvLayout* layout = nullptr) {
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
    args.alpha = mc.alpha;
    args.beta = mc.beta;
    log_.record(case_label(mc, dt) + extra,
                check_against_cpu(arena_, kind_target(mc.kind), in.args,
                                  [&](const std::vector<DeviceTensor>& o) {
                                    args.out = o[0];
                                    return launch(args, sm_count, layout);
                                  },
                                  mc.strided_out, {matmul_tolerance(dt, case_k(mc))}));
  }

  bool counters_zero() {
    std::vector<unsigned> host(kGemvCounters);
    cudaMemcpy(host.data(), counters_, host.size() * sizeof(unsigned), cudaMemcpyDeviceToHost);
    for (unsigned v : host)
      if (v != 0) return false;
    return true;
  }

  DeviceArena arena_;
  unsigned* counters_ = nullptr;
  int sm_count_ = 1;
  CaseLog log_;
  std::mt19937 gen_{2024};
};

constexpr DType kDtypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};

TEST_F(GpuGemv, EveryRowCountShapeLayoutDtypeAndBias) {
  using L = Layout;
  const int64_t rows[] = {1, 2, 7, 16};
  // (k, n): aligned for every dtype, k or n not a multiple of 8, a narrow output to split.
  const std::pair<int64_t, int64_t> kn[] = {{64, 48}, {37, 29}, {40, 13}, {4096, 24}};
  int cases = 0;
  for (int64_t m : rows) {
    for (auto [k, n] : kn) {
      std::vector<MatmulCase> v = {
          // linear: weight [n, k] (rows kernel) and its transpose (columns kernel), bias or not
          make_case(MatmulKind::kLinear, {{m, k}, L::kContiguous}, {{n, k}, L::kContiguous}),
          make_case(MatmulKind::kLinear, {{m, k}, L::kContiguous}, {{n, k}, L::kContiguous},
                    OperandSpec{{n}, L::kContiguous}),
          make_case(MatmulKind::kLinear, {{m, k}, L::kContiguous}, {{n, k}, L::kTransposed},
                    OperandSpec{{n}, L::kSliced}),
          // mm: [k, n] weight (columns kernel), its transpose (rows kernel), a sliced input
          // (element loads), a strided output
          make_case(MatmulKind::kMm, {{m, k}, L::kContiguous}, {{k, n}, L::kContiguous}),
          make_case(MatmulKind::kMm, {{m, k}, L::kContiguous}, {{k, n}, L::kTransposed}),
          make_case(MatmulKind::kMm, {{m, k}, L::kSliced}, {{k, n}, L::kContiguous}, std::nullopt,
                    1, 1, true),
          // addmm with a [n] self, scaled
          make_case(MatmulKind::kAddmm, {{m, k}, L::kContiguous}, {{k, n}, L::kTransposed},
                    OperandSpec{{n}, L::kContiguous}, 0.5, 2.0),
      };
      if (m == 2) {  // batch dims folded into rows: linear on [2, 1, k] is 2 rows
        v.push_back(make_case(MatmulKind::kLinear, {{m, 1, k}, L::kContiguous},
                              {{n, k}, L::kContiguous}, OperandSpec{{n}, L::kContiguous}));
      }
      for (const MatmulCase& mc : v) {
        for (DType dt : kDtypes) {
          run_case(mc, dt, sm_count_, "");
          run_case(mc, dt, 100000, " (k split as far as it goes)");
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
  EXPECT_TRUE(counters_zero());
  EXPECT_GT(cases, 0);
}

// A few small products through each kernel (16-byte rows, 16-byte columns, element loads),
// with a bias, split and not: the set the host emulation runs (each emulated block costs a
// fraction of a second).
TEST_F(GpuGemv, SmallProductsThroughEachKernel) {
  using L = Layout;
  const MatmulCase v[] = {
      make_case(MatmulKind::kLinear, {{1, 64}, L::kContiguous}, {{5, 64}, L::kContiguous},
                OperandSpec{{5}, L::kContiguous}),
      make_case(MatmulKind::kLinear, {{7, 40}, L::kContiguous}, {{3, 40}, L::kContiguous}),
      make_case(MatmulKind::kMm, {{16, 24}, L::kContiguous}, {{24, 16}, L::kContiguous}),
      make_case(MatmulKind::kAddmm, {{2, 37}, L::kContiguous}, {{37, 3}, L::kContiguous},
                OperandSpec{{3}, L::kContiguous}, 0.5, 2.0),
      make_case(MatmulKind::kMm, {{2, 9}, L::kSliced}, {{9, 4}, L::kTransposed}, std::nullopt, 1, 1,
                true),
  };
  for (const MatmulCase& mc : v) {
    for (DType dt : kDtypes) {
      run_case(mc, dt, sm_count_, "");
      run_case(mc, dt, 100000, " (k split as far as it goes)");
    }
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
  EXPECT_TRUE(counters_zero());
}

TEST_F(GpuGemv, SixteenByteLoadsOnlyWhenAligned) {
  using L = Layout;
  GemvLayout layout{};
  // float16 [n, k] weight, k % 8 == 0: 16-byte rows.
  run_case(make_case(MatmulKind::kLinear, {{1, 64}, L::kContiguous}, {{16, 64}, L::kContiguous}),
           DType::kFloat16, sm_count_, "", &layout);
  EXPECT_EQ(layout, GemvLayout::kRows);
  // k = 36: a row of the weight starts 8 bytes off a 16-byte boundary: element loads.
  run_case(make_case(MatmulKind::kLinear, {{1, 36}, L::kContiguous}, {{16, 36}, L::kContiguous}),
           DType::kFloat16, sm_count_, "", &layout);
  EXPECT_EQ(layout, GemvLayout::kStrided);
  // float32 k = 36 is 144 bytes a row: 16-byte rows again.
  run_case(make_case(MatmulKind::kLinear, {{1, 36}, L::kContiguous}, {{16, 36}, L::kContiguous}),
           DType::kFloat32, sm_count_, "", &layout);
  EXPECT_EQ(layout, GemvLayout::kRows);
  // mm's [k, n] weight with n % 8 == 0: 16-byte columns.
  run_case(make_case(MatmulKind::kMm, {{3, 20}, L::kContiguous}, {{20, 64}, L::kContiguous}),
           DType::kBFloat16, sm_count_, "", &layout);
  EXPECT_EQ(layout, GemvLayout::kCols);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuGemv, SplitKIsDeterministicAndLeavesCountersZero) {
  const int64_t m = 3, k = 4096, n = 40;
  const Tensor x = random_tensor(DType::kFloat16, {m, k}, Layout::kContiguous, gen_);
  const Tensor w = random_tensor(DType::kFloat16, {n, k}, Layout::kContiguous, gen_);
  MatmulArgs args;
  args.kind = MatmulKind::kLinear;
  args.a = arena_.to_device(x);
  args.b = arena_.to_device(w);
  std::vector<std::vector<uint16_t>> results;
  for (int rep = 0; rep < 2; ++rep) {
    const Tensor out = make_output(DType::kFloat16, {m, n}, false);
    args.out = arena_.to_device(out);
    auto exec = describe_matmul("aten.linear.default", args);
    ASSERT_TRUE(exec.ok());
    const GemvChoice choice = choose_gemv(*exec);
    ASSERT_TRUE(choice.use) << choice.reason;
    const GemvLaunch l = plan_gemv(choice.args, 132);
    EXPECT_GT(l.splits, 1);
    EXPECT_EQ(
        launch_problem(gemv(choice.args, l, arena_.scratch(l.partial_bytes), counters_, nullptr)),
        "");
    arena_.to_host(out);
    const auto* p = reinterpret_cast<const uint16_t*>(out.storage()->data());
    results.emplace_back(p, p + m * n);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_TRUE(counters_zero());
}

TEST_F(GpuGemv, TooLittleScratchForSplitsIsAnError) {
  const Tensor x = random_tensor(DType::kFloat32, {1, 4096}, Layout::kContiguous, gen_);
  const Tensor w = random_tensor(DType::kFloat32, {8, 4096}, Layout::kContiguous, gen_);
  const Tensor out = make_output(DType::kFloat32, {1, 8}, false);
  MatmulArgs args;
  args.kind = MatmulKind::kLinear;
  args.a = arena_.to_device(x);
  args.b = arena_.to_device(w);
  args.out = arena_.to_device(out);
  auto exec = describe_matmul("aten.linear.default", args);
  ASSERT_TRUE(exec.ok());
  const GemvChoice choice = choose_gemv(*exec);
  ASSERT_TRUE(choice.use);
  const GemvLaunch l = plan_gemv(choice.args, 132);
  ASSERT_GT(l.partial_bytes, 0u);
  auto r = gemv(choice.args, l, {}, counters_, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBackend);
  EXPECT_NE(r.error().message().find("bytes of scratch for its split-k partial sums, got 0"),
            std::string::npos)
      << r.error().message();
}

}  // namespace
}  // namespace splice::cuda
