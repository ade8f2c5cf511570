// Device memory and the driver API on a GPU (suites Gpu*, skipped without a device), and the
// no-driver behaviour everywhere: nothing aborts, errors say what is missing.
#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/device_info.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/error_word.h"
#include "backends/cuda/index_ops.h"
#include "backends/cuda/pointwise_launch.h"
#include "backends/cuda/shape_ops.h"

namespace splice::cuda {
namespace {

TEST(CudaDriver, LookupSucceedsOrSaysWhy) {
  auto api = driver_api();
  if (device_available()) {
    ASSERT_TRUE(api.ok()) << api.error().message();
    EXPECT_NE((*api)->launch_kernel_ex, nullptr);
  } else if (!api.ok()) {
    EXPECT_EQ(api.error().kind(), ErrorKind::kBackend);
    EXPECT_NE(api.error().message().find("CUDA driver"), std::string::npos)
        << api.error().message();
  }
}

TEST(CudaDeviceMemory, ZeroBytesAllocatesNothing) {
  const int64_t before = cuda_malloc_count();
  auto p = device_malloc(0, "nothing");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, nullptr);
  EXPECT_EQ(cuda_malloc_count(), before);
}

// Without a driver or device (CI), launchers fail with an Error rather than aborting.
TEST(CudaNoDevice, LaunchersFailWithAnError) {
  if (device_available()) GTEST_SKIP() << "a device is present";
  ir::PointwiseProgram p;
  const ir::PointwiseRef x = p.add_input(DType::kFloat32);
  p.add_output(p.add_node(ir::PointwiseFn::kNeg, {x}, DType::kFloat32, DType::kFloat32));
  DeviceTensor t;
  t.rank = 1;
  t.sizes[0] = 4;
  t.strides[0] = 1;
  const DeviceTensor ins[] = {t};
  const DeviceTensor outs[] = {t};
  auto r = launch_pointwise(p, ins, outs, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBackend);
  const int64_t dims[] = {0};
  auto f = flip(t, t, dims, {});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kind(), ErrorKind::kBackend);
  auto w = ErrorWord::create();
  EXPECT_FALSE(w.ok());
}

class GpuDeviceMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(GpuDeviceMemory, RoundTripAndCount) {
  const int64_t before = cuda_malloc_count();
  auto buf = DeviceBuffer::allocate(1024, "test buffer");
  ASSERT_TRUE(buf.ok()) << buf.error().message();
  EXPECT_EQ(cuda_malloc_count(), before + 1);
  std::vector<int32_t> host(256), back(256, -1);
  for (int i = 0; i < 256; ++i) host[i] = i * 7 - 3;
  ASSERT_TRUE(copy_to_device_async(buf->data(), host.data(), 1024, nullptr).ok());
  ASSERT_TRUE(copy_to_host_async(back.data(), buf->data(), 1024, nullptr).ok());
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(back, host);
}

TEST_F(GpuDeviceMemory, WorkspaceGrowsOnlyWhenNeeded) {
  Workspace ws;
  auto a = ws.reserve(1000, nullptr);
  ASSERT_TRUE(a.ok()) << a.error().message();
  const int64_t after_first = cuda_malloc_count();
  auto b = ws.reserve(500, nullptr);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(cuda_malloc_count(), after_first);
  ASSERT_TRUE(ws.reserve(5000, nullptr).ok());
  EXPECT_EQ(cuda_malloc_count(), after_first + 1);
  EXPECT_GE(ws.capacity(), 5000u);
}

TEST_F(GpuDeviceMemory, HugeAllocationFailsWithAnError) {
  auto p = device_malloc(size_t{1} << 50, "an impossible buffer");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind(), ErrorKind::kBackend);
  EXPECT_NE(p.error().message().find("an impossible buffer"), std::string::npos);
  // The failure is not sticky: the next allocation works.
  EXPECT_TRUE(DeviceBuffer::allocate(64, "after failure").ok());
}

TEST_F(GpuDeviceMemory, ErrorWordStartsClear) {
  auto w = ErrorWord::create();
  ASSERT_TRUE(w.ok()) << w.error().message();
  auto r = w->read(nullptr);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(r->has_value());
}

}  // namespace
}  // namespace splice::cuda
