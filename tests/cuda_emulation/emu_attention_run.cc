// Host emulation, step 3: the decode attention kernel (attention_decode.cu rewritten by
// prepare_cu.py, each block's 256 threads as threads) on every decode case of attention_cases.h
// up to 4099 keys, in float32, float16 and bfloat16, against the CPU backend with the GPU
// test's tolerances. Planned for several SM counts: key splits combined in the launch by the
// last block of each unit through the scratch counters (which must read 0 again afterwards),
// splits of many tiles, and one split.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "attention_cases.h"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/attention_plan.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

DeviceTensor host_view(const Tensor& t) {
  DeviceTensor d;
  d.data = t.raw_data();
  d.dtype = t.dtype();
  d.rank = static_cast<int>(t.dim());
  for (int i = 0; i < d.rank; ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

TEST(EmuAttentionDecode, EveryDecodeCaseAgainstTheCpuBackend) {
  std::mt19937 gen(99);
  CaseLog log;
  std::vector<uint32_t> counters(kScratchCounters, 0);
  std::vector<double> scratch_mem((64 << 20) / 8);
  const KernelScratch scratch{scratch_mem.data(), scratch_mem.size() * 8, counters.data(),
                              counters.size()};
  int decode_runs = 0, split_runs = 0;
  for (const AttnCase& c : decode_attention_cases(4099)) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      // Few blocks, since every block's 256 threads are threads: 64 SMs give up to 16 splits a
      // unit (S = 2049 takes 8 SMs: 2 splits of many tiles each), 1 SM gives one split.
      const std::vector<int> sm_counts = c.S > 1000 ? std::vector<int>{8} : std::vector<int>{64, 1};
      for (int sms : sm_counts) {
        const AttnInputs in = make_attn_inputs(c, dt, gen);
        std::string error;
        std::vector<Tensor> want = cpu_reference(in.target, in.args, &error);
        const std::string label = c.name + " " + dname(dt) + " sms " + std::to_string(sms);
        if (!error.empty()) {
          log.record(label, error);
          continue;
        }
        want.resize(in.outputs);
        const Tensor out = make_output(dt, want[0].sizes(), c.strided_out);
        std::optional<Tensor> lse;
        AttentionArgs args;
        args.q = host_view(in.q);
        args.k = host_view(in.k);
        args.v = host_view(in.v);
        DeviceTensor mask, lse_view;
        if (in.mask) {
          mask = host_view(*in.mask);
          args.mask = &mask;
        }
        args.causal = c.causal;
        args.scale = c.scale;
        args.gqa = c.gqa || c.lse != 0;
        args.out = host_view(out);
        if (in.outputs > 1) {
          lse = make_output(DType::kFloat32, want[1].sizes(), false);
          lse_view = host_view(*lse);
          args.lse = &lse_view;
        }
        auto plan = plan_attention(args, sms, scratch);
        if (!plan.ok()) {
          log.record(label, "plan: " + plan.error().message());
          continue;
        }
        if (plan->kernel != AttnKernel::kDecode) {
          log.record(label, std::string("not the decode kernel: ") + plan->reason);
          continue;
        }
        ++decode_runs;
        split_runs += plan->params.splits > 1;
        std::string problem;
        if (plan->params.splits > 1 && plan->params.counters == nullptr)
          problem += "split without counters; ";
        auto run = launch_attention_decode(*plan, nullptr);
        if (!run.ok()) problem += "launch: " + run.error().message();
        for (uint32_t v : counters)
          if (v != 0) {
            problem += "a counter left at " + std::to_string(v) + "; ";
            std::fill(counters.begin(), counters.end(), 0u);
            break;
          }
        const std::vector<Tolerance> tols = attention_tolerances(dt);
        problem += compare(out, want[0], tols[0]) + check_outside_untouched(out);
        if (lse) problem += compare(*lse, want[1], tols[1]);
        log.record(label, problem);
      }
    }
  }
  std::printf("[ summary  ] %s (%d decode runs, %d split)\n", log.summary().c_str(), decode_runs,
              split_runs);
  EXPECT_EQ(log.failed(), 0) << log.summary();
  EXPECT_GT(split_runs, 0);
}

}  // namespace
}  // namespace splice::cuda
