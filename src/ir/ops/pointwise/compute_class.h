#pragma once
// The compute classes of a pointwise function: which compute dtypes a formula is written for.

#include <cstdint>

namespace splice::ir {

enum PointwiseComputeClass : uint8_t {
  kComputeBool = 1,
  kComputeInt = 2,    // the integer dtypes, which wrap around on overflow
  kComputeFloat = 4,  // float32 and float64 (16-bit floats compute in float32)
};

}  // namespace splice::ir
