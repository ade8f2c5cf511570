// The RMSNorm group's kernel (norm.h's fused_rms_norm; plan/norm_fusion.h) on the GPU against
// the CPU backend running the exported chain op by op (add, _to_copy, mul, mean.dim, add,
// rsqrt, mul, _to_copy, mul), suite GpuNormFusion: float16, bfloat16 and float32 models,
// statistics in float32 (the upcasting models) or in the model's dtype, a float32 weight on a
// float16 model, with and without the residual add and the weight, strided inputs and outputs,
// rows of a warp (<= 1024) and of a block (> 1024, not a multiple of the block). The residual
// sum must be bit for bit the CPU's (one rounding of one add); the norm within two roundings
// of the output dtype (the sum of squares is added in another order). gpu_norm_group_test.cc
// runs the whole path. Host emulation: tests/cuda_emulation/run.sh runs this file.
#include <gtest/gtest.h>

#include <random>

#include "backends/cpu/registry.h"
#include "backends/cuda/norm.h"
#include "kernel_check.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;
using cpu::KernelArg;

Tensor cpu_op(std::string_view target, const std::vector<KernelArg>& args) {
  auto r = cpu::call_kernel(cpu::find_kernel(target), args);
  EXPECT_TRUE(r.ok()) << target << ": " << r.error().message();
  return r.ok() ? r->at(0) : Tensor();
}

Tensor cpu_cast(const Tensor& t, DType dtype) {
  const KernelArg none = std::monostate{};
  return cpu_op("aten._to_copy.default", {t, dtype, none, none, none, false, none});
}

struct Variant {
  DType dtype;
  DType stat;
  Shape sizes;
  bool residual = true;
  bool weight = true;
  DType weight_dtype = DType::kFloat32;  // the model's dtype unless float32 is asked for
  bool strided = false;                  // x, the sum and the output every other element
};

class GpuNormFusion : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  DeviceArena arena_;
  std::mt19937 gen_{35};
};

