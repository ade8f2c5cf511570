#pragma once
// KernelScratch: device memory a launcher may use for temporaries within one call (split
// reduction partials, attention split-K partials, contiguous copies of operands a library
// cannot read in place). The caller owns it (a session keeps one block, reused by every step
// since steps run in stream order) and passes it explicitly, so no launcher allocates and
// every call can be captured in a CUDA graph. A launcher that gets less scratch than it would
// like falls back to a slower schedule when one exists (fewer splits); when the scratch is
// required (a copy) and too small it fails with an Error naming the bytes it needs, which the
// planner can learn up front from the launcher's *_scratch_bytes query.

#include <cstddef>
#include <cstdint>

namespace splice::cuda {

struct KernelScratch {
  void* data = nullptr;
  size_t bytes = 0;
  // Counters that read 0 when a launch starts and that every kernel using them leaves at 0
  // when it ends (a split kernel's blocks count themselves in, and the last one resets the
  // count): they let one launch find its last block without a memset or a second kernel. They
  // live apart from `data` (which steps overwrite freely) and are shared by every step, which
  // is safe because steps run in stream order. nullptr: none (a launcher then combines in a
  // second kernel).
  uint32_t* counters = nullptr;
  size_t counter_count = 0;

  // The scratch after its first `used` bytes, with the remainder aligned to 256 bytes (so a
  // launcher can hand the rest to a nested step).
  KernelScratch after(size_t used) const {
    const size_t aligned = (used + 255) / 256 * 256;
    if (data == nullptr || aligned >= bytes) return {nullptr, 0, counters, counter_count};
    return {static_cast<char*>(data) + aligned, bytes - aligned, counters, counter_count};
  }
};

// Counters a session keeps for KernelScratch::counters (16 KiB).
inline constexpr size_t kScratchCounters = 4096;

// Bytes rounded up to the 256-byte alignment every scratch region keeps.
inline size_t scratch_round(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace splice::cuda
