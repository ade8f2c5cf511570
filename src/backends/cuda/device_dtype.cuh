#pragma once
// Element types on the device: the C++ type of each DType (__half, __nv_bfloat16 for the 16-bit
// floats), the type an op computes in (opmath_t: float for the 16-bit floats), a host-side
// switch from a DType to its device type (dispatch_device_dtype), and conversions exactly as
// c10 converts (the device twin of tensor/convert.h's cast_value): float→int truncates
// toward zero, NaN or out of range gives the x86 "integer indefinite" value of the 32- or
// 64-bit conversion c10's compiled code uses (so GPU and CPU agree bit for bit); int→narrower
// int wraps; anything→bool is != 0; the 16-bit floats convert through float (double→half
// rounds twice, as c10 does), rounding to nearest even.
//
// load_as / store_as read and write an element of a runtime dtype (a uniform switch): used
// where an operand's dtype is a run-time choice that does not deserve its own instantiation
// (masks, norm weights, outputs written once per row).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "support/dtype.h"

namespace splice::cuda {

template <typename T>
struct DeviceTypeTag {
  using type = T;
};

template <typename T>
inline constexpr bool is_reduced_float_v =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <typename T>
inline constexpr bool is_device_float_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
template <typename T>
inline constexpr bool is_device_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// Calls f(DeviceTypeTag<T>{}) with the device element type of dtype (host code).
template <typename F>
decltype(auto) dispatch_device_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kUInt8:
      return f(DeviceTypeTag<uint8_t>{});
    case DType::kInt8:
      return f(DeviceTypeTag<int8_t>{});
    case DType::kInt16:
      return f(DeviceTypeTag<int16_t>{});
    case DType::kInt32:
      return f(DeviceTypeTag<int32_t>{});
    case DType::kInt64:
      return f(DeviceTypeTag<int64_t>{});
    case DType::kFloat16:
      return f(DeviceTypeTag<__half>{});
    case DType::kFloat32:
      return f(DeviceTypeTag<float>{});
    case DType::kFloat64:
      return f(DeviceTypeTag<double>{});
    case DType::kBool:
      return f(DeviceTypeTag<bool>{});
    case DType::kBFloat16:
      return f(DeviceTypeTag<__nv_bfloat16>{});
  }
  std::abort();  // DType is a closed enum; reaching here is memory corruption.
}

// x86 cvttsd2si with a 64-bit destination: truncation, NaN/out of range → INT64_MIN.
__host__ __device__ __forceinline__ int64_t trunc_to_int64(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}
// x86 cvttsd2si with a 32-bit destination: NaN/out of range → INT32_MIN.
__host__ __device__ __forceinline__ int32_t trunc_to_int32(double d) {
  if (!(d > -2147483649.0 && d < 2147483648.0)) return INT32_MIN;
  return static_cast<int32_t>(d);
}

template <typename To, typename From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, __half>) {
    return convert<To, float>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return convert<To, float>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(convert<float, From>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(convert<float, From>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    // To is an integer type.
    if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint8_t>) {
      return static_cast<To>(trunc_to_int64(static_cast<double>(v)));
    } else {
      return static_cast<To>(trunc_to_int32(static_cast<double>(v)));
    }
  } else {
    return static_cast<To>(v);  // integer/bool → integer: modular
  }
}

template <typename T>
__device__ __forceinline__ opmath_t<T> to_opmath(T v) {
  return convert<opmath_t<T>, T>(v);
}

__device__ __forceinline__ bool is_nan_value(float v) { return isnan(v); }
__device__ __forceinline__ bool is_nan_value(double v) { return isnan(v); }
template <typename T>
__device__ __forceinline__ bool is_nan_value(T) {
  return false;
}

// The element `off` of a `dtype` array at `base`, converted to To.
template <typename To>
__device__ __forceinline__ To load_as(const void* base, int64_t off, DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return convert<To>(static_cast<const uint8_t*>(base)[off]);
    case DType::kInt8:
      return convert<To>(static_cast<const int8_t*>(base)[off]);
    case DType::kInt16:
      return convert<To>(static_cast<const int16_t*>(base)[off]);
    case DType::kInt32:
      return convert<To>(static_cast<const int32_t*>(base)[off]);
    case DType::kInt64:
      return convert<To>(static_cast<const int64_t*>(base)[off]);
    case DType::kFloat16:
      return convert<To>(static_cast<const __half*>(base)[off]);
    case DType::kFloat32:
      return convert<To>(static_cast<const float*>(base)[off]);
    case DType::kFloat64:
      return convert<To>(static_cast<const double*>(base)[off]);
    case DType::kBool:
      return convert<To>(static_cast<const bool*>(base)[off]);
    case DType::kBFloat16:
      return convert<To>(static_cast<const __nv_bfloat16*>(base)[off]);
  }
  return To();
}

// Stores v converted to `dtype` at element `off` of base.
template <typename From>
__device__ __forceinline__ void store_as(void* base, int64_t off, DType dtype, From v) {
  switch (dtype) {
    case DType::kUInt8:
      static_cast<uint8_t*>(base)[off] = convert<uint8_t>(v);
      return;
    case DType::kInt8:
      static_cast<int8_t*>(base)[off] = convert<int8_t>(v);
      return;
    case DType::kInt16:
      static_cast<int16_t*>(base)[off] = convert<int16_t>(v);
      return;
    case DType::kInt32:
      static_cast<int32_t*>(base)[off] = convert<int32_t>(v);
      return;
    case DType::kInt64:
      static_cast<int64_t*>(base)[off] = convert<int64_t>(v);
      return;
    case DType::kFloat16:
      static_cast<__half*>(base)[off] = convert<__half>(v);
      return;
    case DType::kFloat32:
      static_cast<float*>(base)[off] = convert<float>(v);
      return;
    case DType::kFloat64:
      static_cast<double*>(base)[off] = convert<double>(v);
      return;
    case DType::kBool:
      static_cast<bool*>(base)[off] = convert<bool>(v);
      return;
    case DType::kBFloat16:
      static_cast<__nv_bfloat16*>(base)[off] = convert<__nv_bfloat16>(v);
      return;
  }
}

// v rounded to `dtype` and widened back to V (V is float or double): the value a c10 kernel
// sees after converting to dtype first.
template <typename V>
__device__ __forceinline__ V round_through(V v, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return convert<V>(convert<__half>(v));
    case DType::kBFloat16:
      return convert<V>(convert<__nv_bfloat16>(v));
    case DType::kFloat32:
      return convert<V>(convert<float>(v));
    default:
      return v;
  }
}

}  // namespace splice::cuda
