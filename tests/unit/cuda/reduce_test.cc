// Reductions on the GPU against the CPU backend (suite GpuReduce: every dtype, strided inputs,
// strided outputs, keepdim, empty and size-1 dims, > 65535 outputs, rows of 10^5..10^6
// elements with and without split scratch, NaN and ties for the order reductions), and the
// host-side planning that needs no GPU (suite CudaReducePlan).
//
// Tolerances (documented in docs/cuda.md): the GPU accumulates float32 sums in float (the CPU
// in double): |got - want| <= 2e-6 * sqrt(count) + 1e-5 * |want| (mean: the atol divided by
// count); 16-bit outputs allow one rounding step of their type on top (float16 2e-3 relative,
// bfloat16 1.6e-2). Integer, bool, max/min and index results must be exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "backends/cuda/reduce.h"
#include "backends/cuda/reduce_plan.h"
#include "kernel_check.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;
using cpu::KernelArg;

// ---- host-side planning (no GPU) --------------------------------------------------------------

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

TEST(CudaReducePlan, DimListRules) {
  auto all = reduced_dims("sum", 3, std::nullopt, true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, std::vector<bool>({true, true, true}));
  auto empty_all = reduced_dims("sum", 2, std::vector<int64_t>{}, true);
  ASSERT_TRUE(empty_all.ok());
  EXPECT_EQ(*empty_all, std::vector<bool>({true, true}));
  auto empty_none = reduced_dims("any", 2, std::vector<int64_t>{}, false);
  ASSERT_TRUE(empty_none.ok());
  EXPECT_EQ(*empty_none, std::vector<bool>({false, false}));
  auto wrapped = reduced_dims("sum", 3, std::vector<int64_t>{-1, 0}, true);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(*wrapped, std::vector<bool>({true, false, true}));
  auto twice = reduced_dims("sum", 3, std::vector<int64_t>{1, -2}, true);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(), "sum: dim 1 appears twice");
  auto range = reduced_dims("sum", 2, std::vector<int64_t>{2}, true);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.error().kind(), ErrorKind::kOutOfRange);
  EXPECT_EQ(range.error().message(), "sum: dim 2 is out of range for a tensor of rank 2");
  auto scalar = reduced_dims("sum", 0, std::vector<int64_t>{-1}, true);
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->empty());
}

TEST(CudaReducePlan, OutputShapeIsChecked) {
  const DeviceTensor in = host_view(DType::kFloat32, {4, 5, 6}, {30, 6, 1});
  const DeviceTensor bad = host_view(DType::kFloat32, {4, 6}, {6, 1});
  const DeviceTensor* outs[] = {&bad};
  auto layout = plan_reduce_layout("sum", in, {false, true, false}, true, outs, false);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.error().kind(), ErrorKind::kShapeMismatch);
  EXPECT_EQ(layout.error().message(),
            "sum: output 0 has shape [4, 6], expected [4, 1, 6] (input [4, 5, 6], keepdim=true)");
}

TEST(CudaReducePlan, LayoutMergesAndSorts) {
  // Sum over dims 0 and 2 of a contiguous [4, 5, 6]: kept dim 1 (stride 6), reduced dims 0
  // (stride 30) and 2 (stride 1) stay two dims (not adjacent in memory).
  const DeviceTensor in = host_view(DType::kFloat32, {4, 5, 6}, {30, 6, 1});
  const DeviceTensor out = host_view(DType::kFloat32, {5}, {1});
  const DeviceTensor* outs[] = {&out};
  auto layout = plan_reduce_layout("sum", in, {true, false, true}, false, outs, false);
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  EXPECT_EQ(layout->num_outputs, 5);
  EXPECT_EQ(layout->count, 24);
  EXPECT_EQ(layout->kept_sizes, Shape({5}));
  EXPECT_EQ(layout->red_sizes, Shape({4, 6}));
  EXPECT_EQ(layout->red_in_strides, Shape({30, 1}));
  // Reducing the last two dims of a contiguous [4, 5, 6] merges them into one row of 30.
  const DeviceTensor out2 = host_view(DType::kFloat32, {4, 1, 1}, {1, 1, 1});
  const DeviceTensor* outs2[] = {&out2};
  auto rows = plan_reduce_layout("sum", in, {false, true, true}, true, outs2, false);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->red_sizes, Shape({30}));
  EXPECT_EQ(rows->red_in_strides, Shape({1}));
  EXPECT_EQ(rows->kept_sizes, Shape({4}));
  EXPECT_EQ(rows->kept_out_strides[0], Shape({1}));
  // A transposed input keeps argmax's logical order for the reduced dims.
  const DeviceTensor t = host_view(DType::kFloat32, {3, 4}, {1, 3});
  const DeviceTensor idx = host_view(DType::kInt64, {}, {});
  const DeviceTensor* outs3[] = {&idx};
  auto arg = plan_reduce_layout("argmax", t, {true, true}, false, outs3, true);
  ASSERT_TRUE(arg.ok());
  EXPECT_EQ(arg->red_sizes, Shape({3, 4}));
  EXPECT_EQ(arg->red_in_strides, Shape({1, 3}));
}

