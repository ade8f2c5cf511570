// Attention planning without a GPU (suite CudaAttentionPlan): every case of attention_cases.h is
// planned with host pointers and the kernels' addressing (attn_unit_offsets, the row strides,
// the key limit, the logsumexp padding) is emulated in double on the CPU and compared with
// the CPU backend; so unit/row layout, GQA grouping, broadcasting and mask strides are verified
// here, and the GPU test is left with the kernels' arithmetic. Also: the kernel choice, the
// split decision, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "attention_cases.h"
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

double read(const void* base, int64_t off, DType dt) {
  const char* p = static_cast<const char*>(base);
  switch (dt) {
    case DType::kFloat16:
      return static_cast<float>(reinterpret_cast<const Half*>(p)[off]);
    case DType::kBFloat16:
      return static_cast<float>(reinterpret_cast<const BFloat16*>(p)[off]);
    case DType::kFloat32:
      return reinterpret_cast<const float*>(p)[off];
    case DType::kFloat64:
      return reinterpret_cast<const double*>(p)[off];
    case DType::kBool:
      return reinterpret_cast<const uint8_t*>(p)[off];
    default:
      return 0;
  }
}

void write(void* base, int64_t off, DType dt, double v) {
  char* p = static_cast<char*>(base);
  switch (dt) {
    case DType::kFloat16:
      reinterpret_cast<Half*>(p)[off] = Half(static_cast<float>(v));
      return;
    case DType::kBFloat16:
      reinterpret_cast<BFloat16*>(p)[off] = BFloat16(static_cast<float>(v));
      return;
    case DType::kFloat32:
      reinterpret_cast<float*>(p)[off] = static_cast<float>(v);
      return;
    default:
      reinterpret_cast<double*>(p)[off] = v;
      return;
  }
}

// The kernels' work, addressed exactly as they address it, computed in double.
void emulate(const AttnPlan& plan) {
  const AttnParams& p = plan.params;
  const double inf = std::numeric_limits<double>::infinity();
  if (plan.lse_pad) {
    for (int64_t u = 0; u < p.units; ++u) {
      int64_t off[kAttnTensors];
      attn_unit_offsets(p, u, off);
      for (int64_t g = 0; g < p.G; ++g)
        for (int64_t w = p.L; w < p.lse_width; ++w)
          p.lse[off[kAttnLse] + g * p.lse_hs + w * p.lse_ls] = static_cast<float>(inf);
    }
  }
  if (plan.empty) return;
  for (int64_t u = 0; u < p.units; ++u) {
    int64_t off[kAttnTensors];
    attn_unit_offsets(p, u, off);
    for (int64_t tile = 0; tile < p.tiles_per_unit; ++tile) {
      const int64_t rb = tile * p.rows_per_block;
      const int64_t re = std::min(p.R, rb + p.rows_per_block);
      const int64_t limit = attn_key_limit(p, rb, re);
      for (int64_t r = rb; r < re; ++r) {
        const int64_t g = r / p.L, l = r % p.L;
        const int64_t qo = off[kAttnQ] + g * p.q_hs + l * p.q_ls;
        const int64_t mo = off[kAttnMask] + g * p.m_hs + l * p.m_ls;
        std::vector<double> s(p.S, -inf);
        double mx = -inf;
        for (int64_t j = 0; j < limit; ++j) {
          if (p.causal && j > l) continue;
          double dot = 0;
          for (int64_t e = 0; e < p.E; ++e)
            dot += read(p.q, qo + e * p.q_es, p.dtype) *
                   read(p.k, off[kAttnK] + j * p.k_ss + e * p.k_es, p.dtype);
          double v = dot * p.scale;
          if (p.mask) {
            const double m = read(p.mask, mo + j * p.m_ss, p.mask_dtype);
            if (p.mask_dtype == DType::kBool) {
              if (m == 0) continue;
            } else {
              v += m;
            }
          }
          s[j] = v;
          mx = std::max(mx, v);
        }
        double sum = 0;
        std::vector<double> acc(p.Ev, 0.0);
        if (mx != -inf) {
          for (int64_t j = 0; j < limit; ++j) {
            if (s[j] == -inf) continue;
            const double w = std::exp(s[j] - mx);
            sum += w;
            for (int64_t e = 0; e < p.Ev; ++e)
              acc[e] += w * read(p.v, off[kAttnV] + j * p.v_ss + e * p.v_es, p.dtype);
          }
        }
        const int64_t oo = off[kAttnOut] + g * p.o_hs + l * p.o_ls;
        for (int64_t e = 0; e < p.Ev; ++e)
          write(p.out, oo + e * p.o_es, p.dtype, sum == 0 ? 0.0 : acc[e] / sum);
        if (p.lse)
          p.lse[off[kAttnLse] + g * p.lse_hs + l * p.lse_ls] =
              static_cast<float>(sum == 0 ? 0.0 : mx + std::log(sum));
      }
    }
  }
}

