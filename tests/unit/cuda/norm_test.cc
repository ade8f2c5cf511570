// softmax / log_softmax, layer norm, RMS norm and group norm on the GPU against the CPU backend
// (suite GpuNorm): every float dtype, half_to_float and dtype-converting forms, strided inputs
// and outputs, warp/block/column kernels (short, long and strided lanes, > 65535 rows), NaN,
// +inf and all -inf lanes, mixed-dtype weights; and the lane planner without a GPU
// (CudaLanePlan). Tolerances: float32 1e-5 relative + 1e-5 absolute; float64 1e-12; float16
// 2e-3 + 1e-3; bfloat16 1.6e-2 + 8e-3 (one rounding of the output; statistics in float).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "backends/cuda/lane_plan.h"
#include "backends/cuda/norm.h"
#include "backends/cuda/softmax.h"
#include "kernel_check.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;
using cpu::KernelArg;

DeviceTensor host_view(DType dtype, const Shape& sizes, const Shape& strides) {
  DeviceTensor t;
  t.dtype = dtype;
  t.rank = static_cast<int>(sizes.size());
  for (int i = 0; i < t.rank; ++i) {
    t.sizes[i] = sizes[i];
    t.strides[i] = strides[i];
  }
  return t;
}

TEST(CudaLanePlan, MergesOtherDimsAndFindsColumns) {
  // softmax over dim 1 of a contiguous [4, 5, 6]: lanes over dims 0 and 2 (not mergeable).
  const DeviceTensor x = host_view(DType::kFloat32, {4, 5, 6}, {30, 6, 1});
  const DeviceTensor* ops[] = {&x, &x};
  auto plan = plan_lanes("softmax", ops, 1);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_EQ(plan->lanes, 24);
  EXPECT_EQ(plan->length, 5);
  EXPECT_EQ(plan->elem_strides[0], 6);
  EXPECT_EQ(plan->lane_sizes, Shape({4, 6}));
  EXPECT_TRUE(plan->lanes_contiguous);
  // the last dim: lanes merge into one dim of 20, the lane's elements are contiguous.
  auto last = plan_lanes("softmax", ops, -1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->lane_sizes, Shape({20}));
  EXPECT_EQ(last->lane_strides[0], Shape({6}));
  EXPECT_FALSE(last->lanes_contiguous);
  const DeviceTensor y = host_view(DType::kFloat32, {4, 6}, {6, 1});
  const DeviceTensor* bad[] = {&x, &y};
  auto mismatch = plan_lanes("softmax", bad, 0);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().message(), "softmax: operand 1 has shape [4, 6], expected [4, 5, 6]");
  auto range = plan_lanes("softmax", ops, 3);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.error().message(), "softmax: dim 3 is out of range for a tensor of rank 3");
  const DeviceTensor s = host_view(DType::kFloat32, {}, {});
  const DeviceTensor* scalar[] = {&s, &s};
  auto zero_d = plan_lanes("softmax", scalar, -1);
  ASSERT_TRUE(zero_d.ok());
  EXPECT_EQ(zero_d->lanes, 1);
  EXPECT_EQ(zero_d->length, 1);
}

const DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
const Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kSliced,
                           Layout::kPermuted};

Tolerance norm_tolerance(DType dt) {
  switch (dt) {
    case DType::kFloat32:
      return {1e-5, 1e-5};
    case DType::kFloat64:
      return {1e-12, 1e-12};
    case DType::kFloat16:
      return {1e-3, 2e-3};
    default:
      return {8e-3, 1.6e-2};
  }
}

struct NormShape {
  Shape shape;
  Shape normalized;
};

