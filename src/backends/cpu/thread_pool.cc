// The CPU backend's per-model thread pool (see thread_pool.h).
#include "backends/cpu/thread_pool.h"

#include <algorithm>
#include <system_error>

namespace splice::cpu {

namespace {
thread_local ThreadPool* t_current_pool = nullptr;
}  // namespace

ThreadPool* current_pool() { return t_current_pool; }

ScopedPool::ScopedPool(ThreadPool* pool) : saved_(t_current_pool) { t_current_pool = pool; }
ScopedPool::~ScopedPool() { t_current_pool = saved_; }

ThreadPool::ThreadPool(int threads) : size_(std::max(threads, 1)) {
  for (int i = 1; i < size_; ++i) {
    try {
      workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error&) {
      break;  // no more threads available: the pool runs with fewer workers
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int64_t ThreadPool::work() {
  int64_t ran = 0;
  while (true) {
    const int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (c >= chunks_) break;
    const int64_t begin = c * chunk_;
    fn_(ctx_, begin, std::min(n_, begin + chunk_));
    ++ran;
    chunks_done_.fetch_add(1, std::memory_order_release);
  }
  return ran;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(wake_mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++active_workers_;
    }
    if (work() > 0) participants_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      --active_workers_;
    }
    done_cv_.notify_all();
  }
}

void ThreadPool::run(int64_t n, int64_t grain, ChunkFn fn, void* ctx) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(n / std::max<int64_t>(grain, 1), 1);
  const int64_t chunks = std::min<int64_t>(static_cast<int64_t>(workers_.size()) + 1, max_chunks);
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (chunks <= 1 || !busy.owns_lock()) {
    // Too small to share, or another session's job holds the pool: same chunks, one thread.
    const int64_t chunk = (n + chunks - 1) / chunks;
    for (int64_t b = 0; b < n; b += chunk) fn(ctx, b, std::min(n, b + chunk));
    return;
  }
  {
    std::unique_lock<std::mutex> lock(wake_mutex_);
    // A worker woken late for the previous job may still be looking at it (finding no chunk
    // left): let it leave before the job's fields change.
    done_cv_.wait(lock, [&] { return active_workers_ == 0; });
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    chunks_ = chunks;
    chunk_ = (n + chunks - 1) / chunks;
    next_chunk_.store(0, std::memory_order_relaxed);
    chunks_done_.store(0, std::memory_order_relaxed);
    participants_.store(0, std::memory_order_relaxed);
    ++generation_;
  }
  wake_.notify_all();
  const int64_t mine = work();
  // The job's state must outlive every worker that entered it: wait until all chunks ran and
  // every worker left (a worker that found no chunk left still read the job).
  std::unique_lock<std::mutex> lock(wake_mutex_);
  done_cv_.wait(lock, [&] {
    return chunks_done_.load(std::memory_order_acquire) == chunks_ && active_workers_ == 0;
  });
  const int used = participants_.load(std::memory_order_relaxed) + (mine > 0 ? 1 : 0);
  int prev = max_used_.load(std::memory_order_relaxed);
  while (used > prev && !max_used_.compare_exchange_weak(prev, used)) {
  }
}

}  // namespace splice::cpu
