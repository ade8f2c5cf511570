// The memory check before a call on the GPU (runtime/memory_check.h): the cuda backend's
// available memory is cudaMemGetInfo's free bytes plus what splice's caching allocator holds
// free (suite GpuMemoryCheck, ctest label gpu; skipped without a device), and unknown without
// a device (suite CudaMemoryCheck, everywhere).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/device_info.h"
#include "splice/splice.h"

namespace splice::cuda {
namespace {

TEST(CudaMemoryCheck, AvailableMemoryIsUnknownWithoutADevice) {
  if (device_available()) GTEST_SKIP() << "a device is present";
  auto b = backend::require_backend("cuda");
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ((*b)->available_memory(), std::nullopt);
}

TEST(GpuMemoryCheck, AvailableMemoryIsTheGpusFreeMemory) {
  if (!device_available()) GTEST_SKIP() << "no CUDA device";
  auto b = backend::require_backend("cuda");
  ASSERT_TRUE(b.ok()) << b.error().message();
  auto limit = (*b)->available_memory();
  ASSERT_TRUE(limit.has_value());
  EXPECT_GT(limit->bytes, 0);
  EXPECT_EQ(limit->source.rfind("the GPU's free memory (cudaMemGetInfo: ", 0), 0) << limit->source;
}

// hf_llama (a transformers Llama, dynamic sequence length) at 100,000 tokens needs about 1 TB
// ([2, 1, T, T] masks and scores): refused before any of it is allocated on the GPU.
TEST(GpuMemoryCheck, ACallThatCannotFitOnTheGpuIsRefused) {
  if (!device_available()) GTEST_SKIP() << "no CUDA device";
  LoadOptions options;
  options.device = "cuda";
  auto model = Model::load(SPLICE_SOURCE_DIR "/tests/cases/hf_llama.default/model.pt2", options);
  ASSERT_TRUE(model.ok()) << model.error().message();
  Session s = model->open_session().value();
  const int64_t tokens = 100000;
  std::vector<int64_t> ids(2 * tokens, 1), mask(2 * tokens, 1);
  std::map<std::string, TensorArg> args;
  args.emplace("input_ids", TensorArg{ids.data(), DType::kInt64, {2, tokens}});
  args.emplace("attention_mask", TensorArg{mask.data(), DType::kInt64, {2, tokens}});
  auto r = s.run(args);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBackend);
  const std::string& m = r.error().message();
  EXPECT_NE(m.find("out of memory: this call needs at least "), std::string::npos) << m;
  EXPECT_NE(m.find("with s53 = 100000"), std::string::npos) << m;
  EXPECT_NE(m.find("but the GPU's free memory (cudaMemGetInfo: "), std::string::npos) << m;
  EXPECT_NE(m.find("refused before allocating any"), std::string::npos) << m;
}

}  // namespace
}  // namespace splice::cuda