TEST_F(GpuNormFusion, KernelMatchesTheChainOpByOpOnTheCpu) {
  std::vector<Variant> variants;
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32})
    // Rows that fit in the threads' registers (a warp's 256 elements, 128 threads' 1024 —
    // 300, and SmolVLA's 720 and 960 —, a block's 4096) and rows read twice: 5000.
    for (const Shape& sizes : {Shape{3, 64}, Shape{1, 1, 2048}, Shape{5, 1100}, Shape{2, 3, 40},
                               Shape{2, 300}, Shape{3, 720}, Shape{2, 960}, Shape{1, 5000}})
      for (bool upcast : {true, false}) {
        if (dt == DType::kFloat32 && !upcast) continue;
        variants.push_back(
            {dt, upcast ? DType::kFloat32 : dt, sizes, true, true, dt, sizes.size() == 3});
      }
  variants.push_back({DType::kFloat16, DType::kFloat32, {4, 96}, false, true, DType::kFloat16});
  variants.push_back({DType::kFloat16, DType::kFloat32, {4, 96}, true, false, DType::kFloat16});
  // A float16 model with float32 weights: the output is float32.
  variants.push_back({DType::kFloat16, DType::kFloat32, {4, 96}, true, true, DType::kFloat32});
  for (const Variant& v : variants) {
    SCOPED_TRACE(fmt::format("{} stat {} {} residual {} weight {} strided {}", dtype_name(v.dtype),
                             dtype_name(v.stat), shape_string(v.sizes), v.residual,
                             v.weight ? dtype_name(v.weight_dtype) : "none", v.strided));
    const Layout layout = v.strided ? Layout::kSliced : Layout::kContiguous;
    const Shape wsizes{v.sizes.back()};
    const Tensor x = random_tensor(v.dtype, v.sizes, layout, gen_, -2, 2);
    const Tensor r = random_tensor(v.dtype, v.sizes, Layout::kContiguous, gen_, -2, 2);
    const Tensor w = random_tensor(v.weight_dtype, wsizes, Layout::kContiguous, gen_, 0.5, 1.5);
    // The CPU: the exported chain, op by op.
    const Tensor a = v.residual ? cpu_op("aten.add.Tensor", {x, r, int64_t{1}}) : x;
    const Tensor xf = v.stat != v.dtype ? cpu_cast(a, v.stat) : a;
    const Tensor sq = cpu_op("aten.mul.Tensor", {xf, xf});
    const Tensor m =
        cpu_op("aten.mean.dim", {sq, std::vector<int64_t>{-1}, true, KernelArg{std::monostate{}}});
    const Tensor var = cpu_op("aten.add.Tensor", {m, 1e-5, int64_t{1}});
    const Tensor rs = cpu_op("aten.rsqrt.default", {var});
    const Tensor y = cpu_op("aten.mul.Tensor", {xf, rs});
    const Tensor yt = v.stat != v.dtype ? cpu_cast(y, v.dtype) : y;
    const Tensor want = v.weight ? cpu_op("aten.mul.Tensor", {yt, w}) : yt;
    // The GPU: one kernel. The weight as the runtime passes it (its missing leading dims as
    // size 1: [1, ..., 1, H], which the kernel broadcasts), as [H], or expanded to the rows.
    const int form = static_cast<int>(&v - variants.data()) % 3;
    Shape wsizes_b(v.sizes.size(), 1), wstrides(v.sizes.size(), 0);
    wsizes_b.back() = v.sizes.back();
    wstrides.back() = 1;
    const Tensor wb = form == 0   ? w.view_as(wsizes_b, wstrides, 0)
                      : form == 1 ? w
                                  : w.view_as(v.sizes, wstrides, 0);
    const Tensor out = make_output(want.dtype(), v.sizes, v.strided);
    const Tensor sum = make_output(v.dtype, v.sizes, v.strided);
    const DeviceTensor dx = arena_.to_device(x), dr = arena_.to_device(r),
                       dw = arena_.to_device(wb), dout = arena_.to_device(out),
                       dsum = arena_.to_device(sum);
    auto launched =
        fused_rms_norm(dx, v.residual ? &dr : nullptr, v.weight ? &dw : nullptr,
                       v.residual ? &dsum : nullptr, dout, v.stat, v.dtype, 1e-5, nullptr, nullptr);
    ASSERT_TRUE(launched.ok()) << launched.error().message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    arena_.to_host(out);
    arena_.to_host(sum);
    Tolerance tol = tolerance_for(want.dtype());
    tol.atol *= 2;
    tol.rtol *= 2;
    EXPECT_EQ(compare(out, want, tol), "");
    if (v.residual) {
      EXPECT_EQ(compare(sum, a, {0, 0}), "");
    }
  }
}

TEST_F(GpuNormFusion, ABadOperandIsRefusedWithItsReason) {
  const Tensor x = random_tensor(DType::kFloat16, {2, 8}, Layout::kContiguous, gen_, -1, 1);
  const Tensor i = Tensor::empty(DType::kInt32, {2, 8}).value();
  const Tensor narrow = Tensor::empty(DType::kFloat16, {2, 4}).value();
  const DeviceTensor dx = arena_.to_device(x), di = arena_.to_device(i),
                     dn = arena_.to_device(narrow);
  auto bad_out = fused_rms_norm(dx, nullptr, nullptr, nullptr, di, DType::kFloat32, DType::kFloat16,
                                1e-5, nullptr, nullptr);
  ASSERT_FALSE(bad_out.ok());
  EXPECT_EQ(bad_out.error().message(), "an RMSNorm group: i32 is not float16, bfloat16 or float32");
  auto bad_shape = fused_rms_norm(dx, &dn, nullptr, nullptr, dx, DType::kFloat32, DType::kFloat16,
                                  1e-5, nullptr, nullptr);
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_EQ(bad_shape.error().message(),
            "an RMSNorm group: residual of shape [2, 4] does not broadcast to [2, 8]");
}

}  // namespace
}  // namespace splice::cuda