TEST(CudaReducePlan, ScheduleShapes) {
  ReduceLayout rows;  // 100000 rows of 64 contiguous elements
  rows.kept_sizes = {100000};
  rows.kept_in_strides = {64};
  rows.kept_out_strides[0] = {1};
  rows.kept_out_strides[1] = {0};
  rows.red_sizes = {64};
  rows.red_in_strides = {1};
  rows.num_outputs = 100000;
  rows.count = 64;
  ReduceSchedule s = plan_reduce_schedule(rows, 132, 4, 1 << 20);
  EXPECT_EQ(s.mode, ReduceSchedule::Mode::kAlongReduction);
  EXPECT_EQ(s.block_x, 32);
  EXPECT_EQ(s.block_y, 8);
  EXPECT_EQ(s.splits, 1);
  ReduceLayout one = rows;  // one row of 10^6 elements: split across blocks
  one.kept_sizes.clear();
  one.kept_in_strides.clear();
  one.kept_out_strides[0].clear();
  one.kept_out_strides[1].clear();
  one.num_outputs = 1;
  one.count = 1000000;
  one.red_sizes = {1000000};
  s = plan_reduce_schedule(one, 132, 4, 1 << 20);
  EXPECT_EQ(s.block_x, 512);
  EXPECT_GT(s.splits, 1);
  EXPECT_GE(s.splits * s.split_chunk, one.count);
  EXPECT_LT((s.splits - 1) * s.split_chunk, one.count);
  s = plan_reduce_schedule(one, 132, 4, 0);  // no scratch: one block per output
  EXPECT_EQ(s.splits, 1);
  ReduceLayout cols;  // sum over dim 0 of [4096, 8]: threads along the outputs
  cols.kept_sizes = {8};
  cols.kept_in_strides = {1};
  cols.kept_out_strides[0] = {1};
  cols.kept_out_strides[1] = {0};
  cols.red_sizes = {4096};
  cols.red_in_strides = {8};
  cols.num_outputs = 8;
  cols.count = 4096;
  s = plan_reduce_schedule(cols, 132, 4, 1 << 20);
  EXPECT_EQ(s.mode, ReduceSchedule::Mode::kAlongOutputs);
  EXPECT_EQ(s.block_x, 8);
  EXPECT_EQ(s.block_y, 32);
  EXPECT_GE(s.block_x * s.block_y, 32);
}

TEST(CudaReducePlan, MergeDims) {
  std::vector<int64_t> sizes = {2, 1, 3, 4};
  std::vector<int64_t> a = {12, 99, 4, 1}, b = {0, 5, 4, 1};
  merge_dims(sizes, {&a, &b});
  EXPECT_EQ(sizes, std::vector<int64_t>({2, 12}));
  EXPECT_EQ(a, std::vector<int64_t>({12, 1}));
  EXPECT_EQ(b, std::vector<int64_t>({0, 1}));
}

// ---- GPU cases --------------------------------------------------------------------------------

class GpuReduce : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
  }
  DeviceArena arena_;
  CaseLog log_;
  std::mt19937 gen_{1234};
};

struct Shaped {
  Shape shape;
  std::optional<std::vector<int64_t>> dims;
};

const std::vector<Shaped>& shapes() {
  static const std::vector<Shaped> kShapes = {
      {{7}, std::vector<int64_t>{0}},          {{1}, std::nullopt},
      {{0}, std::vector<int64_t>{0}},          {{3, 0}, std::vector<int64_t>{1}},
      {{0, 5}, std::vector<int64_t>{1}},       {{33, 17}, std::vector<int64_t>{1}},
      {{33, 17}, std::vector<int64_t>{0}},     {{33, 17}, std::nullopt},
      {{4, 5, 6}, std::vector<int64_t>{0, 2}}, {{4, 5, 6}, std::vector<int64_t>{-2}},
      {{4, 5, 6}, std::vector<int64_t>{}},     {{2, 3, 4, 5}, std::vector<int64_t>{1, 3}},
      {{1, 9, 1}, std::vector<int64_t>{2}},    {{70001, 3}, std::vector<int64_t>{1}},
      {{3, 100003}, std::vector<int64_t>{1}},  {{257, 513}, std::vector<int64_t>{0}},
  };
  return kShapes;
}

