// CUDA graphs (runtime/recorded_calls.h): a session records a call once its shapes have run,
// replays it after, and gives exactly the results of a session without graphs. Needs a GPU
// (skips without one).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/device_info.h"
#include "case_session.h"
#include "splice/splice.h"

namespace splice::cuda {
namespace {

using testing::case_dir;
using testing::case_inputs;
using testing::open_case;
using testing::tensor_args;

class GpuGraphs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
  }

  // Runs one call on both sessions and expects byte-identical results.
  static void run_both(Session& on, Session& off, std::map<std::string, Tensor>& inputs) {
    auto a = on.run(tensor_args(inputs));
    auto b = off.run(tensor_args(inputs));
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    ASSERT_EQ(a->outputs.size(), b->outputs.size());
    for (size_t i = 0; i < a->outputs.size(); ++i) {
      ASSERT_EQ(a->outputs[i].shape, b->outputs[i].shape);
      ASSERT_EQ(a->outputs[i].bytes.size(), b->outputs[i].bytes.size());
      EXPECT_EQ(std::memcmp(a->outputs[i].bytes.data(), b->outputs[i].bytes.data(),
                            a->outputs[i].bytes.size()),
                0)
          << "output " << i << " differs with graphs on";
    }
  }

  static void expect_same_state(const Session& on, const Session& off,
                                const std::vector<std::string>& names) {
    for (const auto& name : names) {
      auto a = on.state(name), b = off.state(name);
      ASSERT_TRUE(a.ok() && b.ok()) << name;
      ASSERT_EQ(a->bytes.size(), b->bytes.size()) << name;
      EXPECT_EQ(std::memcmp(a->bytes.data(), b->bytes.data(), a->bytes.size()), 0)
          << "buffer " << name << " differs with graphs on";
    }
  }

  static std::vector<std::string> buffers(const std::string& name) {
    LoadOptions options;
    options.device = "cuda";
    return Model::load(case_dir(name) + "/model.pt2", options)->state_names();
  }
};

// transformers' Llama with a static KV cache, one token per call at positions 0..15: the
// position is a tensor (cache_position), read on the device, so all 16 calls share one
// recording: call 0 runs step by step, call 1 is recorded, calls 1..15 are replays.
TEST_F(GpuGraphs, DecodeLoopOverSixteenPositionsReplaysOneRecording) {
  const std::string name = "hf_llama_static_cache.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  for (int64_t pos = 0; pos < 16; ++pos) {
    SCOPED_TRACE(pos);
    auto ids = Tensor::empty(DType::kInt64, {1, 1}).value();
    auto position = Tensor::empty(DType::kInt64, {1}).value();
    *ids.data<int64_t>() = 3 + (pos * 37) % 120;
    *position.data<int64_t>() = pos;
    std::map<std::string, Tensor> inputs{{"input_ids", ids}, {"cache_position", position}};
    run_both(on, off, inputs);
  }
  const GraphStats stats = on.graph_stats();
  EXPECT_EQ(stats.refused, 0) << stats.refusal;
  EXPECT_EQ(stats.recorded, 1);
  EXPECT_EQ(stats.replayed, 15);
  expect_same_state(on, off, buffers(name));
  const GraphStats none = off.graph_stats();
  EXPECT_EQ(none.recorded + none.replayed + none.refused, 0);
}

// Shapes that change the symbols' values key their own recordings: a prefill of 2 tokens and
// one of 3, each seen twice, are two recordings.
TEST_F(GpuGraphs, EachShapeGetsItsOwnRecording) {
  const std::string name = "hf_llama_static_cache.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  int64_t pos = 0;
  for (int64_t len : {2, 2, 3, 3, 2}) {
    SCOPED_TRACE(len);
    auto ids = Tensor::empty(DType::kInt64, {1, len}).value();
    auto position = Tensor::empty(DType::kInt64, {len}).value();
    for (int64_t i = 0; i < len; ++i) {
      ids.data<int64_t>()[i] = 3 + (pos * 11) % 120;
      position.data<int64_t>()[i] = pos++;
    }
    std::map<std::string, Tensor> inputs{{"input_ids", ids}, {"cache_position", position}};
    run_both(on, off, inputs);
  }
  const GraphStats stats = on.graph_stats();
  EXPECT_EQ(stats.refused, 0) << stats.refusal;
  EXPECT_EQ(stats.recorded, 2);
  EXPECT_EQ(stats.replayed, 3);
  expect_same_state(on, off, buffers(name));
}

