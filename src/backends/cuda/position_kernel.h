#pragma once
// The kernel behind CudaCallRecorder::bind_positions (runtime/device_positions.h): one thread
// reads a position symbol's value from its input (an integer of 1 to 8 bytes), checks it against
// the symbol's range (a failure goes to the error word, DeviceCheck::kSymbolOutOfRange) and stores
// value + offsets[i] for every offset, which the copies at that position read when they run.
// Plain declarations: the kernel lives in position_kernel.cu (nvcc), the checks in the .cc.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splice::cuda {

inline constexpr int kMaxPositionOffsets = 8;

struct PositionParams {
  const void* source = nullptr;
  int32_t source_bytes = 8;  // 1, 2, 4 or 8
  int32_t is_unsigned = 0;   // uint8
  int64_t min = 0;
  int64_t max = 0;
  int32_t count = 0;  // offsets used
  int32_t unused = 0;
  int64_t offsets[kMaxPositionOffsets] = {};
  int64_t* out = nullptr;  // count int64s
  int64_t* error_word = nullptr;
  int64_t site = 0;
};

cudaError_t launch_bind_positions(const PositionParams& params, cudaStream_t stream);

}  // namespace splice::cuda
