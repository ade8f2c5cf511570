// Tests for backends/cpu/blas_setup.h: on a CPU OpenBLAS does not know by model number (this
// project's VMs report an Emerald Rapids Xeon, model 207, which Debian 12's OpenBLAS 0.3.21
// maps to its generic Prescott kernels), the backend still runs the AVX2/AVX-512 ones.
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
  set_up_blas();
  set_up_blas();  // a second call changes nothing
  const std::string core = lower(blas_core_name());
  if (core.empty()) GTEST_SKIP() << "OpenBLAS without a core name (not a DYNAMIC_ARCH build)";
#if defined(__x86_64__)
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
    GTEST_SKIP() << "a CPU without AVX2 and FMA";
#endif
  EXPECT_NE(core, "prescott");
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr) << "the environment is left as it was";
}

}  // namespace
}  // namespace splice::cpu