// A write position read with .item() is a host symbol: the call waits for the device midway,
// so it is never recorded, says why, and still runs exactly as without graphs.
TEST_F(GpuGraphs, ItemPositionIsRefusedWithAReasonAndStillRuns) {
  const std::string name = "kv_cache_item_slice.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  for (int call = 0; call < 3; ++call) {
    auto in = case_inputs(name, call);
    run_both(on, off, in);
  }
  const GraphStats stats = on.graph_stats();
  EXPECT_EQ(stats.recorded, 0);
  EXPECT_EQ(stats.refused, 1);
  EXPECT_NE(stats.refusal.find("CUDA graph"), std::string::npos) << stats.refusal;
  expect_same_state(on, off, buffers(name));
}

// set_state on a buffer the plan updates in place copies the value into the session's own
// buffer, which the recording reads: replays go on (no new recording) and follow the new state.
TEST_F(GpuGraphs, SetStateIsSeenByReplays) {
  const std::string name = "hf_llama_static_cache.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  auto step = [&](int64_t pos) {
    auto ids = Tensor::empty(DType::kInt64, {1, 1}).value();
    auto position = Tensor::empty(DType::kInt64, {1}).value();
    *ids.data<int64_t>() = 5 + pos;
    *position.data<int64_t>() = pos;
    std::map<std::string, Tensor> inputs{{"input_ids", ids}, {"cache_position", position}};
    run_both(on, off, inputs);
  };
  for (int64_t pos = 0; pos < 3; ++pos) step(pos);
  ASSERT_EQ(on.graph_stats().recorded, 1);
  // Zero the first layer's key cache in both sessions.
  auto cache = on.state("key_cache_0");
  ASSERT_TRUE(cache.ok()) << cache.error().message();
  std::vector<std::byte> zeros(cache->bytes.size());
  const TensorArg zero{zeros.data(), cache->dtype, cache->shape};
  ASSERT_TRUE(on.set_state("key_cache_0", zero).ok());
  ASSERT_TRUE(off.set_state("key_cache_0", zero).ok());
  for (int64_t pos = 3; pos < 6; ++pos) step(pos);
  EXPECT_EQ(on.graph_stats().recorded, 1);
  EXPECT_EQ(on.graph_stats().replayed, 5);
  expect_same_state(on, off, buffers(name));
}

// Two sessions on two threads record and replay at the same time (each capture is thread-local:
// the other thread's allocations and launches cannot break it), each giving exactly what one
// session without graphs gives.
TEST_F(GpuGraphs, SessionsOnTwoThreadsRecordAtTheSameTime) {
  const std::string name = "hf_llama_static_cache.default";
  auto step_inputs = [](int64_t pos) {
    auto ids = Tensor::empty(DType::kInt64, {1, 1}).value();
    auto position = Tensor::empty(DType::kInt64, {1}).value();
    *ids.data<int64_t>() = 3 + (pos * 29) % 120;
    *position.data<int64_t>() = pos;
    return std::map<std::string, Tensor>{{"input_ids", ids}, {"cache_position", position}};
  };
  // The reference: one session without graphs, on this thread.
  Session reference = open_case(name, "cuda", false);
  std::vector<std::vector<std::byte>> expected;
  for (int64_t pos = 0; pos < 8; ++pos) {
    auto in = step_inputs(pos);
    auto r = reference.run(tensor_args(in));
    ASSERT_TRUE(r.ok()) << r.error().message();
    expected.push_back(r->outputs[0].bytes);
  }
  Session a = open_case(name, "cuda", true), b = open_case(name, "cuda", true);
  std::vector<std::string> failures(2);
  auto decode = [&](Session& s, std::string& failure) {
    for (int64_t pos = 0; pos < 8; ++pos) {
      auto in = step_inputs(pos);
      auto r = s.run(tensor_args(in));
      if (!r.ok()) {
        failure = r.error().message();
        return;
      }
      if (r->outputs[0].bytes != expected[static_cast<size_t>(pos)]) {
        failure = "position " + std::to_string(pos) + " differs from the session without graphs";
        return;
      }
    }
  };
  std::thread ta([&] { decode(a, failures[0]); });
  std::thread tb([&] { decode(b, failures[1]); });
  ta.join();
  tb.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
  for (Session* s : {&a, &b}) {
    EXPECT_EQ(s->graph_stats().refused, 0) << s->graph_stats().refusal;
    EXPECT_EQ(s->graph_stats().recorded, 1);
    EXPECT_EQ(s->graph_stats().replayed, 7);
  }
}

}  // namespace
}  // namespace splice::cuda
