// The CLI's limits (issue 34, items 4, 7 and 9): a thread count beyond the machine's hardware
// threads is clamped with a warning.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <thread>

#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

std::string case_file(const std::string& c, const std::string& name) {
  return kCasesDir + "/" + c + "/" + name;
}

// --threads 4096 ran 4096 threads on a few cores: each call ~1,000x slower.
TEST(SpliceLimits, ThreadsBeyondTheHardwareAreClampedWithAWarning) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  TempDir tmp;
  const std::string c = "abs.default";
  for (std::string command : {"run", "bench"}) {
    std::vector<std::string> args = {command,
                                     case_file(c, "model.pt2"),
                                     "--threads",
                                     "4096",
                                     "--no-cache",
                                     "--inputs",
                                     case_file(c, "call0.inputs.safetensors"),
                                     "--outputs",
                                     tmp.file("out.safetensors")};
    if (command == "bench") args.insert(args.end(), {"--warmup", "0", "--iters", "1"});
    Outcome o = run_splice(args);
    ASSERT_EQ(o.exit_code, 0) << describe(o);
    EXPECT_NE(o.err.find(fmt::format("splice: warning: 4096 threads asked for, but this machine "
                                     "has {} hardware threads; using {}",
                                     hardware, hardware)),
              std::string::npos)
        << describe(o);
  }
}

}  // namespace
}  // namespace splice::test
