#pragma once
// parallel_for: splits [0, n) into at most num_threads() contiguous chunks of at least `grain`
// elements and runs f(begin, end) on each, the first chunk on the calling thread. Threads are
// started per call (no pool): callers only use it for loops big enough (kParallelGrain
// elements and up) that a thread start is noise. Each element is still computed by exactly
// the code of the single-threaded loop, so results are bitwise identical for any thread count.

#include <algorithm>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include "backends/cpu/registry.h"

namespace splice::cpu {

// Elements below which a loop stays on the calling thread.
inline constexpr int64_t kParallelGrain = 32768;

template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(n / std::max<int64_t>(grain, 1), 1);
  const int64_t chunks = std::min<int64_t>(num_threads(), max_chunks);
  if (chunks <= 1) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t chunk = (n + chunks - 1) / chunks;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(chunks - 1));
  for (int64_t begin = chunk; begin < n; begin += chunk) {
    const int64_t end = std::min(n, begin + chunk);
    try {
      workers.emplace_back([&f, begin, end] { f(begin, end); });
    } catch (const std::system_error&) {
      f(begin, end);  // no thread available: do the chunk here instead
    }
  }
  f(int64_t{0}, std::min(n, chunk));
  for (std::thread& w : workers) w.join();
}

}  // namespace splice::cpu
