// sort / topk on the GPU against the CPU backend (suite GpuSort): both sort stably with
// PyTorch's comparator, so values and indices must be identical — every dtype, inputs full of
// ties, NaNs and -0.0 beside 0.0, lanes along the last dim and along a strided dim, strided
// outputs, one lane and two long ones (a DeviceRadixSort each) and many short ones (the
// segmented sort), and a 128k-element row (a Llama-3 vocabulary of logits). topk is checked
// against the stable sort's first k (the CPU topk orders ties as eager's heap select does;
// sort.h says why the GPU keeps index order).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "backends/cuda/sort.h"
#include "kernel_check.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

class GpuSort : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
  }

  // Random values rounded to quarters (many ties); for floats every 7th element NaN, every
  // 11th -0.0 and every 13th 0.0.
  Tensor tied_tensor(DType dt, const Shape& shape, Layout layout) {
    Tensor x = random_tensor(dt, shape, layout, gen_, -4, 4);
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = std::round(get_double(x, i) * 4) / 4;
      if (is_floating(dt)) {
        if (i % 7 == 3) v = std::nan("");
        if (i % 11 == 5) v = -0.0;
        if (i % 13 == 6) v = 0.0;
      }
      set_double(x, i, v);
    }
    return x;
  }

  // Sorts x along dim on the GPU into outputs shaped like the CPU's sort, first k per lane.
  std::string run_sort(const Tensor& x, int64_t dim, bool descending, int64_t k,
                       const std::vector<DeviceTensor>& outs) {
    const int64_t length = x.dim() == 0 ? 1 : x.size(dim < 0 ? dim + x.dim() : dim);
    const int64_t lanes = length == 0 ? 0 : x.numel() / length;
    auto bytes = sort_scratch_bytes(x.dtype(), lanes, length);
    if (!bytes.ok()) return bytes.error().message();
    const KernelScratch scratch = arena_.scratch(*bytes);
    return launch_problem(
        sort_lanes(arena_.to_device(x), dim, descending, k, outs[0], outs[1], scratch, nullptr));
  }

  DeviceArena arena_;
  CaseLog log_;
  std::mt19937 gen_{4242};
};

TEST_F(GpuSort, SortEqualsTheCpuKernelForEveryDtypeAndLayout) {
  struct SortShape {
    Shape shape;
    int64_t dim;
  };
  const SortShape shapes[] = {{{7}, 0},         {{}, 0},         {{33, 17}, 1},
                              {{33, 17}, 0},    {{4, 5, 6}, 1},  {{3, 5000}, 1},
                              {{1, 131072}, 1}, {{2, 70001}, 1}, {{0, 3}, 1}};
  const Layout layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kSliced,
                            Layout::kPermuted};
  int variant = 0;
  for (DType dt : kAllDTypes) {
    for (const SortShape& s : shapes) {
      for (bool descending : {false, true}) {
        const Layout layout = layouts[variant % 4];
        const bool strided_out = variant % 3 == 0;
        ++variant;
        const Tensor x = tied_tensor(dt, s.shape, layout);
        const int64_t k = x.dim() == 0 ? 1 : x.size(s.dim);
        log_.record(std::string("sort ") + dname(dt) + " " + shape_string(s.shape) +
                        " dim=" + std::to_string(s.dim) + (descending ? " desc " : " asc ") +
                        layout_name(layout),
                    check_against_cpu(arena_, "aten.sort.stable", {x, true, s.dim, descending},
                                      [&](const std::vector<DeviceTensor>& o) {
                                        return run_sort(x, s.dim, descending, k, o);
                                      },
                                      strided_out, {Tolerance{0, 0}}));
      }
    }
  }
}

// topk over a 128k row of float32 logits with NaNs and ties, and over many short lanes: the
// values are the CPU topk's, the indices the stable sort's first k.
TEST_F(GpuSort, TopkIsTheStableSortsFirstK) {
  struct TopkCase {
    Shape shape;
    int64_t dim;
    int64_t k;
  };
  const TopkCase cases[] = {
      {{1, 128256}, 1, 50}, {{1, 128256}, 1, 128256}, {{64, 40}, 1, 8}, {{40, 6}, 0, 3}};
  for (const TopkCase& c : cases) {
    for (bool largest : {true, false}) {
      const Tensor x = tied_tensor(DType::kFloat32, c.shape, Layout::kContiguous);
      const std::string name = "topk " + shape_string(c.shape) + " k=" + std::to_string(c.k) +
                               (largest ? " largest" : " smallest");
      std::string error;
      const std::vector<Tensor> sorted =
          cpu_reference("aten.sort.stable", {x, true, c.dim, largest}, &error);
      const std::vector<Tensor> topk =
          cpu_reference("aten.topk.default", {x, c.k, c.dim, largest, true}, &error);
      if (!error.empty()) {
        log_.record(name, error);
        continue;
      }
      std::vector<Tensor> got = {make_output(DType::kFloat32, topk[0].sizes(), false),
                                 make_output(DType::kInt64, topk[1].sizes(), false)};
      const std::vector<DeviceTensor> outs = {arena_.to_device(got[0]), arena_.to_device(got[1])};
      std::string problem = run_sort(x, c.dim, largest, c.k, outs);
      if (problem.empty()) {
        arena_.to_host(got[0]);
        arena_.to_host(got[1]);
        // The first k along dim of the CPU's stable sort, as a [.., k, ..] view of it.
        const Tensor& idx = sorted[1];
        const Tensor first_k = idx.view_as(topk[1].sizes(), idx.strides(), idx.offset());
        problem = compare(got[0], topk[0], Tolerance{0, 0});
        const std::string indices = compare(got[1], first_k, Tolerance{0, 0});
        if (!indices.empty()) problem += " indices: " + indices;
      }
      log_.record(name, problem);
    }
  }
}

}  // namespace
}  // namespace splice::cuda
