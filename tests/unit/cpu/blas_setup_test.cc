// Tests for backends/cpu/blas_setup.h: OpenBLAS opened once, leaving the environment as it was;
// on a CPU OpenBLAS does not know by model number (this project's VMs have reported an Emerald
// Rapids Xeon, model 207, which Debian 12's OpenBLAS 0.3.21 maps to its generic Prescott
// kernels), the backend still runs the AVX2/AVX-512 ones.
#include "backends/cpu/blas_setup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace splice::cpu {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

TEST(BlasSetup, ACpuWithAvx2NeverRunsTheGenericKernels) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) GTEST_SKIP() << "the user chose the core";
  auto first = open_blas();
  ASSERT_TRUE(first.ok()) << first.error().message();
  auto second = open_blas();  // a second call opens nothing again
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  const std::string core = lower(blas_core_name());
  if (core.empty()) GTEST_SKIP() << "OpenBLAS without a core name (not a DYNAMIC_ARCH build)";
#if defined(__x86_64__)
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
    GTEST_SKIP() << "a CPU without AVX2 and FMA";
#endif
  EXPECT_NE(core, "prescott");
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr) << "the environment is left as it was";
}

// OpenBLAS is opened with OPENBLAS_NUM_THREADS=1 set only while it loads: the process's
// environment is as it was afterwards (the variable absent, as the test runs without it).
TEST(BlasSetup, OpeningLeavesTheEnvironmentAsItWas) {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) GTEST_SKIP() << "the user set it";
  ASSERT_TRUE(open_blas().ok());
  EXPECT_EQ(std::getenv("OPENBLAS_NUM_THREADS"), nullptr);
  // And it computes: 2x2 times 2x2 through the opened sgemm.
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {};
  blas().sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  EXPECT_EQ(c[0], 19);
  EXPECT_EQ(c[1], 22);
  EXPECT_EQ(c[2], 43);
  EXPECT_EQ(c[3], 50);
}

}  // namespace
}  // namespace splice::cpu