TEST(CudaAttentionPlan, EveryCaseAddressedLikeTheCpuBackend) {
  std::mt19937 gen(2024);
  CaseLog log;
  for (const AttnCase& c : attention_cases()) {
    if (c.L * c.S > 300000) continue;  // the double emulation of the long case is slow
    for (DType dt : {DType::kFloat32, DType::kFloat16}) {
      const AttnInputs in = make_attn_inputs(c, dt, gen);
      std::string error;
      std::vector<Tensor> want = cpu_reference(in.target, in.args, &error);
      const std::string label = c.name + " " + dname(dt);
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
      auto plan = plan_attention(args, 132, KernelScratch{});
      if (!plan.ok()) {
        log.record(label, "plan: " + plan.error().message());
        continue;
      }
      emulate(*plan);
      const std::vector<Tolerance> tols = attention_tolerances(dt);
      std::string problem = compare(out, want[0], tols[0]) + check_outside_untouched(out);
      if (lse) problem += compare(*lse, want[1], tols[1]);
      log.record(label, problem);
    }
  }
  std::printf("[ summary  ] %s\n", log.summary().c_str());
}

AttentionArgs args_for(const AttnInputs& in, const Tensor& out, DeviceTensor& dq, DeviceTensor& dk,
                       DeviceTensor& dv) {
  dq = host_view(in.q);
  dk = host_view(in.k);
  dv = host_view(in.v);
  AttentionArgs a;
  a.q = dq;
  a.k = dk;
  a.v = dv;
  a.out = host_view(out);
  return a;
}

// A GQA decode case in fp16: its inputs, the attention arguments over them, and scratch with
// arrival counters to plan it with (scratch()).
struct DecodeSetup {
  AttnInputs in;
  Tensor out;
  AttentionArgs args;
  std::vector<double> mem = std::vector<double>(1 << 20);
  std::vector<uint32_t> counters = std::vector<uint32_t>(kScratchCounters);
  DecodeSetup(const AttnCase& c, const Shape& out_sizes, std::mt19937& gen)
      : in(make_attn_inputs(c, DType::kFloat16, gen)),
        out(make_output(DType::kFloat16, out_sizes, false)) {
    DeviceTensor q, k, v;
    args = args_for(in, out, q, k, v);
    args.gqa = true;
  }
  KernelScratch scratch() {
    return KernelScratch{mem.data(), mem.size() * 8, counters.data(), counters.size()};
  }
};