KernelArg dims_arg(const std::optional<std::vector<int64_t>>& dims) {
  if (!dims) return std::monostate{};
  return *dims;
}

int64_t reduced_count(const Shape& shape, const std::optional<std::vector<int64_t>>& dims) {
  if (!dims || dims->empty()) return shape_numel(shape);
  int64_t c = 1;
  for (int64_t d : *dims) c *= shape[d < 0 ? d + shape.size() : d];
  return c;
}

Tolerance sum_tolerance(DType out, int64_t count, bool mean) {
  Tolerance t = tolerance_for(out);
  if (!is_floating(out)) return t;
  double atol = 2e-6 * std::sqrt(static_cast<double>(std::max<int64_t>(count, 1))) + t.atol;
  if (out == DType::kFloat64)
    atol = 1e-10 * std::sqrt(static_cast<double>(std::max<int64_t>(count, 1)));
  if (mean) atol /= static_cast<double>(std::max<int64_t>(count, 1));
  return {atol, t.rtol};
}

const Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kSliced,
                           Layout::kPermuted};

std::string label(const char* op, DType dt, const Shaped& s, Layout l, bool keepdim) {
  std::string dims = "None";
  if (s.dims) {
    dims = "[";
    for (int64_t d : *s.dims) dims += std::to_string(d) + ",";
    dims += "]";
  }
  return std::string(op) + " " + dname(dt) + " " + shape_string(s.shape) + " dims=" + dims + " " +
         layout_name(l) + (keepdim ? " keepdim" : "");
}

