// A micro-benchmark of the row norms (suite GpuNormBench, disabled by default: run it with
// --gtest_filter='GpuNormBench.*' --gtest_also_run_disabled_tests): layer_norm over a ViT's
// [1024, 768] activations (SmolVLA's vision tower, in bfloat16 and float32, with weight and
// bias) and rms_norm over an action expert's [50, 720] (float32), in microseconds per call,
// next to a device-to-device copy of the same bytes. Each is 100 calls recorded as one CUDA
// graph and replayed (graph_timing.h), so launches are not counted (as in a recorded program).
#include <gtest/gtest.h>

#include <cstdio>

#include "backends/cuda/norm.h"
#include "graph_timing.h"
#include "kernel_check.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

TEST(GpuNormBench, DISABLED_LayerNormAndRmsNormRows) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  DeviceArena arena;
  std::mt19937 gen(7);
  struct Row {
    const char* name;
    DType dtype;
    Shape shape;
    bool rms;
  };
  const Row rows[] = {{"layer_norm bf16 [1024, 768]", DType::kBFloat16, {1024, 768}, false},
                      {"layer_norm f32 [1024, 768]", DType::kFloat32, {1024, 768}, false},
                      {"rms_norm f32 [50, 720]", DType::kFloat32, {50, 720}, true}};
  std::printf("%-30s %10s %10s\n", "norm", "us", "copy us");
  for (const Row& r : rows) {
    const int64_t cols = r.shape.back();
    const DeviceTensor x =
        arena.to_device(random_tensor(r.dtype, r.shape, Layout::kContiguous, gen));
    const DeviceTensor out =
        arena.to_device(random_tensor(r.dtype, r.shape, Layout::kContiguous, gen));
    const DeviceTensor w =
        arena.to_device(random_tensor(r.dtype, {cols}, Layout::kContiguous, gen));
    const DeviceTensor b =
        arena.to_device(random_tensor(r.dtype, {cols}, Layout::kContiguous, gen));
    const int64_t norm[] = {cols};
    const double us =
        1e3 * graph_time_ms(
                  [&](cudaStream_t s) {
                    auto res = r.rms ? rms_norm(x, norm, &w, 1e-5, out, nullptr, s)
                                     : layer_norm(x, norm, &w, &b, 1e-6, out, nullptr, nullptr, s);
                    if (!res.ok()) ADD_FAILURE() << res.error().message();
                  },
                  100);
    const size_t bytes = static_cast<size_t>(shape_numel(r.shape)) * dtype_size(r.dtype);
    const double copy_us =
        1e3 * graph_time_ms(
                  [&](cudaStream_t s) {
                    cudaMemcpyAsync(out.data, x.data, bytes, cudaMemcpyDeviceToDevice, s);
                  },
                  100);
    std::printf("%-30s %10.2f %10.2f\n", r.name, us, copy_us);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace splice::cuda
