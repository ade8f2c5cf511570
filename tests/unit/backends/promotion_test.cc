// Type promotion: promote_types lattice and result_type's priority/category rules.
#include "backends/common/promotion.h"

#include <gtest/gtest.h>

namespace splice::backend {
namespace {

using P = PromotionOperand::Priority;

DType rt(PromotionOperand a, PromotionOperand b) {
  const PromotionOperand ops[] = {a, b};
  return result_type(ops);
}

TEST(Promotion, PromoteTypesLattice) {
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt32), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kInt8, DType::kInt64), DType::kInt64);
  EXPECT_EQ(promote_types(DType::kBool, DType::kUInt8), DType::kUInt8);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kInt64, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kFloat32, DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(promote_types(DType::kBFloat16, DType::kFloat32), DType::kFloat32);
}

TEST(Promotion, ResultTypeCategoriesAndPriorities) {
  // int tensor + float scalar → default float32.
  EXPECT_EQ(rt({DType::kInt32, P::kDimensioned}, {DType::kFloat64, P::kScalar}), DType::kFloat32);
  // f16 tensor + float scalar → f16.
  EXPECT_EQ(rt({DType::kFloat16, P::kDimensioned}, {DType::kFloat64, P::kScalar}), DType::kFloat16);
  // bool tensor + int scalar → int64.
  EXPECT_EQ(rt({DType::kBool, P::kDimensioned}, {DType::kInt64, P::kScalar}), DType::kInt64);
  // uint8 tensor + int scalar stays uint8 (same category, tensor wins).
  EXPECT_EQ(rt({DType::kUInt8, P::kDimensioned}, {DType::kInt64, P::kScalar}), DType::kUInt8);
  // i32 tensor + 0-d i64 tensor → i32; + 0-d f64 tensor → f64 (higher category).
  EXPECT_EQ(rt({DType::kInt32, P::kDimensioned}, {DType::kInt64, P::kZeroDim}), DType::kInt32);
  EXPECT_EQ(rt({DType::kInt32, P::kDimensioned}, {DType::kFloat64, P::kZeroDim}), DType::kFloat64);
  // f16 tensor + 0-d f64 tensor → f16; 0-d f32 + f64 scalar → f32.
  EXPECT_EQ(rt({DType::kFloat16, P::kDimensioned}, {DType::kFloat64, P::kZeroDim}),
            DType::kFloat16);
  EXPECT_EQ(rt({DType::kFloat32, P::kZeroDim}, {DType::kFloat64, P::kScalar}), DType::kFloat32);
  // Two dimensioned tensors promote normally.
  EXPECT_EQ(rt({DType::kInt32, P::kDimensioned}, {DType::kFloat16, P::kDimensioned}),
            DType::kFloat16);
  // Scalars alone: int → int64, float → float32, bool → bool.
  EXPECT_EQ(rt({DType::kInt64, P::kScalar}, {DType::kFloat64, P::kScalar}), DType::kFloat32);
  EXPECT_EQ(rt({DType::kBool, P::kScalar}, {DType::kBool, P::kScalar}), DType::kBool);
  // bool tensor + float scalar → float32; bool 0-d + int8 tensor → int8.
  EXPECT_EQ(rt({DType::kBool, P::kDimensioned}, {DType::kFloat64, P::kScalar}), DType::kFloat32);
  EXPECT_EQ(rt({DType::kBool, P::kZeroDim}, {DType::kInt8, P::kDimensioned}), DType::kInt8);
}

}  // namespace
}  // namespace splice::backend
