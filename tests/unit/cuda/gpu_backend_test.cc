// The CUDA backend end to end on a GPU (suite GpuBackend, ctest label gpu; skipped without a
// device): a repeated call with the same symbol values makes no cudaMalloc (planned buffers,
// scratch and temporaries come back from the session's caches), and a bad index fails the call
// with exit 2 naming the node and the index while leaving the session's state exactly as the
// CPU backend leaves it.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "backends/cuda/device_info.h"
#include "backends/cuda/device_memory.h"
#include "case_session.h"
#include "splice/splice.h"

namespace splice::cuda {
namespace {

using testing::tensor_args;

// The case every test here runs.
const std::string kCase = "kv_cache_reads_old_state.default";

class GpuBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
  }

  static Session open(const std::string& device) { return testing::open_case(kCase, device); }

  // The call's inputs (k, pos) with pos replaced by `pos` when given.
  static std::map<std::string, Tensor> inputs(int call, std::optional<int64_t> pos = {}) {
    auto m = testing::case_inputs(kCase, call);
    if (pos) *m.at("pos").data<int64_t>() = *pos;
    return m;
  }
};

TEST_F(GpuBackend, RepeatedCallMakesNoCudaMalloc) {
  Session session = open("cuda");
  auto in = inputs(0);
  ASSERT_TRUE(session.run(tensor_args(in)).ok());
  ASSERT_TRUE(session.run(tensor_args(in)).ok());  // warm: every cache now holds what a call needs
  const int64_t before = cuda_malloc_count();
  for (int i = 0; i < 3; ++i) {
    auto r = session.run(tensor_args(in));
    ASSERT_TRUE(r.ok()) << r.error().message();
  }
  EXPECT_EQ(cuda_malloc_count(), before) << "a repeated call allocated device memory";
}

TEST_F(GpuBackend, BadIndexFailsNamingNodeAndIndexAndLeavesStateAsTheCpuDoes) {
  Session gpu = open("cuda"), cpu = open("cpu");
  auto good = inputs(0);
  ASSERT_TRUE(gpu.run(tensor_args(good)).ok());
  ASSERT_TRUE(cpu.run(tensor_args(good)).ok());
  auto bad = inputs(1, 9);  // the cache has 8 positions
  auto g = gpu.run(tensor_args(bad));
  auto c = cpu.run(tensor_args(bad));
  ASSERT_FALSE(g.ok());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(g.error().exit_code(), 2) << g.error().message();
  EXPECT_EQ(g.error().kind(), c.error().kind())
      << g.error().message() << " / " << c.error().message();
  const std::string m = g.error().message();
  EXPECT_NE(m.find("index_put"), std::string::npos) << m;
  EXPECT_NE(m.find("index 9 is out of range"), std::string::npos) << m;
  auto gs = gpu.state("cache"), cs = cpu.state("cache");
  ASSERT_TRUE(gs.ok() && cs.ok());
  ASSERT_EQ(gs->bytes.size(), cs->bytes.size());
  EXPECT_EQ(std::memcmp(gs->bytes.data(), cs->bytes.data(), cs->bytes.size()), 0)
      << "the failed call left the GPU state different from the CPU's";
  // The session goes on: a good call afterwards works on both.
  auto next = inputs(1);
  auto g2 = gpu.run(tensor_args(next));
  auto c2 = cpu.run(tensor_args(next));
  ASSERT_TRUE(g2.ok()) << g2.error().message();
  ASSERT_TRUE(c2.ok());
}

}  // namespace
}  // namespace splice::cuda