class GpuNorm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
  }
  // layer_norm, native_layer_norm, rms_norm and _fused_rms_norm over `shapes` against the CPU
  // backend: every float dtype, input layouts, strided outputs, weight and bias or not.
  void check_row_norms(std::span<const NormShape> shapes) {
    int variant = 0;
    for (DType dt : kFloats) {
      const bool reduced = dt == DType::kFloat16 || dt == DType::kBFloat16;
      for (const NormShape& s : shapes) {
        const Layout layout = kLayouts[variant % 4];
        const bool strided_out = variant % 2 == 1;
        const int params = variant % 3;  // 0: weight and bias, 1: none, 2: weight only
        const DType wdt = reduced && variant % 2 == 0 ? DType::kFloat32 : dt;
        ++variant;
        const Tensor x = random_tensor(dt, s.shape, layout, gen_, -2, 3);
        const Tensor w = random_tensor(wdt, s.normalized, Layout::kContiguous, gen_, 0.5, 1.5);
        const Tensor b = random_tensor(wdt, s.normalized, Layout::kSliced, gen_, -1, 1);
        const DeviceTensor dx = arena_.to_device(x), dw = arena_.to_device(w),
                           db = arena_.to_device(b);
        const KernelArg warg = params != 1 ? KernelArg{w} : KernelArg{std::monostate{}};
        const KernelArg barg = params == 0 ? KernelArg{b} : KernelArg{std::monostate{}};
        const DeviceTensor* wp = params != 1 ? &dw : nullptr;
        const DeviceTensor* bp = params == 0 ? &db : nullptr;
        const std::string name = std::string(dname(dt)) + " " + shape_string(s.shape) + " norm " +
                                 shape_string(s.normalized) + " " + layout_name(layout) +
                                 " weight " + (wp ? dname(wdt) : "none") + (bp ? " bias" : "");
        const double eps = 1e-5;
        const Tolerance tol = norm_tolerance(dt);
        log_.record(
            "native_layer_norm " + name,
            check_against_cpu(arena_, "aten.native_layer_norm.default",
                              {x, s.normalized, warg, barg, eps},
                              [&](const std::vector<DeviceTensor>& o) {
                                return launch_problem(layer_norm(dx, s.normalized, wp, bp, eps,
                                                                 o[0], &o[1], &o[2], nullptr));
                              },
                              strided_out, {tol}));
        log_.record("layer_norm " + name,
                    check_against_cpu(
                        arena_, "aten.layer_norm.default", {x, s.normalized, warg, barg, eps, true},
                        [&](const std::vector<DeviceTensor>& o) {
                          return launch_problem(layer_norm(dx, s.normalized, wp, bp, eps, o[0],
                                                           nullptr, nullptr, nullptr));
                        },
                        strided_out, {tol}));
        for (std::optional<double> e : {std::optional<double>(), std::optional<double>(1e-6)}) {
          const KernelArg earg = e ? KernelArg{*e} : KernelArg{std::monostate{}};
          const std::string en = e ? " eps=1e-6" : " eps=None";
          log_.record(
              "rms_norm " + name + en,
              check_against_cpu(arena_, "aten.rms_norm.default", {x, s.normalized, warg, earg},
                                [&](const std::vector<DeviceTensor>& o) {
                                  return launch_problem(
                                      rms_norm(dx, s.normalized, wp, e, o[0], nullptr, nullptr));
                                },
                                strided_out, {tol}));
          log_.record(
              "_fused_rms_norm " + name + en,
              check_against_cpu(
                  arena_, "aten._fused_rms_norm.default", {x, s.normalized, warg, earg},
                  [&](const std::vector<DeviceTensor>& o) {
                    return launch_problem(rms_norm(dx, s.normalized, wp, e, o[0], &o[1], nullptr));
                  },
                  strided_out,
                  {tol,
                   norm_tolerance(dt == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32)}));
        }
      }
    }
  }

  DeviceArena arena_;
  CaseLog log_;
  std::mt19937 gen_{777};
};

struct SoftmaxShape {
  Shape shape;
  int64_t dim;
};

