// parallel_for covers [0, n) exactly once on a model's thread pool, the multi-threaded
// contiguous and row-wise fast paths give the same bits as one thread, and a pool busy with
// another caller's job runs the next job on its caller alone.
#include "backends/cpu/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

// A pool of `threads` made current on this thread for the guard's lifetime (what the kernel
// boundary does for a session's kernels).
struct PoolGuard {
  explicit PoolGuard(int threads) : pool(threads), scope(&pool) {}
  ThreadPool pool;
  ScopedPool scope;
};

TEST(Parallel, CoversEveryIndexOnce) {
  EXPECT_EQ(num_threads(), 1);  // no pool outside a kernel call
  PoolGuard guard(4);
  EXPECT_EQ(num_threads(), 4);
  const int64_t n = 100003;
  std::vector<std::atomic<int>> hits(n);
  std::atomic<int> chunks{0};
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    chunks.fetch_add(1);
    for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  EXPECT_EQ(chunks.load(), 3);  // n / grain = 3 chunks at most
  // Small loops stay on one chunk.
  chunks = 0;
  parallel_for(100, kParallelGrain, [&](int64_t, int64_t) { chunks.fetch_add(1); });
  EXPECT_EQ(chunks.load(), 1);
  parallel_for(0, kParallelGrain, [&](int64_t, int64_t) { chunks.fetch_add(1); });
  EXPECT_EQ(chunks.load(), 1);
  EXPECT_EQ(guard.pool.max_threads_used() >= 1, true);
}

TEST(Parallel, APoolRunsEachJobOnAllItsThreads) {
  PoolGuard guard(3);
  std::atomic<int> running{0}, most{0};
  // Every chunk waits until all three are running: only a pool that really runs them at once
  // finishes (a chunk gives up after a second so a broken pool fails instead of hanging).
  parallel_for(3 * kParallelGrain, kParallelGrain, [&](int64_t, int64_t) {
    const int now = running.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    for (int spin = 0; spin < 1000 && running.load() < 3; ++spin)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_EQ(most.load(), 3);
  EXPECT_EQ(guard.pool.max_threads_used(), 3);
}

TEST(Parallel, ABusyPoolRunsAnotherCallersJobOnItsCallerAlone) {
  ThreadPool pool(2);
  std::atomic<bool> inside{false}, release{false};
  std::thread first([&] {
    ScopedPool scope(&pool);
    parallel_for(2 * kParallelGrain, kParallelGrain, [&](int64_t, int64_t) {
      inside = true;
      while (!release.load()) std::this_thread::yield();
    });
  });
  while (!inside.load()) std::this_thread::yield();
  // The pool is busy with `first`'s job: this job must still finish, on this thread.
  {
    ScopedPool scope(&pool);
    std::atomic<int> chunks{0};
    const auto self = std::this_thread::get_id();
    std::atomic<bool> elsewhere{false};
    parallel_for(2 * kParallelGrain, kParallelGrain, [&](int64_t, int64_t) {
      chunks.fetch_add(1);
      if (std::this_thread::get_id() != self) elsewhere = true;
    });
    EXPECT_EQ(chunks.load(), 2);  // the same chunks as on a free pool
    EXPECT_FALSE(elsewhere.load());
  }
  release = true;
  first.join();
}

TEST(Parallel, PointwiseResultsAreBitwiseEqual) {
  const int64_t n = 200000;
  Tensor a = Tensor::empty(DType::kFloat32, {n}).value();
  Tensor b = Tensor::empty(DType::kFloat32, {n}).value();
  for (int64_t i = 0; i < n; ++i) {
    a.data<float>()[i] = static_cast<float>(i) * 0.37f - 1000.0f;
    b.data<float>()[i] = static_cast<float>(n - i) * 1.3f;
  }
  Tensor add1 = call1("aten.add.Tensor", {a, b, f64(0.5)});
  Tensor sin1 = call1("aten.sin.default", {a});
  PoolGuard guard(4);
  Tensor add4 = call1("aten.add.Tensor", {a, b, f64(0.5)});
  Tensor sin4 = call1("aten.sin.default", {a});
  EXPECT_EQ(std::memcmp(add1.raw_data(), add4.raw_data(), add1.nbytes()), 0);
  EXPECT_EQ(std::memcmp(sin1.raw_data(), sin4.raw_data(), sin1.nbytes()), 0);
  EXPECT_EQ(add4.data<float>()[7], (7 * 0.37f - 1000.0f) + 0.5f * ((n - 7) * 1.3f));
  // An integer division by zero found by any worker is still reported.
  Tensor ia = Tensor::empty(DType::kInt64, {n}).value();
  Tensor ib = Tensor::empty(DType::kInt64, {n}).value();
  for (int64_t i = 0; i < n; ++i) {
    ia.data<int64_t>()[i] = i;
    ib.data<int64_t>()[i] = i == n - 1 ? 0 : 3;
  }
  call_error("aten.remainder.Tensor", {ia, ib});
}

TEST(Parallel, StridedRowsMatchTheContiguousResultOnAnyThreadCount) {
  // The rotary shape: a half of the last dim (rows of 32, stride 64) times a broadcast table;
  // big enough that the row-wise path splits across threads, with chunks starting mid-tensor.
  Tensor x = Tensor::empty(DType::kFloat32, {2, 8, 512, 64}).value();
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 977) - 400;
  Tensor table = Tensor::empty(DType::kFloat32, {512, 32}).value();
  for (int64_t i = 0; i < table.numel(); ++i) table.data<float>()[i] = 0.25f * (i % 13);
  Tensor half = x.view_as({2, 8, 512, 32}, x.strides(), 32);  // x[..., 32:]
  Tensor expected = call1("aten.mul.Tensor", {half.contiguous_copy().value(), table});
  Tensor negated = call1("aten.neg.default", {half.contiguous_copy().value()});
  for (int threads : {1, 2, 3}) {
    PoolGuard guard(threads);
    Tensor got = call1("aten.mul.Tensor", {half, table});
    ASSERT_EQ(got.nbytes(), expected.nbytes());
    EXPECT_EQ(std::memcmp(got.raw_data(), expected.raw_data(), got.nbytes()), 0) << threads;
    Tensor neg = call1("aten.neg.default", {half});
    EXPECT_EQ(std::memcmp(neg.raw_data(), negated.raw_data(), neg.nbytes()), 0) << threads;
  }
  EXPECT_EQ(expected.data<float>()[1], (33 % 977 - 400.0f) * 0.25f);
}

}  // namespace
}  // namespace splice::cpu
