// See position_kernel.h.
#include "backends/cuda/error_word.cuh"
#include "backends/cuda/position_kernel.h"

namespace splice::cuda {

namespace {

__device__ int64_t read_integer(const PositionParams& p) {
  switch (p.source_bytes) {
    case 1:
      return p.is_unsigned ? static_cast<int64_t>(*static_cast<const uint8_t*>(p.source))
                           : static_cast<int64_t>(*static_cast<const int8_t*>(p.source));
    case 2:
      return *static_cast<const int16_t*>(p.source);
    case 4:
      return *static_cast<const int32_t*>(p.source);
    default:
      return *static_cast<const int64_t*>(p.source);
  }
}

__global__ void bind_positions(const PositionParams p) {
  const int64_t value = read_integer(p);
  if (value < p.min || value > p.max)
    record_failure(p.error_word, p.site, DeviceCheck::kSymbolOutOfRange, value, p.max, 0, p.min);
  for (int i = 0; i < p.count; ++i) p.out[i] = value + p.offsets[i];
}

}  // namespace

cudaError_t launch_bind_positions(const PositionParams& params, cudaStream_t stream) {
  bind_positions<<<1, 1, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace splice::cuda
