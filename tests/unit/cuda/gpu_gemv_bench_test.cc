// A micro-benchmark of the decode-shaped products (suite GpuGemvBench, disabled by default:
// run it with --gtest_filter='GpuGemvBench.*' --gtest_also_run_disabled_tests). For each
// float16 weight [n, k] of issue 35's decoder (2048x2048 q/o, 2048x8192 down, 8192x2048
// gate/up, 128256x2048 the vocabulary head) and one row of x, it prints the weight bytes per
// second of splice's GEMV kernels and of cuBLASLt (the same runner with the GEMV kernels turned
// off), next to a device-to-device copy of the same bytes (read + write counted as the copy
// moves them, i.e. 2x the bytes, and as the weight bytes alone). Each timed call reads a
// different copy of the weight (together >= 256 MiB, beyond the 50 MB L2) so no call finds
// its weight in L2, as in a decode step that walks through every layer. Median of 5 runs of
// 20 calls, CUDA events around each run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backends/cuda/matmul.h"
#include "matmul_cases.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

// Median milliseconds per call of `call(i)` over 5 runs of `calls` calls.
template <typename F>
double median_ms(int calls, F&& call) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) call(i);  // warm-up: algorithm choice, first-launch costs
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(start, nullptr);
    for (int i = 0; i < calls; ++i) call(i);
    cudaEventRecord(stop, nullptr);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    runs.push_back(ms / calls);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

TEST(GpuGemvBench, DISABLED_BandwidthPerShape) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  DeviceArena arena;
  constexpr size_t kWorkspace = 32 << 20;
  void* workspace = arena.alloc(kWorkspace);
  auto runner = MatmulRunner::create(workspace, kWorkspace);
  ASSERT_TRUE(runner.ok()) << runner.error().message();
  const KernelScratch scratch = arena.scratch(16 << 20);
  const std::pair<int64_t, int64_t> shapes[] = {
      {2048, 2048}, {2048, 8192}, {8192, 2048}, {128256, 2048}};  // (n, k)
  std::printf("%-14s %10s %12s %12s %12s %10s %10s\n", "weight [n,k]", "MB", "gemv GB/s",
              "cublas GB/s", "copy GB/s", "gemv/copy", "gemv us");
  for (auto [n, k] : shapes) {
    const size_t bytes = static_cast<size_t>(n * k) * 2;
    const int copies = static_cast<int>(std::max<size_t>(2, (size_t{256} << 20) / bytes + 1));
    std::vector<void*> weights;
    for (int c = 0; c < copies; ++c) {
      weights.push_back(arena.alloc(bytes));
      ASSERT_NE(weights.back(), nullptr);
      cudaMemset(weights.back(), 0x3c, bytes);  // 1.0-ish float16 values
    }
    void* x = arena.alloc(static_cast<size_t>(k) * 2);
    void* out = arena.alloc(static_cast<size_t>(n) * 2);
    cudaMemset(x, 0, static_cast<size_t>(k) * 2);
    const auto product = [&](int i) {
      MatmulArgs args;
      args.kind = MatmulKind::kLinear;
      args.a.data = x;
      args.a.dtype = DType::kFloat16;
      args.a.rank = 2;
      args.a.sizes[0] = 1;
      args.a.sizes[1] = k;
      args.a.strides[0] = k;
      args.a.strides[1] = 1;
      args.b = args.a;
      args.b.data = weights[i % copies];
      args.b.sizes[0] = n;
      args.b.strides[0] = k;
      args.out = args.a;
      args.out.data = out;
      args.out.sizes[1] = n;
      args.out.strides[0] = n;
      auto r = (*runner)->run(args, scratch, nullptr);
      if (!r.ok()) ADD_FAILURE() << r.error().message();
    };
    (*runner)->set_gemv_enabled(true);
    const double gemv_ms = median_ms(20, product);
    (*runner)->set_gemv_enabled(false);
    const double cublas_ms = median_ms(20, product);
    const double copy_ms = median_ms(20, [&](int i) {
      cudaMemcpyAsync(weights[(i + 1) % copies], weights[i % copies], bytes,
                      cudaMemcpyDeviceToDevice, nullptr);
    });
    const auto gbs = [&](double ms) { return static_cast<double>(bytes) / (ms * 1e6); };
    // The copy reads and writes `bytes`: 2x bytes moved is its bandwidth.
    const double copy_gbs = 2 * gbs(copy_ms);
    std::printf("%6lldx%-7lld %10.1f %12.0f %12.0f %12.0f %10.2f %10.1f\n",
                static_cast<long long>(n), static_cast<long long>(k), bytes / 1e6, gbs(gemv_ms),
                gbs(cublas_ms), copy_gbs, gbs(gemv_ms) / copy_gbs, gemv_ms * 1e3);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace splice::cuda
