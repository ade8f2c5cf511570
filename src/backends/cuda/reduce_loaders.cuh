#pragma once
// Host-side choice of a reduction's input loader: a typed loader (one instantiation per input
// type) when converting the input to the op's result dtype and then to the accumulator is the
// same as converting it straight to the accumulator (same dtype, integer → int64, 16-bit float
// → float32), else one run-time-dtype loader per accumulator type for the rare rest (a sum
// with an unusual dtype argument).

#include "backends/cuda/reduce.cuh"

namespace splice::cuda {

// The accumulator of a sum/prod/norm whose result dtype is `out`: int64 for integer and bool
// results, double for float64, float otherwise.
template <typename F>
Result<void> dispatch_accumulator(DType out, F&& f) {
  if (out == DType::kFloat64) return f(DeviceTypeTag<double>{});
  if (is_floating(out)) return f(DeviceTypeTag<float>{});
  return f(DeviceTypeTag<int64_t>{});
}

template <typename T, typename V>
inline constexpr bool natural_load_v = (std::is_same_v<V, float> &&
                                        (is_reduced_float_v<T> || std::is_same_v<T, float>)) ||
                                       (std::is_same_v<V, double> && std::is_same_v<T, double>) ||
                                       (std::is_same_v<V, int64_t> && std::is_integral_v<T>);

// Calls f(loader) where loader reads `self`'s elements converted to `via` and then to V.
template <typename V, typename F>
Result<void> dispatch_load(const DeviceTensor& self, DType via, F&& f) {
  const DType in = self.dtype;
  const bool typed = in == via ||
                     (via == DType::kInt64 && (is_integral(in) || in == DType::kBool)) ||
                     (via == DType::kFloat32 && (in == DType::kFloat16 || in == DType::kBFloat16));
  if (typed) {
    return dispatch_device_dtype(in, [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      if constexpr (natural_load_v<T, V>) {
        return f(TypedLoad<T, V>{static_cast<const T*>(self.data)});
      } else {
        return f(DynamicLoad<V>{self.data, in, via});
      }
    });
  }
  return f(DynamicLoad<V>{self.data, in, via});
}

}  // namespace splice::cuda
