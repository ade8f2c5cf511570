#pragma once
// The dtype switch every kernel uses: dispatch_dtype(dtype, f) calls f(TypeTag<T>{}) with the
// C++ element type of dtype, and opmath_t<T> is the type an op computes in (float for the
// 16-bit floats, as PyTorch's CPU kernels do; the type itself otherwise).

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "support/dtype.h"
#include "tensor/half.h"

namespace splice {

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kUInt8:
      return f(TypeTag<uint8_t>{});
    case DType::kInt8:
      return f(TypeTag<int8_t>{});
    case DType::kInt16:
      return f(TypeTag<int16_t>{});
    case DType::kInt32:
      return f(TypeTag<int32_t>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kFloat16:
      return f(TypeTag<Half>{});
    case DType::kFloat32:
      return f(TypeTag<float>{});
    case DType::kFloat64:
      return f(TypeTag<double>{});
    case DType::kBool:
      return f(TypeTag<bool>{});
    case DType::kBFloat16:
      return f(TypeTag<BFloat16>{});
  }
  std::abort();  // DType is a closed enum; reaching here is memory corruption.
}

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// Widening to the compute type and rounding back (one rounding per op for 16-bit floats).
template <typename T>
inline opmath_t<T> to_opmath(T v) {
  if constexpr (is_reduced_float_v<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}
template <typename T>
inline T from_opmath(opmath_t<T> v) {
  if constexpr (is_reduced_float_v<T>) {
    return T(v);
  } else {
    return v;
  }
}

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::kBFloat16;
};

}  // namespace splice
