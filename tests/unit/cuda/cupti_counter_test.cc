// The CUPTI counter without a GPU (suite CuptiCounter, label cuda): where libcupti is installed
// it opens — every entry point splice calls resolves, the API version is the headers' major and
// the buffer callbacks register, none of which needs a driver — and where it is not, the error
// says "libcupti not found" with what was tried, which `splice bench` prints as the reason for
// "kernels: n/a". Counting itself needs a device (GpuBench).
#include <gtest/gtest.h>

#include "backends/cuda/cupti_counter.h"

namespace splice::cuda {
namespace {

TEST(CuptiCounter, OpensOrSaysWhyNot) {
  auto first = ActivityCounter::get();
  auto again = ActivityCounter::get();
  ASSERT_EQ(first.ok(), again.ok());
  if (first.ok()) {
    EXPECT_EQ(*first, *again) << "one counter per process";
    return;
  }
  const std::string& why = first.error().message();
  EXPECT_EQ(first.error().kind(), ErrorKind::kBackend);
  EXPECT_EQ(again.error().message(), why);
  EXPECT_EQ(why.rfind("libcupti not found: ", 0), 0u) << why;
  EXPECT_NE(why.find("/usr/local/cuda/extras/CUPTI/lib64/"), std::string::npos) << why;
}

}  // namespace
}  // namespace splice::cuda
