// Decode attention timed on the GPU (suite GpuAttentionBench; skipped without a device): one
// layer of a decoder's decode step — 32 q heads, 8 KV heads, head dim 64, one query row, fp16
// and bf16 — at KV 2048 and 32768, 200 calls recorded in a CUDA graph and replayed, timed with
// CUDA events, next to a device-to-device copy of the same K/V bytes timed the same way. It
// prints µs per call, the K/V bandwidth and its share of the copy's
// (`[ decode   ] ...` lines), the figures issue 35 asks for (≤ 4 µs at KV 2048, ≥ 70% of the
// copy bandwidth at KV 32768). It checks only that the plan picked the decode kernel and that
// the launches succeed: timings vary by GPU, so they are printed, not gated.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "attention_cases.h"
#include "backends/cuda/attention.h"
#include "backends/cuda/attention_plan.h"
#include "backends/cuda/device_info.h"
#include "graph_timing.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

TEST(GpuAttentionBench, DecodeMicrobench) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  DeviceArena arena;
  const KernelScratch scratch = arena.scratch(64 << 20);
  std::mt19937 gen(5);
  auto sms = current_sm_count();
  ASSERT_TRUE(sms.ok());
  for (int64_t S : {2048, 32768}) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      AttnCase c;
      c.B = 1;
      c.Hq = 32;
      c.Hk = 8;
      c.L = 1;
      c.S = S;
      c.E = 64;
      c.gqa = true;
      const AttnInputs in = make_attn_inputs(c, dt, gen);
      AttentionArgs args;
      args.q = arena.to_device(in.q);
      args.k = arena.to_device(in.k);
      args.v = arena.to_device(in.v);
      args.gqa = true;
      args.out = arena.to_device(make_output(dt, {1, 32, 1, 64}, false));
      auto plan = plan_attention(args, *sms, scratch);
      ASSERT_TRUE(plan.ok()) << plan.error().message();
      ASSERT_EQ(plan->kernel, AttnKernel::kDecode) << plan->reason;
      bool ok = true;
      const double ms = graph_time_ms(
          [&](cudaStream_t st) { ok = ok && attention(args, scratch, st).ok(); }, 200);
      ASSERT_TRUE(ok);
      ASSERT_GT(ms, 0) << "the decode launches could not be recorded in a CUDA graph";
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const size_t kv_bytes = static_cast<size_t>(2 * c.Hk * S * c.E * dtype_size(dt));
      void* src = arena.alloc(kv_bytes);
      void* dst = arena.alloc(kv_bytes);
      const double copy_ms = graph_time_ms(
          [&](cudaStream_t st) {
            cudaMemcpyAsync(dst, src, kv_bytes, cudaMemcpyDeviceToDevice, st);
          },
          200);
      // A copy reads and writes its bytes; attention reads K/V (and writes little).
      const double attn_gbs = kv_bytes / (ms * 1e6);
      const double copy_gbs = 2.0 * kv_bytes / (copy_ms * 1e6);
      std::printf(
          "[ decode   ] KV %lld %s: %.2f us per call (grid %lld units x %lld splits, %lld keys "
          "a split), K/V %.1f MB at %.0f GB/s = %.0f%% of the copy's %.0f GB/s\n",
          static_cast<long long>(S), dname(dt).c_str(), ms * 1e3,
          static_cast<long long>(plan->params.units), static_cast<long long>(plan->params.splits),
          static_cast<long long>(plan->params.split_keys), kv_bytes / 1e6, attn_gbs,
          100.0 * attn_gbs / copy_gbs, copy_gbs);
    }
  }
}

}  // namespace
}  // namespace splice::cuda
