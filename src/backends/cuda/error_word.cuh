#pragma once
// Device side of the error word (error_word.h): record_failure stores the first failing check
// of a call, failed() tells a writing kernel to skip its writes. The NVRTC-generated kernels
// carry the same two functions in their preamble (pointwise_codegen.cc).

#include <cstdint>

#include "backends/cuda/error_word_layout.h"

namespace splice::cuda {

// Records a failure unless one is already recorded (the first one wins); `word` may be null
// for launches that cannot fail, in which case nothing is recorded.
__device__ inline void record_failure(int64_t* word, int64_t site, DeviceCheck check, int64_t value,
                                      int64_t limit, int64_t dim, int64_t extra = 0) {
  if (word == nullptr) return;
  auto* slot = reinterpret_cast<unsigned long long*>(word + kErrorWordCheck);
  if (atomicCAS(slot, 0ull, static_cast<unsigned long long>(check)) == 0ull) {
    word[kErrorWordSite] = site;
    word[kErrorWordValue] = value;
    word[kErrorWordLimit] = limit;
    word[kErrorWordDim] = dim;
    word[kErrorWordExtra] = extra;
  }
}

// Whether a failure has been recorded (by an earlier launch of this call, or by another thread
// of this one).
__device__ inline bool failed(const int64_t* word) {
  return word != nullptr && *reinterpret_cast<const volatile int64_t*>(word) != 0;
}

}  // namespace splice::cuda
