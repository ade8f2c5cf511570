// Attention on the GPU against the CPU backend (suite GpuAttention): every case of
// attention_cases.h in float32, float64, float16 and bfloat16 — which covers the tensor-core
// kernel (fp16/bf16 prefill with head dims 32..128), the CUDA-core kernel (everything else),
// key splits with their combine (decode, with scratch) and the same without scratch, masks,
// causal with L != S, grouped KV heads, fully masked rows, S = 0, and the logsumexp forms.
// Tolerances (attention_cases.h): output float32 2e-5, float64 1e-10, float16 2e-3, bfloat16
// 1.6e-2 (relative and absolute); logsumexp 2e-5 (float32) / 1e-4 (16-bit inputs). The decode
// cases (decode_attention_cases) run the decode kernel, with and without scratch counters.
#include <gtest/gtest.h>

#include <cstdio>

#include "attention_cases.h"
#include "backends/cuda/attention.h"
#include "backends/cuda/attention_plan.h"
#include "backends/cuda/device_info.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

class GpuAttention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  void TearDown() override {
    if (gpu_present()) std::printf("[ summary  ] %s\n", log_.summary().c_str());
  }

  void run_case(const AttnCase& c, DType dt, const KernelScratch& scratch,
                const std::string& extra) {
    const AttnInputs in = make_attn_inputs(c, dt, gen_);
    AttentionArgs args;
    args.q = arena_.to_device(in.q);
    args.k = arena_.to_device(in.k);
    args.v = arena_.to_device(in.v);
    DeviceTensor mask;
    if (in.mask) {
      mask = arena_.to_device(*in.mask);
      args.mask = &mask;
    }
    args.causal = c.causal;
    args.scale = c.scale;
    args.gqa = c.gqa || c.lse != 0;  // the fused forms always group
    log_.record(c.name + " " + dname(dt) + extra,
                check_against_cpu(
                    arena_, in.target, in.args,
                    [&](const std::vector<DeviceTensor>& o) {
                      args.out = o[0];
                      args.lse = o.size() > 1 ? &o[1] : nullptr;
                      return launch_problem(attention(args, scratch, nullptr));
                    },
                    c.strided_out, attention_tolerances(dt), in.outputs));
  }

  DeviceArena arena_;
  CaseLog log_;
  std::mt19937 gen_{2718};
};

TEST_F(GpuAttention, EveryCaseEveryDtype) {
  const KernelScratch scratch = arena_.scratch(16 << 20);
  for (const AttnCase& c : attention_cases()) {
    for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      if (dt == DType::kFloat64 && c.L * c.S > 300000) continue;  // CPU reference time
      run_case(c, dt, scratch, "");
    }
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuAttention, WithoutScratchNoSplits) {
  for (const AttnCase& c : attention_cases()) {
    if (c.L > 1) continue;  // the decode cases are the ones that split
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
      run_case(c, dt, KernelScratch{}, " (no scratch)");
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

// The decode kernel on the decode shapes (attention_cases.h), each dtype it takes: with a
// session-like scratch (counters: the last block of each unit combines in the launch), and
// with scratch but no counters (a second kernel combines). The plan must pick the decode kernel.
TEST_F(GpuAttention, DecodeCasesEveryDtype) {
  const KernelScratch scratch = arena_.scratch(64 << 20);
  KernelScratch no_counters = arena_.scratch(64 << 20);
  no_counters.counters = nullptr;
  no_counters.counter_count = 0;
  auto sms = current_sm_count();
  ASSERT_TRUE(sms.ok());
  for (const AttnCase& c : decode_attention_cases()) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      const AttnInputs in = make_attn_inputs(c, dt, gen_);
      AttentionArgs args;
      args.q = arena_.to_device(in.q);
      args.k = arena_.to_device(in.k);
      args.v = arena_.to_device(in.v);
      args.gqa = true;
      Shape out_shape(in.q.sizes().begin(), in.q.sizes().end());
      out_shape.back() = c.ev();
      args.out = arena_.to_device(make_output(dt, out_shape, false));
      auto plan = plan_attention(args, *sms, scratch);
      ASSERT_TRUE(plan.ok()) << plan.error().message();
      EXPECT_EQ(plan->kernel, AttnKernel::kDecode)
          << c.name << " " << dname(dt) << ": " << plan->reason;
      run_case(c, dt, scratch, "");
      if (c.S > 1000 && c.S < 10000) run_case(c, dt, no_counters, " (no counters)");
    }
  }
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

// Calls of the decode kernel in a row leave its counters at 0 (each launch's last blocks reset
// them): run the same split decode twice more and read them back.
TEST_F(GpuAttention, DecodeCountersReturnToZero) {
  const KernelScratch scratch = arena_.scratch(16 << 20);
  AttnCase c;
  for (const AttnCase& d : decode_attention_cases())
    if (d.S == 2049) {
      c = d;  // gqa 32/8, no mask: 8 units, split
      break;
    }
  ASSERT_EQ(c.S, 2049);
  for (int i = 0; i < 3; ++i) run_case(c, DType::kFloat16, scratch, " repeat");
  std::vector<uint32_t> counters(scratch.counter_count);
  ASSERT_EQ(
      cudaMemcpy(counters.data(), scratch.counters, counters.size() * 4, cudaMemcpyDeviceToHost),
      cudaSuccess);
  for (size_t i = 0; i < counters.size(); ++i) ASSERT_EQ(counters[i], 0u) << "counter " << i;
  EXPECT_EQ(log_.failed(), 0) << log_.summary();
}

TEST_F(GpuAttention, ScratchQuery) {
  AttnCase c;
  c.B = 1;
  c.Hq = 32;
  c.Hk = 8;
  c.L = 1;
  c.S = 4096;
  c.E = 128;
  c.gqa = true;
  const AttnInputs in = make_attn_inputs(c, DType::kFloat16, gen_);
  const Tensor out = make_output(DType::kFloat16, {1, 32, 1, 128}, false);
  AttentionArgs args;
  args.q = arena_.to_device(in.q);
  args.k = arena_.to_device(in.k);
  args.v = arena_.to_device(in.v);
  args.gqa = true;
  args.out = arena_.to_device(out);
  auto bytes = attention_scratch_bytes(args);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  EXPECT_GT(*bytes, 0u);
  EXPECT_LT(*bytes, size_t{16} << 20);
}

}  // namespace
}  // namespace splice::cuda
