// A CPU kernel whose output cannot be allocated reports the bytes it asked for (issue 34: "out
// of memory" alone did not say how much), through run_kernel's boundary.
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

// x f32[2, 3] repeated [2^23, 2^22] times: f32[2^24, 3 * 2^22], 768 TiB, more than any
// address space can map.
TEST(OutOfMemory, AKernelsFailedAllocationNamesItsBytes) {
  Tensor x = make(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  Error e = call_error("aten.repeat.default", {x, ints({int64_t{1} << 23, int64_t{1} << 22})});
  EXPECT_EQ(e.kind(), ErrorKind::kBackend);
  EXPECT_EQ(e.message(),
            "aten.repeat.default: out of memory: cannot allocate 844424930131968 bytes of host "
            "memory");
}

}  // namespace
}  // namespace splice::cpu
