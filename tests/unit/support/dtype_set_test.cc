// DTypeSet: the dtypes a backend's kernel runs, as constant data with readable names.
#include "support/dtype_set.h"

#include <gtest/gtest.h>

namespace splice {
namespace {

TEST(DTypeSet, AllHoldsEveryDtypeAndWithoutRemovesOne) {
  constexpr DTypeSet all = DTypeSet::all();
  for (DType d : kAllDTypes) EXPECT_TRUE(all.contains(d)) << dtype_name(d);
  constexpr DTypeSet no_bool = all.without(DType::kBool);
  static_assert(!no_bool.contains(DType::kBool) && no_bool.contains(DType::kInt64));
  EXPECT_EQ(dtype_set_string(no_bool), "u8, i8, i16, i32, i64, f16, f32, f64, bf16");
}

TEST(DTypeSet, FloatingIsWhatIsFloatingSays) {
  for (DType d : kAllDTypes) EXPECT_EQ(DTypeSet::floating().contains(d), is_floating(d));
  EXPECT_EQ(dtype_set_string(DTypeSet::floating()), "f16, f32, f64, bf16");
  EXPECT_EQ(dtype_set_string(DTypeSet()), "none");
  EXPECT_EQ((DTypeSet{DType::kInt32, DType::kInt32}), DTypeSet{DType::kInt32});
}

}  // namespace
}  // namespace splice
