// Tests for replay_cost_blocker (runtime/recorded_calls.h): a call is recorded as a CUDA graph
// only when the launches a replay saves outweigh the copies it adds.
#include <gtest/gtest.h>

#include "runtime/recorded_calls.h"

namespace splice::runtime {
namespace {

// The rotary chain of bench/gpu_compare.py with its inputs on the device: one kernel, a 32 MiB
// input and a 32 MiB output that a replay would both copy.
TEST(ReplayCost, OneKernelOverLargeDeviceTensorsIsNotRecorded) {
  const int64_t mib = int64_t{1} << 20;
  const std::string why = replay_cost_blocker(64 * mib, 1);
  EXPECT_NE(why.find("a replay would copy 67108864 bytes of device inputs and outputs"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("the launches of 1 kernels"), std::string::npos) << why;
}

// A decoder's step: a position and a token in, logits out, across 147 kernels.
TEST(ReplayCost, ManyKernelsOverSmallTensorsAreRecorded) {
  EXPECT_EQ(replay_cost_blocker(16 + 2 * 32000, 147), "");
}

// Nothing copied (host inputs are copied in either way) never stands in the way.
TEST(ReplayCost, NoExtraCopiesAreAlwaysWorthRecording) {
  EXPECT_EQ(replay_cost_blocker(0, 1), "");
  EXPECT_EQ(replay_cost_blocker(0, 0), "");
}

// The break-even point moves with the kernel count: the same bytes are worth copying for
// enough launches.
TEST(ReplayCost, MoreKernelsPayForMoreBytes) {
  const int64_t bytes = 8 << 20;
  EXPECT_NE(replay_cost_blocker(bytes, 1), "");
  EXPECT_EQ(replay_cost_blocker(bytes, 1000), "");
}

}  // namespace
}  // namespace splice::runtime
