// The host memory limits (support/host_memory.h): the parsers of /proc/meminfo,
// /proc/self/cgroup and cgroup v2 files, and RLIMIT_AS less what is mapped, which a forked
// child sets for itself.
#include "support/host_memory.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include "tests/unit/asan.h"

namespace splice {
namespace {

TEST(HostMemory, ParsesMemAvailableInKib) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24000000 kB\nMemFree:        17000000 kB\n"
                                "MemAvailable:   22000000 kB\nBuffers:  1 kB\n"),
            int64_t{22000000} * 1024);
  EXPECT_EQ(parse_mem_available("MemTotal: 1 kB\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: lots\n"), std::nullopt);
}

TEST(HostMemory, ParsesTheCgroupV2PathAndFiles) {
  EXPECT_EQ(parse_cgroup_v2_path("0::/user.slice/session-1.scope\n"),
            "/user.slice/session-1.scope");
  EXPECT_EQ(parse_cgroup_v2_path("12:memory:/docker/abc\n0::/\n"), "/");
  EXPECT_EQ(parse_cgroup_v2_path("12:memory:/docker/abc\n"), std::nullopt);  // v1 only
  EXPECT_EQ(parse_cgroup_bytes("max\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_bytes("1073741824\n"), 1073741824);
}

// In a child (the limit is the process's own): with RLIMIT_AS at 1 GB the limit is at most
// that less what is mapped, and says so.
[[noreturn]] void limit_under_1_gb() {
  const rlim_t gb = rlim_t{1} << 30;
  rlimit limit{gb, gb};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
  auto l = host_memory_limit();
  if (!l) std::_Exit(4);
  std::fprintf(stderr, "%s\n", l->source.c_str());
  std::_Exit(l->bytes < (int64_t{1} << 30) ? 0 : 5);
}

TEST(HostMemory, AnAddressSpaceLimitBinds) {
  if (SPLICE_TEST_ASAN) GTEST_SKIP() << "RLIMIT_AS cannot bind under AddressSanitizer";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(limit_under_1_gb(), ::testing::ExitedWithCode(0),
              "RLIMIT_AS \\(ulimit -v: 1073741824 bytes\\) less the");
}

}  // namespace
}  // namespace splice
