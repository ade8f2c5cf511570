#pragma once
// Element conversions exactly as c10 converts (c10::convert / static_cast_with_inter_type):
// float→int truncates toward zero; float→uint8 goes through int64 (−1.0 → 255); int→narrower
// int wraps; anything→bool is != 0; 16-bit floats convert through float (so double→half and
// int64→half round twice, as in c10). A NaN or out-of-range float→int, undefined in C++, takes
// a defined path that reproduces x86's cvtt* result (the "integer indefinite" 0x80..0 of the
// 32- or 64-bit conversion c10's compiled code uses), so UBSan never fires.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tensor/dtype_dispatch.h"
#include "tensor/tensor.h"

namespace splice {

namespace detail {
// x86 cvttsd2si with a 64-bit destination: truncation, NaN/out of range → INT64_MIN.
inline int64_t trunc_to_int64(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(d);
}
// x86 cvttss2si/cvttsd2si with a 32-bit destination: NaN/out of range → INT32_MIN.
inline int32_t trunc_to_int32(double d) {
  if (!(d > -2147483649.0 && d < 2147483648.0)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(d);
}
}  // namespace detail

template <typename To, typename From>
inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_reduced_float_v<From>) {
    return cast_value<To, float>(static_cast<float>(v));
  } else if constexpr (is_reduced_float_v<To>) {
    return To(cast_value<float, From>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    // To is an integer type.
    if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint8_t>) {
      return static_cast<To>(detail::trunc_to_int64(static_cast<double>(v)));
    } else {
      return static_cast<To>(detail::trunc_to_int32(static_cast<double>(v)));
    }
  } else {
    return static_cast<To>(v);  // integer/bool → integer: modular since C++20
  }
}

// Host tensors only (the backends convert on their own devices):
// A new contiguous tensor holding t converted to dtype (t itself when the dtype already
// matches; callers only read it).
Result<Tensor> convert_if_needed(const Tensor& t, DType dtype);
// Writes src (same sizes as dst; src strides may be 0 for broadcast dims) into the strided
// dst view, converting to dst's dtype.
void copy_cast_into(const Tensor& dst, const Tensor& src);
// A new contiguous tensor of src's values converted to dtype.
Result<Tensor> convert(const Tensor& src, DType dtype);

}  // namespace splice
