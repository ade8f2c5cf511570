// cumsum on the GPU against the CPU backend (suite GpuScan): every input dtype with PyTorch's
// result dtype (int64 for integer and bool inputs) and explicit dtypes, strided inputs and
// outputs, warp / block (chunked with carries) / column kernels, lanes up to 10^5, empty and
// 0-d tensors. Tolerances: float32/float64 1e-6 relative (both accumulate in double); float16
// 2e-3 + 1e-3, bfloat16 1.6e-2 + 8e-3 (float accumulation, one rounding per prefix); integers
// and bool exact.
#include <gtest/gtest.h>

#include <cstdio>

#include "backends/cuda/scan.h"
#include "kernel_check.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

class GpuScan : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
  }
  DeviceArena arena_;
  CaseLog log_;
  std::mt19937 gen_{31337};
};

Tolerance scan_tolerance(DType dt) {
  switch (dt) {
    case DType::kFloat32:
      return {1e-6, 1e-6};
    case DType::kFloat64:
      return {1e-12, 1e-12};
    case DType::kFloat16:
      return {1e-3, 2e-3};
    case DType::kBFloat16:
      return {8e-3, 1.6e-2};
    default:
      return {0, 0};
  }
}

TEST_F(GpuScan, CumsumEveryDtypeAndLayout) {
  struct ScanShape {
    Shape shape;
    int64_t dim;
  };
  const ScanShape shapes[] = {
      {{7}, 0},          {{}, 0},
      {{33, 17}, 1},     {{33, 17}, 0},
      {{4, 5, 6}, 1},    {{3, 5000}, 1},
      {{3, 100003}, -1}, {{70001, 3}, 0},
      {{70001, 3}, 1},   {{16, 100, 1024}, 1},
      {{0, 3}, 1},       {{16, 600, 16}, 1},
  };
  const Layout layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kSliced,
                            Layout::kPermuted};
  int variant = 0;
  for (DType dt : kAllDTypes) {
    for (const ScanShape& s : shapes) {
      const Layout layout = layouts[variant % 4];
      const bool strided_out = variant % 3 == 0;
      ++variant;
      const Tensor x = random_tensor(dt, s.shape, layout, gen_, -1, 1);
      const DeviceTensor dx = arena_.to_device(x);
      const DType out_dt = is_floating(dt) ? dt : DType::kInt64;
      log_.record(std::string("cumsum ") + dname(dt) + " " + shape_string(s.shape) +
                      " dim=" + std::to_string(s.dim) + " " + layout_name(layout),
                  check_against_cpu(arena_, "aten.cumsum.default", {x, s.dim, std::monostate{}},
                                    [&](const std::vector<DeviceTensor>& o) {
                                      return launch_problem(cumsum(dx, s.dim, o[0], nullptr));
                                    },
                                    strided_out, {scan_tolerance(out_dt)}));
    }
  }
  const std::pair<DType, DType> conversions[] = {
      {DType::kInt32, DType::kFloat32}, {DType::kFloat32, DType::kInt32},
      {DType::kBool, DType::kBool},     {DType::kFloat64, DType::kFloat16},
      {DType::kUInt8, DType::kUInt8},   {DType::kFloat16, DType::kFloat32}};
  for (const auto& [in_dt, out_dt] : conversions) {
    const Tensor x = random_tensor(in_dt, {5, 3000}, Layout::kContiguous, gen_, -4, 4);
    const DeviceTensor dx = arena_.to_device(x);
    log_.record(std::string("cumsum ") + dname(in_dt) + " dtype=" + dname(out_dt),
                check_against_cpu(arena_, "aten.cumsum.default", {x, int64_t{1}, out_dt},
                                  [&](const std::vector<DeviceTensor>& o) {
                                    return launch_problem(cumsum(dx, 1, o[0], nullptr));
                                  },
                                  false, {scan_tolerance(out_dt)}));
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

}  // namespace
}  // namespace splice::cuda