TEST_F(GpuReduce, SumMeanProdEveryDtype) {
  const KernelScratch scratch = arena_.scratch(1 << 20);
  int variant = 0;
  for (DType dt : kAllDTypes) {
    for (const Shaped& s : shapes()) {
      const Layout layout = kLayouts[variant % 4];
      const bool keepdim = variant % 3 == 0, strided_out = variant % 2 == 0;
      const KernelScratch sc = variant % 5 == 4 ? KernelScratch{} : scratch;
      ++variant;
      const Tensor x = random_tensor(dt, s.shape, layout, gen_, -3, 3);
      const DeviceTensor dx = arena_.to_device(x);
      const int64_t count = reduced_count(s.shape, s.dims);
      const DType sum_dt = is_floating(dt) ? dt : DType::kInt64;
      log_.record(
          label("sum", dt, s, layout, keepdim),
          check_against_cpu(
              arena_, "aten.sum.dim_IntList", {x, dims_arg(s.dims), keepdim, std::monostate{}},
              [&](const std::vector<DeviceTensor>& o) {
                return launch_problem(reduce_sum(dx, s.dims, keepdim, o[0], sc, nullptr));
              },
              strided_out, {sum_tolerance(sum_dt, count, false)}));
      if (is_floating(dt)) {
        log_.record(
            label("mean", dt, s, layout, keepdim),
            check_against_cpu(
                arena_, "aten.mean.dim", {x, dims_arg(s.dims), keepdim, std::monostate{}},
                [&](const std::vector<DeviceTensor>& o) {
                  return launch_problem(reduce_mean(dx, s.dims, keepdim, o[0], sc, nullptr));
                },
                strided_out, {sum_tolerance(dt, count, true)}));
      }
      // prod over one dim of at most ~40 elements (values near 1 keep the product finite).
      if (s.dims && s.dims->size() == 1 && count <= 40) {
        const Tensor px = random_tensor(dt, s.shape, layout, gen_, is_floating(dt) ? 0.5 : 1,
                                        is_floating(dt) ? 1.5 : 3);
        const DeviceTensor dpx = arena_.to_device(px);
        const int64_t dim = (*s.dims)[0];
        log_.record(
            label("prod", dt, s, layout, keepdim),
            check_against_cpu(arena_, "aten.prod.dim_int", {px, dim, keepdim, std::monostate{}},
                              [&](const std::vector<DeviceTensor>& o) {
                                return launch_problem(reduce_prod(dpx, std::vector<int64_t>{dim},
                                                                  keepdim, o[0], sc, nullptr));
                              },
                              strided_out, {Tolerance{1e-5, 4 * tolerance_for(sum_dt).rtol}}));
      }
    }
  }
  // prod over everything, and sums with an explicit dtype (typed and run-time-dtype loaders).
  struct DtypeCase {
    DType in, out;
  };
  const DtypeCase dtype_cases[] = {
      {DType::kFloat16, DType::kFloat32}, {DType::kBFloat16, DType::kFloat32},
      {DType::kFloat32, DType::kFloat64}, {DType::kFloat32, DType::kFloat16},
      {DType::kInt32, DType::kFloat32},   {DType::kFloat32, DType::kInt64},
      {DType::kInt64, DType::kInt32},     {DType::kBool, DType::kBool},
      {DType::kUInt8, DType::kInt64},     {DType::kFloat64, DType::kBFloat16},
  };
  for (const DtypeCase& c : dtype_cases) {
    const Shaped s{{37, 129}, std::vector<int64_t>{1}};
    const Tensor x = random_tensor(c.in, s.shape, Layout::kTransposed, gen_, -5, 5);
    const DeviceTensor dx = arena_.to_device(x);
    log_.record(label("sum dtype=", c.in, s, Layout::kTransposed, false) + " -> " + dname(c.out),
                check_against_cpu(arena_, "aten.sum.dim_IntList", {x, s.dims.value(), false, c.out},
                                  [&](const std::vector<DeviceTensor>& o) {
                                    return launch_problem(
                                        reduce_sum(dx, s.dims, false, o[0], scratch, nullptr));
                                  },
                                  false, {sum_tolerance(c.out, 129, false)}));
    const Tensor px = random_tensor(c.in, {5, 3}, Layout::kContiguous, gen_, 1, 2);
    const DeviceTensor dpx = arena_.to_device(px);
    log_.record(std::string("prod.default dtype=") + dname(c.in) + " -> " + dname(c.out),
                check_against_cpu(arena_, "aten.prod.default", {px, c.out},
                                  [&](const std::vector<DeviceTensor>& o) {
                                    return launch_problem(reduce_prod(dpx, std::nullopt, false,
                                                                      o[0], scratch, nullptr));
                                  },
                                  false, {Tolerance{1e-5, 4 * tolerance_for(c.out).rtol}}));
  }
  // A mean over 10^6 elements (split across blocks) and the same without scratch.
  const Tensor big = random_tensor(DType::kFloat32, {1 << 20}, Layout::kContiguous, gen_);
  const DeviceTensor dbig = arena_.to_device(big);
  for (const KernelScratch& sc : {scratch, KernelScratch{}}) {
    log_.record(std::string("mean f32 [2^20] scratch=") + std::to_string(sc.bytes),
                check_against_cpu(arena_, "aten.mean.default", {big, std::monostate{}},
                                  [&](const std::vector<DeviceTensor>& o) {
                                    return launch_problem(
                                        reduce_mean(dbig, std::nullopt, false, o[0], sc, nullptr));
                                  },
                                  false, {sum_tolerance(DType::kFloat32, 1 << 20, true)}));
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

// Puts NaN at a few positions of a float tensor (the first of them is what argmax reports).
void sprinkle_nan(const Tensor& t, std::mt19937& gen) {
  if (!is_floating(t.dtype()) || t.numel() == 0) return;
  std::uniform_int_distribution<int64_t> pick(0, t.numel() - 1);
  for (int i = 0; i < 3; ++i) set_double(t, pick(gen), std::nan(""));
}

TEST_F(GpuReduce, ExtremaAndIndices) {
  const KernelScratch scratch = arena_.scratch(1 << 20);
  int variant = 0;
  for (DType dt : kAllDTypes) {
    for (const Shaped& s : shapes()) {
      const Layout layout = kLayouts[variant % 4];
      const bool keepdim = variant % 3 == 1, strided_out = variant % 2 == 1;
      const bool with_nan = variant % 4 == 3;
      ++variant;
      // Small integer range: many ties, so the first-occurrence rule is exercised.
      const Tensor x = random_tensor(dt, s.shape, layout, gen_, -4, 4);
      if (with_nan) sprinkle_nan(x, gen_);
      const DeviceTensor dx = arena_.to_device(x);
      const std::string tag = with_nan ? " nan" : "";
      const bool has_empty = [&] {
        if (!s.dims || s.dims->empty()) return shape_numel(s.shape) == 0;
        for (int64_t d : *s.dims)
          if (s.shape[d < 0 ? d + s.shape.size() : d] == 0) return true;
        return false;
      }();
      for (bool is_max : {true, false}) {
        const char* name = is_max ? "amax" : "amin";
        if (has_empty) {
          const Tensor out = make_output(dt, {1}, false);
          const auto r =
              reduce_extreme(dx, s.dims, keepdim, is_max, arena_.to_device(out), scratch, nullptr);
          log_.record(label(name, dt, s, layout, keepdim) + " (empty: error)",
                      r.ok() ? "expected an error for an empty reduction" : "");
          continue;
        }
        const std::vector<int64_t> list = s.dims.value_or(std::vector<int64_t>{});
        log_.record(label(name, dt, s, layout, keepdim) + tag,
                    check_against_cpu(arena_, is_max ? "aten.amax.default" : "aten.amin.default",
                                      {x, list, keepdim},
                                      [&](const std::vector<DeviceTensor>& o) {
                                        return launch_problem(reduce_extreme(
                                            dx, list, keepdim, is_max, o[0], scratch, nullptr));
                                      },
                                      strided_out, {Tolerance{}}));
        if (s.dims && s.dims->size() == 1) {
          const int64_t dim = (*s.dims)[0];
          log_.record(
              label(is_max ? "max.dim" : "min.dim", dt, s, layout, keepdim) + tag,
              check_against_cpu(arena_, is_max ? "aten.max.dim" : "aten.min.dim", {x, dim, keepdim},
                                [&](const std::vector<DeviceTensor>& o) {
                                  return launch_problem(reduce_arg_extreme(
                                      dx, dim, keepdim, is_max, &o[0], o[1], scratch, nullptr));
                                },
                                strided_out, {Tolerance{}}));
          if (dt != DType::kBool) {
            log_.record(
                label(is_max ? "argmax" : "argmin", dt, s, layout, keepdim) + tag,
                check_against_cpu(arena_, is_max ? "aten.argmax.default" : "aten.argmin.default",
                                  {x, dim, keepdim},
                                  [&](const std::vector<DeviceTensor>& o) {
                                    return launch_problem(reduce_arg_extreme(
                                        dx, dim, keepdim, is_max, nullptr, o[0], scratch, nullptr));
                                  },
                                  strided_out, {Tolerance{}}));
          }
        }
        if (!s.dims && dt != DType::kBool) {
          log_.record(
              label(is_max ? "argmax flat" : "argmin flat", dt, s, layout, keepdim) + tag,
              check_against_cpu(arena_, is_max ? "aten.argmax.default" : "aten.argmin.default",
                                {x, std::monostate{}, keepdim},
                                [&](const std::vector<DeviceTensor>& o) {
                                  return launch_problem(reduce_arg_extreme(dx, std::nullopt,
                                                                           keepdim, is_max, nullptr,
                                                                           o[0], scratch, nullptr));
                                },
                                strided_out, {Tolerance{}}));
        }
      }
      // any / all (.dims with the list; [] reduces nothing; None reduces everything).
      for (bool all : {true, false}) {
        const Tensor bx = random_tensor(dt, s.shape, layout, gen_, all ? 0.2 : -0.2, all ? 3 : 0.6);
        const DeviceTensor dbx = arena_.to_device(bx);
        log_.record(label(all ? "all" : "any", dt, s, layout, keepdim),
                    check_against_cpu(arena_, all ? "aten.all.dims" : "aten.any.dims",
                                      {bx, dims_arg(s.dims), keepdim},
                                      [&](const std::vector<DeviceTensor>& o) {
                                        return launch_problem(reduce_any_all(
                                            dbx, s.dims, keepdim, all, o[0], scratch, nullptr));
                                      },
                                      strided_out, {Tolerance{}}));
      }
    }
  }
  // A long row whose extreme is the last element, and a NaN deep in a 10^6 row (split path).
  const Tensor row = random_tensor(DType::kFloat32, {1, 1000003}, Layout::kContiguous, gen_);
  set_double(row, 1000002, 5.0);
  const DeviceTensor drow = arena_.to_device(row);
  log_.record(
      "argmax f32 [1, 1000003] last",
      check_against_cpu(arena_, "aten.max.dim", {row, int64_t{1}, false},
                        [&](const std::vector<DeviceTensor>& o) {
                          return launch_problem(reduce_arg_extreme(drow, int64_t{1}, false, true,
                                                                   &o[0], o[1], scratch, nullptr));
                        },
                        false, {Tolerance{}}));
  const Tensor nanrow = random_tensor(DType::kBFloat16, {1000003}, Layout::kContiguous, gen_);
  set_double(nanrow, 777777, std::nan(""));
  set_double(nanrow, 900000, std::nan(""));
  const DeviceTensor dnan = arena_.to_device(nanrow);
  log_.record(
      "argmin bf16 [1000003] with NaN",
      check_against_cpu(arena_, "aten.argmin.default", {nanrow, std::monostate{}, false},
                        [&](const std::vector<DeviceTensor>& o) {
                          return launch_problem(reduce_arg_extreme(
                              dnan, std::nullopt, false, false, nullptr, o[0], scratch, nullptr));
                        },
                        false, {Tolerance{}}));
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuReduce, VarStdNorm) {
  const KernelScratch scratch = arena_.scratch(1 << 20);
  const DType floats[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  int variant = 0;
  for (DType dt : floats) {
    for (const Shaped& s : shapes()) {
      const Layout layout = kLayouts[variant % 4];
      const bool keepdim = variant % 3 == 2, strided_out = variant % 2 == 0;
      ++variant;
      const Tensor x = random_tensor(dt, s.shape, layout, gen_, -2, 3);
      const DeviceTensor dx = arena_.to_device(x);
      const int64_t count = reduced_count(s.shape, s.dims);
      Tolerance tol = tolerance_for(dt);
      if (dt == DType::kFloat32) tol = {1e-5, 2e-5};
      for (double correction : {1.0, 0.0, 2.5}) {
        const std::string c = " correction=" + std::to_string(correction);
        log_.record(label("var", dt, s, layout, keepdim) + c,
                    check_against_cpu(
                        arena_, "aten.var.correction", {x, dims_arg(s.dims), correction, keepdim},
                        [&](const std::vector<DeviceTensor>& o) {
                          return launch_problem(reduce_var(dx, s.dims, keepdim, correction, false,
                                                           o[0], nullptr, scratch, nullptr));
                        },
                        strided_out, {tol}));
      }
      log_.record(
          label("var_mean", dt, s, layout, keepdim),
          check_against_cpu(arena_, "aten.var_mean.correction",
                            {x, dims_arg(s.dims), std::monostate{}, keepdim},
                            [&](const std::vector<DeviceTensor>& o) {
                              return launch_problem(reduce_var(dx, s.dims, keepdim, 1.0, false,
                                                               o[0], &o[1], scratch, nullptr));
                            },
                            strided_out, {tol, sum_tolerance(dt, count, true)}));
    }
  }
  // std_mean and the vector norms are decomposed before any backend (var_mean and sqrt;
  // abs/pow/sum/amax/amin): no CPU kernel to compare with, and the runtime never calls the
  // device's std and norm reductions (docs/cuda.md).
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuReduce, ErrorsNameTheProblem) {
  const Tensor x = random_tensor(DType::kFloat32, {4, 5}, Layout::kContiguous, gen_);
  const DeviceTensor dx = arena_.to_device(x);
  const Tensor out = make_output(DType::kFloat32, {4, 5}, false);
  const DeviceTensor dout = arena_.to_device(out);
  auto r = reduce_sum(dx, std::vector<int64_t>{1}, false, dout, {}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "sum: output 0 has shape [4, 5], expected [4] (input [4, 5], keepdim=false)");
  const Tensor ix = random_tensor(DType::kInt32, {4}, Layout::kContiguous, gen_);
  const Tensor iout = make_output(DType::kInt64, {}, false);
  auto m =
      reduce_mean(arena_.to_device(ix), std::nullopt, false, arena_.to_device(iout), {}, nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(), "mean: needs a floating point dtype, got i64");
  const Tensor bx = random_tensor(DType::kBool, {4}, Layout::kContiguous, gen_);
  auto a = reduce_arg_extreme(arena_.to_device(bx), int64_t{0}, false, true, nullptr,
                              arena_.to_device(iout), {}, nullptr);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message(), "argmax: not implemented for bool tensors");
  auto v = reduce_var(arena_.to_device(ix), std::nullopt, false, 1.0, false, arena_.to_device(iout),
                      nullptr, {}, nullptr);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message(), "var: std and var only support floating point dtypes, got i32");
}

}  // namespace
}  // namespace splice::cuda
