#pragma once
// ThreadPool: a model's own worker threads (threads - 1 of them; the caller is the last one).
// parallel_for splits [0, n) into fixed chunks that depend only on n, the grain and the pool's
// size — never on timing — so results are bitwise the same on every run. Workers sleep on a
// condition variable between jobs: a pool never spins against BLAS or another model's pool.
//
// Sessions of one model share its pool and may run at the same time: a parallel_for that
// finds the pool busy with another session's job runs on its caller alone instead of waiting.
// Kernels reach the pool of the session that runs them through current_pool() (set by the
// kernel boundary, args.h), so the ~250 kernels keep their plain signatures.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace splice::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }
  // The most threads that ran chunks of one job at once so far.
  int max_threads_used() const { return max_used_.load(std::memory_order_relaxed); }

  // Runs f(begin, end) over [0, n) in at most size() chunks of at least `grain` elements.
  template <typename F>
  void parallel_for(int64_t n, int64_t grain, F&& f) {
    using Fn = std::remove_reference_t<F>;
    run(
        n, grain, [](void* ctx, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(b, e); },
        const_cast<void*>(static_cast<const void*>(&f)));
  }

 private:
  using ChunkFn = void (*)(void* ctx, int64_t begin, int64_t end);
  void run(int64_t n, int64_t grain, ChunkFn fn, void* ctx);
  // Takes and runs chunks of the current job until none are left; returns how many it ran.
  int64_t work();
  void worker_loop();

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the one caller whose job the pool runs

  // The current job (written by its caller under wake_mutex_ before waking the workers).
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<int> participants_{0};
  int active_workers_ = 0;  // workers still inside the current job (under wake_mutex_)
  std::atomic<int> max_used_{1};
};

// The pool of the session whose kernel is running on this thread; nullptr outside a kernel
// call (kernels then run on the calling thread alone).
ThreadPool* current_pool();

// Makes `pool` the current pool of this thread for its lifetime (the kernel boundary; tests).
class ScopedPool {
 public:
  explicit ScopedPool(ThreadPool* pool);
  ~ScopedPool();
  ScopedPool(const ScopedPool&) = delete;
  ScopedPool& operator=(const ScopedPool&) = delete;

 private:
  ThreadPool* saved_;
};

}  // namespace splice::cpu
