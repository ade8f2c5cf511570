// parallel_for covers [0, n) exactly once, and the multi-threaded contiguous and row-wise fast
// paths give the same bits as one thread.
#include "backends/cpu/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "cpu_test_util.h"

namespace splice::cpu {
namespace {

using namespace testing;

// Restores the thread count when a test ends.
struct ThreadsGuard {
  ~ThreadsGuard() { set_num_threads(1); }
};

TEST(Parallel, CoversEveryIndexOnce) {
  ThreadsGuard guard;
  set_num_threads(4);
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
  set_num_threads(0);
  EXPECT_EQ(num_threads(), 1);
}

TEST(Parallel, PointwiseResultsAreBitwiseEqual) {
  ThreadsGuard guard;
  const int64_t n = 200000;
  Tensor a = Tensor::empty(DType::kFloat32, {n});
  Tensor b = Tensor::empty(DType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) {
    a.data<float>()[i] = static_cast<float>(i) * 0.37f - 1000.0f;
    b.data<float>()[i] = static_cast<float>(n - i) * 1.3f;
  }
  set_num_threads(1);
  Tensor add1 = call1("aten.add.Tensor", {a, b, f64(0.5)});
  Tensor sin1 = call1("aten.sin.default", {a});
  set_num_threads(4);
  Tensor add4 = call1("aten.add.Tensor", {a, b, f64(0.5)});
  Tensor sin4 = call1("aten.sin.default", {a});
  EXPECT_EQ(std::memcmp(add1.raw_data(), add4.raw_data(), add1.nbytes()), 0);
  EXPECT_EQ(std::memcmp(sin1.raw_data(), sin4.raw_data(), sin1.nbytes()), 0);
  EXPECT_EQ(add4.data<float>()[7], (7 * 0.37f - 1000.0f) + 0.5f * ((n - 7) * 1.3f));
  // An integer division by zero found by any worker is still reported.
  Tensor ia = Tensor::empty(DType::kInt64, {n});
  Tensor ib = Tensor::empty(DType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) {
    ia.data<int64_t>()[i] = i;
    ib.data<int64_t>()[i] = i == n - 1 ? 0 : 3;
  }
  call_error("aten.remainder.Tensor", {ia, ib});
}


TEST(Parallel, StridedRowsMatchTheContiguousResultOnAnyThreadCount) {
  // The rotary shape: a half of the last dim (rows of 32, stride 64) times a broadcast table;
  // big enough that the row-wise path splits across threads, with chunks starting mid-tensor.
  ThreadsGuard guard;
  Tensor x = Tensor::empty(DType::kFloat32, {2, 8, 512, 64});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 977) - 400;
  Tensor table = Tensor::empty(DType::kFloat32, {512, 32});
  for (int64_t i = 0; i < table.numel(); ++i) table.data<float>()[i] = 0.25f * (i % 13);
  Tensor half = x.view_as({2, 8, 512, 32}, x.strides(), 32);  // x[..., 32:]
  Tensor expected = call1("aten.mul.Tensor", {half.contiguous_copy(), table});
  Tensor negated = call1("aten.neg.default", {half.contiguous_copy()});
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
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