TEST(CudaAttentionPlan, KernelChoiceAndSplits) {
  std::mt19937 gen(7);
  const auto cases = attention_cases();
  const auto find = [&](const std::string& name) {
    for (const AttnCase& c : cases)
      if (c.name == name) return c;
    ADD_FAILURE() << "no case " << name;
    return cases[0];
  };
  {  // decode with GQA: the decode kernel, 4 q heads per unit, keys split across blocks in
     // multiples of 16, combined in the launch through the scratch counters
    DecodeSetup s(find("decode gqa 32/8"), {1, 32, 1, 128}, gen);
    auto plan = plan_attention(s.args, 132, s.scratch());
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    EXPECT_EQ(plan->kernel, AttnKernel::kDecode) << plan->reason;
    EXPECT_STREQ(attn_kernel_name(plan->kernel), "decode");
    EXPECT_EQ(plan->params.G, 4);
    EXPECT_EQ(plan->params.R, 4);
    EXPECT_EQ(plan->params.units, 8);
    EXPECT_EQ(plan->threads, kAttnDecodeThreads);
    EXPECT_EQ(plan->key_tile, 32);  // 16 KiB of K/V a tile at head dim 128 in fp16
    // 2 blocks per SM: 264 / 8 units = 33 splits of 63 keys, rounded up to 64: 32 splits.
    EXPECT_EQ(plan->params.split_keys, 64);
    EXPECT_EQ(plan->params.splits, 32);
    EXPECT_EQ(plan->params.counters, s.counters.data());
    EXPECT_EQ(plan->smem_bytes, static_cast<size_t>(attn_decode_smem(4, 128, 128, 2, 32).total));
    // Without counters the splits stay; a second kernel combines them.
    auto no_counters = plan_attention(s.args, 132, KernelScratch{s.mem.data(), s.mem.size() * 8});
    ASSERT_TRUE(no_counters.ok());
    EXPECT_EQ(no_counters->params.splits, 32);
    EXPECT_EQ(no_counters->params.counters, nullptr);
    auto no_scratch = plan_attention(s.args, 132, KernelScratch{});
    ASSERT_TRUE(no_scratch.ok());
    EXPECT_EQ(no_scratch->params.splits, 1);
    EXPECT_GT(no_scratch->split_bytes_wanted, 0u);
  }
  {  // decode with 32 q heads per KV head and a long cache: the combine keeps R x splits
     // weights in the shared memory before the row statistics, which caps the splits
    AttnCase c = find("decode gqa 32/8");
    c.Hq = 64;
    c.Hk = 2;
    c.E = 64;
    c.S = 65536;
    DecodeSetup s(c, {1, 64, 1, 64}, gen);
    // A GPU of 500 SMs: 500 splits wanted per unit; 272 splits of weights fit before the
    // statistics.
    auto plan = plan_attention(s.args, 500, s.scratch());
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    ASSERT_EQ(plan->kernel, AttnKernel::kDecode) << plan->reason;
    EXPECT_EQ(plan->params.R, 32);
    EXPECT_EQ(plan->params.units, 2);
    const AttnDecodeSmem lay = attn_decode_smem(32, 64, 64, 2, plan->key_tile);
    EXPECT_EQ(lay.stat / (4 * 32), 272);
    EXPECT_LE(plan->params.splits * 32 * 4, lay.stat);
    EXPECT_GT(plan->params.splits, 200);
  }
  {  // prefill fp16 with E = 128: tensor cores, 64-row tiles over G * L rows
    const AttnCase c = find("prefill gqa causal");
    const AttnInputs in = make_attn_inputs(c, DType::kFloat16, gen);
    const Tensor out = make_output(DType::kFloat16, {1, 8, 200, 128}, false);
    DeviceTensor q, k, v;
    AttentionArgs a = args_for(in, out, q, k, v);
    a.gqa = true;
    a.causal = true;
    auto plan = plan_attention(a, 132, KernelScratch{});
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    EXPECT_EQ(plan->kernel, AttnKernel::kMma);
    EXPECT_EQ(plan->params.R, 800);
    EXPECT_EQ(plan->params.tiles_per_unit, 13);
    EXPECT_EQ(plan->smem_bytes, 3u * 64 * 136 * 2);
  }
  {  // decode, but float64 or a cache slice whose rows are not 16-byte aligned: CUDA cores,
     // with the reason
    const AttnCase c = find("decode gqa 32/8");
    const AttnInputs in64 = make_attn_inputs(c, DType::kFloat64, gen);
    const Tensor out64 = make_output(DType::kFloat64, {1, 32, 1, 128}, false);
    DeviceTensor q, k, v;
    AttentionArgs a = args_for(in64, out64, q, k, v);
    a.gqa = true;
    auto plan = plan_attention(a, 132, KernelScratch{});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->kernel, AttnKernel::kSimt);
    EXPECT_STREQ(plan->reason, "float64");
    const AttnInputs in16 = make_attn_inputs(c, DType::kFloat16, gen);
    const Tensor out16 = make_output(DType::kFloat16, {1, 32, 1, 128}, false);
    a = args_for(in16, out16, q, k, v);
    a.gqa = true;
    a.k.data = static_cast<char*>(a.k.data) + 2;  // one element in: rows 2 bytes off alignment
    plan = plan_attention(a, 132, KernelScratch{});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->kernel, AttnKernel::kSimt);
    EXPECT_STREQ(plan->reason, "K/V rows not 16-byte aligned with unit stride");
  }
  {  // a transposed q (no unit stride along E) falls back to the CUDA-core kernel
    const AttnCase c = find("transposed q");
    const AttnInputs in = make_attn_inputs(c, DType::kFloat16, gen);
    const Tensor out = make_output(DType::kFloat16, {2, 4, 24, 64}, false);
    DeviceTensor q, k, v;
    AttentionArgs a = args_for(in, out, q, k, v);
    auto plan = plan_attention(a, 132, KernelScratch{});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->kernel, AttnKernel::kSimt);
  }
}

TEST(CudaAttentionPlan, ErrorsLikeTheCpuKernel) {
  std::mt19937 gen(3);
  AttnCase c;
  c.Hq = 6;
  c.Hk = 4;
  c.gqa = true;
  const AttnInputs in = make_attn_inputs(c, DType::kFloat32, gen);
  const Tensor out = make_output(DType::kFloat32, {2, 6, 16, 64}, false);
  DeviceTensor q, k, v;
  AttentionArgs a = args_for(in, out, q, k, v);
  a.gqa = true;
  auto plan = plan_attention(a, 132, KernelScratch{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message(),
            "scaled_dot_product_attention: key has 4 heads, which do not divide the query's 6 "
            "heads");
  AttnCase ok;
  const AttnInputs in2 = make_attn_inputs(ok, DType::kFloat32, gen);
  const Tensor out2 = make_output(DType::kFloat32, {2, 4, 16, 64}, false);
  a = args_for(in2, out2, q, k, v);
  a.dropout_p = 0.1;
  plan = plan_attention(a, 132, KernelScratch{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind(), ErrorKind::kBadInput);
  a.dropout_p = 0;
  const Tensor bad_mask = Tensor::empty(DType::kBool, {3, 16}).value();
  const DeviceTensor bm = host_view(bad_mask);
  a.mask = &bm;
  plan = plan_attention(a, 132, KernelScratch{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message(),
            "scaled_dot_product_attention: attn_mask of shape [3, 16] does not broadcast to the "
            "scores' shape [2, 4, 16, 16]");
}

}  // namespace
}  // namespace splice::cuda
