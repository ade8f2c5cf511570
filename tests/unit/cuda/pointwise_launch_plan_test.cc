// Which pointwise kernel a launch takes, without a GPU (plan_pointwise_launch reads no device
// memory): the rows kernel for strided rows dense and aligned in their innermost dim (the
// rotary chain's half rows), the strided kernel when a row is not a multiple of 4 or not
// aligned, the contiguous kernel for dense operands.
#include <gtest/gtest.h>

#include "backends/cuda/pointwise_launch.h"

namespace splice::cuda::testing {
namespace {

using ir::PointwiseFn;
using Kernel = PointwiseLaunchPlan::Kernel;

// out = a * b in float16.
ir::PointwiseProgram product() {
  ir::PointwiseProgram p;
  const auto a = p.add_input(DType::kFloat16), b = p.add_input(DType::kFloat16);
  p.add_output(p.add_node(PointwiseFn::kMul, {a, b}, DType::kFloat16, DType::kFloat32));
  return p;
}

// A float16 view at `offset` elements into a 256-byte-aligned fake address (never read).
DeviceTensor view(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  DeviceTensor t;
  t.dtype = DType::kFloat16;
  t.data = reinterpret_cast<char*>(uintptr_t{1} << 20) + offset * 2;
  t.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < t.rank; ++d) {
    t.sizes[d] = sizes[d];
    t.strides[d] = strides[d];
  }
  return t;
}

Result<PointwiseLaunchPlan> plan(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
  const ir::PointwiseProgram p = product();
  const PointwiseOperand ins[] = {{a, nullptr}, {b, nullptr}};
  const PointwiseOperand outs[] = {{out, nullptr}};
  return plan_pointwise_launch(p, {}, ins, outs, p.constants, LaunchContext{}, 132);
}

TEST(PointwiseLaunchPlan, HalfRowsTakeTheRowsKernel) {
  // x[..., :32] * cos (broadcast over heads) into out[..., 32:], rows of 64 elements.
  auto r = plan(view({4, 16, 32}, {1024, 64, 1}, 0), view({16, 32}, {32, 1}, 0),
                view({4, 16, 32}, {1024, 64, 1}, 32));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kRows4);
  EXPECT_TRUE(r->vectorised);
  EXPECT_EQ(r->blocks, (4 * 16 * 32 / 4 + 255) / 256);
}

TEST(PointwiseLaunchPlan, AnInputBroadcastAlongTheRowStillTakesTheRowsKernel) {
  // b is one value per row (stride 0 along it): read once for the four.
  auto r = plan(view({8, 12}, {16, 1}, 0), view({8, 1}, {1, 1}, 0), view({8, 12}, {16, 1}, 4));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kRows4);
}

TEST(PointwiseLaunchPlan, RowsThatFourElementLoadsCannotReadTakeTheStridedKernel) {
  // Rows of 6 elements.
  auto r = plan(view({8, 6}, {16, 1}, 0), view({8, 6}, {16, 1}, 0), view({8, 6}, {16, 1}, 8));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kStrided32);
  // A row start one element off alignment.
  r = plan(view({8, 8}, {16, 1}, 1), view({8, 8}, {16, 1}, 0), view({8, 8}, {16, 1}, 8));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kStrided32);
  // Rows 18 apart: every other row misaligned.
  r = plan(view({8, 8}, {18, 1}, 0), view({8, 8}, {16, 1}, 0), view({8, 8}, {16, 1}, 8));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kStrided32);
  // The output's row not dense.
  r = plan(view({8, 8}, {16, 1}, 0), view({8, 8}, {16, 1}, 0), view({8, 8}, {32, 2}, 0));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kStrided32);
  EXPECT_FALSE(r->vectorised);
}

TEST(PointwiseLaunchPlan, DenseOperandsTakeTheContiguousKernel) {
  auto r = plan(view({8, 8}, {8, 1}, 0), view({8, 8}, {8, 1}, 64), view({8, 8}, {8, 1}, 128));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->kernel, Kernel::kContiguous);
  EXPECT_TRUE(r->vectorised);
}

}  // namespace
}  // namespace splice::cuda::testing
