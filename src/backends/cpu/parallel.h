#pragma once
// parallel_for: splits [0, n) into chunks of at least `grain` elements and runs f(begin, end)
// on each, over the thread pool of the model whose kernel is running (thread_pool.h), or on
// the calling thread alone when there is none. Each element is computed by exactly the code
// of the single-threaded loop, so results are bitwise identical for any thread count.

#include <cstdint>

#include "backends/cpu/thread_pool.h"

namespace splice::cpu {

// Elements below which a loop stays on the calling thread.
inline constexpr int64_t kParallelGrain = 32768;

template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  ThreadPool* pool = current_pool();
  if (pool == nullptr || pool->size() <= 1 || n < 2 * grain) {
    f(int64_t{0}, n);
    return;
  }
  pool->parallel_for(n, grain, f);
}

// Threads the running kernel may use (1 outside a pool).
inline int num_threads() {
  const ThreadPool* pool = current_pool();
  return pool == nullptr ? 1 : pool->size();
}

}  // namespace splice::cpu
