// The CPU backend's per-model thread pool (see thread_pool.h).
#include "backends/cpu/thread_pool.h"

#include <algorithm>
#include <system_error>

namespace splice::cpu {

namespace {
thread_local ThreadPool* t_current_pool = nullptr;

// How long a waiting thread polls before it sleeps: longer than the gap between two parallel
// ops of one call (a few microseconds of serial work), far shorter than the gap between calls
// of a caller that does anything else.
constexpr auto kSpinWait = std::chrono::microseconds(50);

// A polling loop's pause: tells the core this is a spin-wait (on x86 it yields the pipeline to
// the hyperthread sibling and saves power).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

ThreadPool* current_pool() { return t_current_pool; }

ScopedPool::ScopedPool(ThreadPool* pool) : saved_(t_current_pool) { t_current_pool = pool; }
ScopedPool::~ScopedPool() { t_current_pool = saved_; }

template <typename Pred>
void ThreadPool::Waiter::wait(Pred ready) {
  // The clock is read every 64 polls only: a poll is a load and a pause (tens of cycles).
  const auto deadline = std::chrono::steady_clock::now() + kSpinWait;
  for (int polls = 1;; ++polls) {
    if (ready()) return;
    cpu_relax();
    if (polls % 64 == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1);
  cv_.wait(lock, ready);
  sleepers_.fetch_sub(1);
}

void ThreadPool::Waiter::notify() {
  if (sleepers_.load() == 0) return;
  // Taking the mutex orders this notify after a sleeper's last check of the condition (it
  // holds the mutex from that check until it is inside cv_.wait).
  { std::lock_guard<std::mutex> lock(mutex_); }
  cv_.notify_all();
}

ThreadPool::ThreadPool(int threads) : size_(std::max(threads, 1)) {
  for (int i = 1; i < size_; ++i) {
    try {
      workers_.emplace_back([this, i] { worker_loop(i); });
    } catch (const std::system_error&) {
      break;  // no more threads available: the pool runs with fewer workers
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  job_ready_.notify();
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::work(int index) {
  if (index >= chunks_) return false;
  const int64_t begin = index * chunk_;
  // ceil(n / chunks)-sized chunks can leave the last one empty (n = 9 in 4 chunks of 3).
  if (begin < n_) fn_(ctx_, begin, std::min(n_, begin + chunk_));
  return begin < n_;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  while (true) {
    job_ready_.wait([&] { return stop_.load() || generation_.load() != seen; });
    if (stop_.load()) return;
    // The caller publishes a job only once every worker finished the last one, so no
    // generation is ever skipped.
    seen = generation_.load();
    if (work(index)) participants_.fetch_add(1, std::memory_order_relaxed);
    if (pending_.fetch_sub(1) == 1) job_done_.notify();
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
  // Every worker left the previous job (pending_ was 0 when it ended): the fields are free.
  fn_ = fn;
  ctx_ = ctx;
  n_ = n;
  chunks_ = chunks;
  chunk_ = (n + chunks - 1) / chunks;
  participants_.store(0, std::memory_order_relaxed);
  pending_.store(static_cast<int>(workers_.size()));
  generation_.fetch_add(1);  // publishes the fields above (sequentially consistent)
  job_ready_.notify();
  const bool mine = work(0);
  job_done_.wait([&] { return pending_.load() == 0; });
  const int used = participants_.load(std::memory_order_relaxed) + (mine ? 1 : 0);
  int prev = max_used_.load(std::memory_order_relaxed);
  while (used > prev && !max_used_.compare_exchange_weak(prev, used)) {
  }
}

}  // namespace splice::cpu
