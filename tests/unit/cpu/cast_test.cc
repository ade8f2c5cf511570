// Element conversions (c10 rules) and 16-bit float rounding.
#include "tensor/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_util.h"
#include "tensor/half.h"

namespace splice::cpu {
namespace {

TEST(Cast, FloatToIntegers) {
  EXPECT_EQ((cast_value<uint8_t, double>(-1.0)), 255);
  EXPECT_EQ((cast_value<uint8_t, float>(-2.5f)), 254);
  EXPECT_EQ((cast_value<int32_t, double>(2.7)), 2);
  EXPECT_EQ((cast_value<int32_t, double>(-2.7)), -2);
  EXPECT_EQ((cast_value<int64_t, float>(-0.9f)), 0);
  EXPECT_EQ((cast_value<int8_t, double>(300.0)), 44);  // trunc to int32 then wrap
  // Undefined in C++; defined here as x86's integer indefinite value.
  EXPECT_EQ((cast_value<int32_t, double>(std::nan(""))), std::numeric_limits<int32_t>::min());
  EXPECT_EQ((cast_value<int64_t, double>(1e30)), std::numeric_limits<int64_t>::min());
}

TEST(Cast, IntegersAndBool) {
  EXPECT_EQ((cast_value<int8_t, int64_t>(300)), 44);
  EXPECT_EQ((cast_value<uint8_t, int32_t>(-1)), 255);
  EXPECT_EQ((cast_value<bool, double>(0.1)), true);
  EXPECT_EQ((cast_value<bool, double>(std::nan(""))), true);
  EXPECT_EQ((cast_value<bool, int64_t>(0)), false);
  EXPECT_EQ((cast_value<bool, Half>(Half(-0.0f))), false);
  EXPECT_EQ((cast_value<float, bool>(true)), 1.0f);
  EXPECT_EQ((cast_value<int32_t, Half>(Half(-3.75f))), -3);
}

TEST(Cast, HalfRounding) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);      // tie → even
  EXPECT_EQ(Half(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);  // tie → even (up)
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65519.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);  // rounds to infinity
  EXPECT_EQ(Half(-INFINITY).bits, 0xfc00);
  EXPECT_EQ(Half(std::nanf("")).bits, 0x7e00);
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie → even (zero)
  EXPECT_EQ(Half(std::ldexp(1.5f, -25)).bits, 0x0001);
  EXPECT_EQ(Half(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x03ff)), std::ldexp(1023.0f, -24));
  EXPECT_EQ(static_cast<float>(Half::from_bits(0xc000)), -2.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half::from_bits(0x7e00))));
  // Every finite half round-trips through float.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7c00) == 0x7c00) continue;
    EXPECT_EQ(Half(static_cast<float>(Half::from_bits(static_cast<uint16_t>(b)))).bits, b);
  }
}

TEST(Cast, BFloat16Rounding) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);      // tie → even
  EXPECT_EQ(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);  // tie → even (up)
  EXPECT_EQ(BFloat16(std::nanf("")).bits, 0x7fc0);
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0xc040)), -3.0f);
}

TEST(Cast, TensorCastCopy) {
  using namespace testing;
  Tensor t = make(DType::kFloat32, {4}, {-1.0, 2.7, -2.7, 0.0});
  EXPECT_EQ(values(convert(t, DType::kUInt8).value()), (std::vector<double>{255, 2, 254, 0}));
  EXPECT_EQ(values(convert(t, DType::kInt32).value()), (std::vector<double>{-1, 2, -2, 0}));
  EXPECT_EQ(values(convert(t, DType::kBool).value()), (std::vector<double>{1, 1, 1, 0}));
  Tensor h =
      call1("aten._to_copy.default", {t, DType::kFloat16, none(), none(), none(), false, none()});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(values(h)[1], static_cast<double>(static_cast<float>(Half(2.7f))));
}

}  // namespace
}  // namespace splice::cpu
