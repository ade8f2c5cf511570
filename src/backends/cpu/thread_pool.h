#pragma once
// ThreadPool: a model's own worker threads (threads - 1 of them; the caller is the last one).
// parallel_for splits [0, n) into at most size() fixed chunks that depend only on n, the grain
// and the pool's size — never on timing — so results are bitwise the same on every run; chunk
// i runs on participant i (the caller is participant 0), so a job of k chunks always runs on
// exactly k threads.
//
// Waiting: a worker that finished a job polls for the next one for a short while (kSpinWait)
// before it sleeps on a condition variable, and the caller polls for its workers' chunks the
// same way. A model's parallel ops come microseconds apart within a call, so the workers stay
// awake through a call and are woken (a futex call and a context switch) once per call
// rather than once per op; between calls they sleep, so a
// pool never spins for long against BLAS (which runs single-threaded inside the pool's chunks)
// or another model's pool.
//
// Sessions of one model share its pool and may run at the same time: a parallel_for that
// finds the pool busy with another session's job runs on its caller alone instead of waiting.
// Kernels reach the pool of the session that runs them through current_pool() (set by the
// kernel boundary, args.h), so the ~250 kernels keep their plain signatures.

#include <atomic>
#include <chrono>
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

  // One side's wait for a condition another thread makes true: poll for kSpinWait, then sleep.
  // notify() takes the mutex only when someone sleeps; the waiter counts itself asleep before
  // it last checks the condition, and the notifier changes the condition before it reads the
  // count (both sequentially consistent), so one of them always sees the other: no lost
  // wake-up.
  class Waiter {
   public:
    template <typename Pred>
    void wait(Pred ready);
    void notify();

   private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::atomic<int> sleepers_{0};
  };

  void run(int64_t n, int64_t grain, ChunkFn fn, void* ctx);
  // Runs the current job's chunk for participant `index`, if the job has one; whether it did.
  bool work(int index);
  void worker_loop(int index);

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the one caller whose job the pool runs

  // The current job: written by its caller, then published by incrementing generation_.
  ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  int64_t chunks_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  // Workers not yet done with the current job (each one reads the job, chunk or not, so the
  // next job is written only when this is 0).
  std::atomic<int> pending_{0};
  std::atomic<int> participants_{0};
  std::atomic<int> max_used_{1};
  Waiter job_ready_;  // workers wait for a new generation (or stop)
  Waiter job_done_;   // the caller waits for pending_ == 0
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
