#pragma once
// Element types of tensors crossing splice's public API.

#include <cstdint>

namespace splice {

enum class DType : uint8_t {
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBool,
  kBFloat16,
};

}  // namespace splice