TEST_F(GpuNorm, SoftmaxEveryForm) {
  const SoftmaxShape shapes[] = {
      {{7}, 0},          {{}, 0},        {{33, 17}, 1},   {{33, 17}, 0},   {{4, 5, 6}, 1},
      {{2, 3, 1000}, 2}, {{3, 5000}, 1}, {{3, 5000}, -2}, {{70001, 5}, 1}, {{16, 64, 1024}, 1},
      {{0, 5}, 1},       {{5, 0}, 1},    {{2, 1, 3}, 1},
  };
  int variant = 0;
  for (DType dt : kFloats) {
    for (const SoftmaxShape& s : shapes) {
      for (bool log : {false, true}) {
        const Layout layout = kLayouts[variant % 4];
        const bool strided_out = variant % 3 == 0;
        ++variant;
        const Tensor x = random_tensor(dt, s.shape, layout, gen_, -4, 4);
        const DeviceTensor dx = arena_.to_device(x);
        const std::string name = std::string(log ? "log_softmax " : "softmax ") + dname(dt) + " " +
                                 shape_string(s.shape) + " dim=" + std::to_string(s.dim) + " " +
                                 layout_name(layout);
        const auto launch = [&](const std::vector<DeviceTensor>& o) {
          return launch_problem(softmax(dx, s.dim, log, o[0], nullptr));
        };
        log_.record(name, check_against_cpu(
                              arena_, log ? "aten._log_softmax.default" : "aten._softmax.default",
                              {x, s.dim, false}, launch, strided_out, {norm_tolerance(dt)}));
        if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
          log_.record(
              name + " half_to_float",
              check_against_cpu(arena_, log ? "aten._log_softmax.default" : "aten._softmax.default",
                                {x, s.dim, true}, launch, strided_out,
                                {norm_tolerance(DType::kFloat32)}));
        }
      }
    }
  }
  // softmax.int with a dtype: the input converted first (narrowing and widening).
  const std::pair<DType, DType> conversions[] = {{DType::kFloat32, DType::kFloat16},
                                                 {DType::kFloat64, DType::kFloat32},
                                                 {DType::kBFloat16, DType::kFloat64},
                                                 {DType::kFloat16, DType::kBFloat16}};
  for (const auto& [in_dt, out_dt] : conversions) {
    const Tensor x = random_tensor(in_dt, {9, 130}, Layout::kContiguous, gen_, -4, 4);
    const DeviceTensor dx = arena_.to_device(x);
    for (bool log : {false, true}) {
      log_.record(std::string(log ? "log_softmax.int " : "softmax.int ") + dname(in_dt) + " -> " +
                      dname(out_dt),
                  check_against_cpu(arena_, log ? "aten.log_softmax.int" : "aten.softmax.int",
                                    {x, int64_t{1}, out_dt},
                                    [&](const std::vector<DeviceTensor>& o) {
                                      return launch_problem(softmax(dx, 1, log, o[0], nullptr));
                                    },
                                    false, {norm_tolerance(out_dt)}));
    }
  }
  // Special lanes: all -inf, one +inf, a NaN, some -inf (masked keys), large values.
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : kFloats) {
    for (int64_t length : {int64_t{6}, int64_t{3000}}) {
      const Tensor x = random_tensor(dt, {5, length}, Layout::kContiguous, gen_, -3, 3);
      for (int64_t j = 0; j < length; ++j) set_double(x, 0 * length + j, -inf);
      set_double(x, 1 * length + length / 2, inf);
      set_double(x, 2 * length + length - 1, std::nan(""));
      for (int64_t j = 0; j < length; j += 2) set_double(x, 3 * length + j, -inf);
      for (int64_t j = 0; j < length; ++j) set_double(x, 4 * length + j, 1000.0 + j % 7);
      const DeviceTensor dx = arena_.to_device(x);
      for (bool log : {false, true}) {
        log_.record(
            std::string(log ? "log_softmax" : "softmax") + " special lanes " + dname(dt) +
                " length " + std::to_string(length),
            check_against_cpu(arena_, log ? "aten._log_softmax.default" : "aten._softmax.default",
                              {x, int64_t{1}, false},
                              [&](const std::vector<DeviceTensor>& o) {
                                return launch_problem(softmax(dx, 1, log, o[0], nullptr));
                              },
                              false, {norm_tolerance(dt)}));
      }
    }
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuNorm, LayerNormAndRmsNorm) {
  const NormShape shapes[] = {
      {{4, 7}, {7}}, {{2, 3, 8}, {3, 8}}, {{70001, 16}, {16}},    {{3, 5000}, {5000}},
      {{5}, {5}},    {{0, 6}, {6}},       {{2, 2, 1100}, {1100}},
  };
  check_row_norms(shapes);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

// Rows of at most 1024 columns (a warp per row): a ViT's 768, the 1024 limit, rows ending
// part-way through a lane's last pass, a two-dim normalized shape. Small enough for the host
// emulation (tests/cuda_emulation/run.sh).
TEST_F(GpuNorm, RowsOfAtMost1024Columns) {
  const NormShape shapes[] = {
      {{6, 768}, {768}},       {{3, 1024}, {1024}}, {{5, 257}, {257}},
      {{2, 4, 125}, {4, 125}}, {{4, 7}, {7}},
  };
  check_row_norms(shapes);
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

struct GroupShape {
  Shape shape;
  int64_t groups;
};

TEST_F(GpuNorm, GroupNorm) {
  const GroupShape shapes[] = {{{2, 6, 5}, 3}, {{2, 4, 8, 8}, 2}, {{3, 32, 40, 40}, 8}, {{1, 4}, 2},
                               {{0, 4, 3}, 2}, {{2, 6, 7}, 6},    {{1, 2, 3000}, 1}};
  int variant = 0;
  for (DType dt : kFloats) {
    for (const GroupShape& s : shapes) {
      const Layout layout = kLayouts[variant % 4];
      const bool strided_out = variant % 2 == 0;
      const bool affine = variant % 3 != 1;
      ++variant;
      const int64_t n = s.shape[0], c = s.shape[1];
      int64_t hxw = 1;
      for (size_t d = 2; d < s.shape.size(); ++d) hxw *= s.shape[d];
      const Tensor x = random_tensor(dt, s.shape, layout, gen_, -2, 3);
      const Tensor w = random_tensor(dt, {c}, Layout::kSliced, gen_, 0.5, 1.5);
      const Tensor b = random_tensor(dt, {c}, Layout::kContiguous, gen_, -1, 1);
      const DeviceTensor dx = arena_.to_device(x), dw = arena_.to_device(w),
                         db = arena_.to_device(b);
      const KernelArg warg = affine ? KernelArg{w} : KernelArg{std::monostate{}};
      const KernelArg barg = affine ? KernelArg{b} : KernelArg{std::monostate{}};
      const DeviceTensor* wp = affine ? &dw : nullptr;
      const DeviceTensor* bp = affine ? &db : nullptr;
      const std::string name = std::string(dname(dt)) + " " + shape_string(s.shape) +
                               " groups=" + std::to_string(s.groups) + " " + layout_name(layout) +
                               (affine ? " affine" : "");
      log_.record(
          "native_group_norm " + name,
          check_against_cpu(arena_, "aten.native_group_norm.default",
                            {x, warg, barg, n, c, hxw, s.groups, 1e-5},
                            [&](const std::vector<DeviceTensor>& o) {
                              return launch_problem(group_norm(dx, wp, bp, n, c, hxw, s.groups,
                                                               1e-5, o[0], &o[1], &o[2], nullptr));
                            },
                            strided_out, {norm_tolerance(dt)}));
      // aten.group_norm is decomposed into native_group_norm before any backend (no CPU
      // kernel to compare with); native_group_norm above runs the same device function.
    }
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuNorm, ErrorsNameTheProblem) {
  const Tensor x = random_tensor(DType::kFloat32, {4, 6}, Layout::kContiguous, gen_);
  const Tensor out = make_output(DType::kFloat32, {4, 6}, false);
  const DeviceTensor dx = arena_.to_device(x), dout = arena_.to_device(out);
  const Shape wrong = {5};
  auto r = layer_norm(dx, wrong, nullptr, nullptr, 1e-5, dout, nullptr, nullptr, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "native_layer_norm: normalized_shape [5] does not match the trailing dims of [4, 6]");
  auto g = group_norm(dx, nullptr, nullptr, 4, 6, 1, 4, 1e-5, dout, nullptr, nullptr, nullptr);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message(),
            "native_group_norm: expected number of channels in input to be divisible by "
            "num_groups, but got input of shape [4, 6] and num_groups=4");
  const Tensor i = random_tensor(DType::kInt32, {4, 6}, Layout::kContiguous, gen_);
  auto s = softmax(arena_.to_device(i), 1, false, dout, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "softmax: expects a floating point tensor, got i32");
}

}  // namespace
}  // namespace splice::cuda
