// CUDA graphs (runtime/recorded_calls.h): a session records a call once its shapes have run,
// replays it after, and gives exactly the results of a session without graphs. Needs a GPU
// (skips without one).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "backends/cuda/device_info.h"
#include "case_session.h"
#include "splice/splice.h"
#include "tensor/half.h"

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

  // The session refused nothing and holds `recorded` recordings, replayed `replayed` times.
  static void expect_replays(const Session& on, int64_t recorded, int64_t replayed) {
    const GraphStats stats = on.graph_stats();
    EXPECT_EQ(stats.refused, 0) << stats.refusal;
    EXPECT_EQ(stats.recorded, recorded);
    EXPECT_EQ(stats.replayed, replayed);
  }

  // Case `name`'s call 0 three times, with graphs on and off, byte for byte the same: run step
  // by step, then recorded, then replayed (one recording, two replays, nothing refused).
  static void expect_call_zero_recorded_and_replayed(const std::string& name) {
    Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE(call);
      std::map<std::string, Tensor> inputs = case_inputs(name, 0);
      run_both(on, off, inputs);
    }
    expect_replays(on, 1, 2);
  }

  // kv_cache_item_slice's inputs: a key (f32) and value (f16) row written at `pos`, their
  // values varying with `seed`.
  static std::map<std::string, Tensor> item_cache_inputs(int64_t pos, int seed) {
    auto k = Tensor::empty(DType::kFloat32, {1, 2, 1, 4}).value();
    auto v = Tensor::empty(DType::kFloat16, {1, 2, 1, 4}).value();
    auto p = Tensor::empty(DType::kInt64, {}).value();
    for (int64_t i = 0; i < 8; ++i) {
      k.data<float>()[i] = static_cast<float>(seed * 8 + i) * 0.25f;
      v.data<Half>()[i] = Half(static_cast<float>(seed - i) * 0.5f);
    }
    *p.data<int64_t>() = pos;
    return {{"k", k}, {"v", v}, {"pos", p}};
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
  expect_replays(on, 1, 15);
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
  expect_replays(on, 2, 3);
  expect_same_state(on, off, buffers(name));
}

// A KV cache written at pos.item(): u0 only says where the window starts, so the recording
// reads it on the device (runtime/device_positions.h) and 16 calls at moving positions share
// one recording, with exactly the results and state of a session without graphs.
TEST_F(GpuGraphs, ItemPositionDecodeLoopReplaysOneRecording) {
  const std::string name = "kv_cache_item_slice.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  for (int call = 0; call < 16; ++call) {
    SCOPED_TRACE(call);
    std::map<std::string, Tensor> inputs = item_cache_inputs((call * 3) % 8, call);
    run_both(on, off, inputs);
  }
  expect_replays(on, 1, 15);
  expect_same_state(on, off, buffers(name));
}

// A CUDA export's attention (_scaled_dot_product_efficient_attention, with its logsumexp and
// philox outputs) runs on the device, so its calls record and replay like any other: call 0
// runs step by step, call 1 is recorded, calls 1 and 2 are replays.
TEST_F(GpuGraphs, CudaExportAttentionReplaysAsOneRecording) {
  expect_call_zero_recorded_and_replayed("attn_causal.default.cuda");
}

// Writes through boolean masks (transformers 5.17's Idefics3 position ids,
// `position_ids[mask] = pos_ids[mask]`) run as where (masked_write_to_where): no gather whose
// length waits for the mask's count, so the call records like any other.
TEST_F(GpuGraphs, MaskedWritesReplayAsOneRecording) {
  expect_call_zero_recorded_and_replayed("v_masked_write.default");
}

// A position outside u0's range [0, 7] fails a replay as it fails without graphs: a host input
// before anything runs (the .item()'s own error), a device input on the device (the error
// names the .item() and its symbol); the cache is left as it was, and replays go on after.
TEST_F(GpuGraphs, ItemPositionOutOfRangeFailsAReplayAndWritesNothing) {
  const std::string name = "kv_cache_item_slice.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  for (int call = 0; call < 3; ++call) {
    std::map<std::string, Tensor> inputs = item_cache_inputs(call + 2, call);
    run_both(on, off, inputs);
  }
  ASSERT_EQ(on.graph_stats().recorded, 1);
  std::map<std::string, Tensor> bad = item_cache_inputs(8, 7);
  auto a = on.run(tensor_args(bad));
  auto b = off.run(tensor_args(bad));
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(a.error().message(), b.error().message());
  EXPECT_EQ(a.error().exit_code(), 2);
  expect_same_state(on, off, buffers(name));

  // The same position in device memory: read there by the replay.
  void* d_pos = nullptr;
  ASSERT_EQ(cudaMalloc(&d_pos, sizeof(int64_t)), cudaSuccess);
  const int64_t nine = 9;
  ASSERT_EQ(cudaMemcpy(d_pos, &nine, sizeof nine, cudaMemcpyHostToDevice), cudaSuccess);
  std::map<std::string, TensorArg> device_args = tensor_args(bad);
  device_args["pos"] = TensorArg{d_pos, DType::kInt64, {}, Device{DeviceType::kCUDA, 0}};
  auto c = on.run(device_args);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::kOutOfRange) << c.error().message();
  EXPECT_NE(c.error().message().find("symbol u0: the value 9 is outside its range [0, 7]"),
            std::string::npos)
      << c.error().message();
  ASSERT_EQ(cudaFree(d_pos), cudaSuccess);
  expect_same_state(on, off, buffers(name));

  std::map<std::string, Tensor> good = item_cache_inputs(5, 11);
  run_both(on, off, good);
  EXPECT_EQ(on.graph_stats().recorded, 1);
  expect_same_state(on, off, buffers(name));
}

// A position that also feeds a kernel (the attention mask compares pos.item() with an arange)
// is a host value: the call is never recorded, says which node uses it, and still runs
// exactly as without graphs.
TEST_F(GpuGraphs, ItemUsedByAKernelIsRefusedWithAReasonAndStillRuns) {
  const std::string name = "f_kv_slice_item_sdpa_mask.default";
  Session on = open_case(name, "cuda", true), off = open_case(name, "cuda", false);
  for (int call = 0; call < 3; ++call) {
    auto in = case_inputs(name, call);
    run_both(on, off, in);
  }
  const GraphStats stats = on.graph_stats();
  EXPECT_EQ(stats.recorded, 0);
  EXPECT_EQ(stats.refused, 1);
  EXPECT_NE(stats.refusal.find("u0 is used by node 'le_1' (aten.le.Scalar)"), std::string::npos)
      << stats.refusal;
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
