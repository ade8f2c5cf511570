#pragma once
// The attention cases shared by the host emulation test (attention_plan_test.cc) and the GPU
// test (attention_test.cc): decode and prefill, causal with L < S and L > S, bool / float /
// per-head masks with fully masked rows, grouped KV heads (shared, broadcast, unequal k/v
// groups), head dims 32..512 and Ev != E, HF's interleaved-heads layout, a KV-cache slice,
// a transposed q, no batch dim, a broadcast batch, S = 0, and the logsumexp of the
// flash_attention_for_cpu and efficient (padded) forms.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/attention.h"
#include "kernel_check.h"

namespace splice::cuda::testing {

enum class MaskKind { kNone, kBoolLS, kFloatB1LS, kFloatPerHead };

struct AttnCase {
  std::string name;
  int64_t B = 2, Hq = 4, Hk = 4, Hv = -1, L = 16, S = 16, E = 64, Ev = -1;
  bool no_batch = false;      // q/k/v are [H, L, E]
  bool kv_batch1 = false;     // k/v have batch 1 (broadcast)
  bool interleaved = false;   // q/k/v as [B, L, H, E].transpose(1, 2)
  int64_t kv_capacity = 0;    // > S: k/v are the first S positions of a longer cache
  bool transposed_q = false;  // q stored [.., E, L]: no unit stride along E
  MaskKind mask = MaskKind::kNone;
  bool masked_rows = false;  // some query rows see no key at all
  bool causal = false;
  std::optional<double> scale;
  bool gqa = false;
  int lse = 0;  // 0: none (sdpa), 1: flash_attention_for_cpu (lse width L), 2: efficient (padded)
  bool strided_out = false;

  int64_t hv() const { return Hv < 0 ? Hk : Hv; }
  int64_t ev() const { return Ev < 0 ? E : Ev; }
};

inline std::vector<AttnCase> attention_cases() {
  std::vector<AttnCase> v;
  const auto add = [&](AttnCase c) { v.push_back(std::move(c)); };
  AttnCase c;
  c.name = "plain";
  c.L = 37;
  c.S = 53;
  add(c);
  c = {};
  c.name = "causal square";
  c.B = 1;
  c.Hq = c.Hk = 2;
  c.L = c.S = 130;
  c.causal = true;
  add(c);
  c = {};
  c.name = "causal L<S";
  c.L = 5;
  c.S = 20;
  c.causal = true;
  c.E = 32;
  add(c);
  c = {};
  c.name = "causal L>S";
  c.L = 40;
  c.S = 5;
  c.causal = true;
  add(c);
  c = {};
  c.name = "decode gqa 32/8";
  c.B = 1;
  c.Hq = 32;
  c.Hk = 8;
  c.L = 1;
  c.S = 2048;
  c.E = 128;
  c.gqa = true;
  add(c);
  c = {};
  c.name = "decode cache slice interleaved";
  c.B = 2;
  c.Hq = c.Hk = 8;
  c.L = 1;
  c.S = 777;
  c.kv_capacity = 1024;
  c.interleaved = true;
  add(c);
  c = {};
  c.name = "prefill gqa causal";
  c.B = 1;
  c.Hq = 8;
  c.Hk = 2;
  c.L = c.S = 200;
  c.E = 128;
  c.causal = true;
  c.gqa = true;
  add(c);
  c = {};
  c.name = "bool mask, masked rows";
  c.L = 33;
  c.S = 70;
  c.E = 32;
  c.mask = MaskKind::kBoolLS;
  c.masked_rows = true;
  add(c);
  c = {};
  c.name = "float mask [B,1,L,S]";
  c.L = 48;
  c.S = 48;
  c.E = 80;
  c.mask = MaskKind::kFloatB1LS;
  add(c);
  c = {};
  c.name = "per-head float mask, gqa 6/2";
  c.B = 1;
  c.Hq = 6;
  c.Hk = 2;
  c.L = 40;
  c.S = 65;
  c.E = 96;
  c.mask = MaskKind::kFloatPerHead;
  c.gqa = true;
  add(c);
  c = {};
  c.name = "head dim 40, Ev 24";
  c.L = 70;
  c.S = 70;
  c.E = 40;
  c.Ev = 24;
  add(c);
  c = {};
  c.name = "head dim 256";
  c.B = 1;
  c.L = 33;
  c.S = 100;
  c.E = 256;
  add(c);
  c = {};
  c.name = "head dim 512";
  c.B = 1;
  c.Hq = c.Hk = 2;
  c.L = 9;
  c.S = 40;
  c.E = 512;
  c.Ev = 300;
  add(c);
  c = {};
  c.name = "no batch dim";
  c.no_batch = true;
  c.Hq = c.Hk = 3;
  c.L = 17;
  c.S = 29;
  add(c);
  c = {};
  c.name = "transposed q";
  c.L = 24;
  c.S = 31;
  c.transposed_q = true;
  add(c);
  c = {};
  c.name = "interleaved causal bool mask";
  c.B = 1;
  c.L = c.S = 128;
  c.interleaved = true;
  c.causal = true;
  c.mask = MaskKind::kBoolLS;
  c.strided_out = true;
  add(c);
  c = {};
  c.name = "flash_cpu lse causal";
  c.L = 64;
  c.S = 96;
  c.causal = true;
  c.lse = 1;
  add(c);
  c = {};
  c.name = "efficient lse padded, float mask";
  c.L = 37;
  c.S = 50;
  c.mask = MaskKind::kFloatB1LS;
  c.lse = 2;
  add(c);
  c = {};
  c.name = "no keys";
  c.L = 5;
  c.S = 0;
  c.lse = 1;
  add(c);
  c = {};
  c.name = "mqa broadcast kv head";
  c.Hq = 4;
  c.Hk = 1;
  c.L = 20;
  c.S = 33;
  add(c);
  c = {};
  c.name = "explicit scale";
  c.L = 16;
  c.S = 16;
  c.scale = 0.3;
  add(c);
  c = {};
  c.name = "unequal k/v groups";
  c.B = 1;
  c.Hq = 8;
  c.Hk = 4;
  c.Hv = 2;
  c.L = 20;
  c.S = 30;
  c.gqa = true;
  add(c);
  c = {};
  c.name = "broadcast kv batch";
  c.kv_batch1 = true;
  c.L = 18;
  c.S = 44;
  add(c);
  c = {};
  c.name = "long prefill";
  c.B = 1;
  c.Hq = c.Hk = 4;
  c.L = c.S = 1000;
  c.causal = true;
  add(c);
  return v;
}

// Decode shapes for the decode kernel (attention_decode.cu): key lengths 1, 7, 2049 and 32771
// (not multiples of its tiles or splits), GQA 4:1 (head dim 64) and 1:1 (head dim 128), each
// with no mask, a bool mask, a float mask [B,1,L,S], a per-head float mask with fully masked
// heads, and causal (top-left: a decode row sees key 0 only); plus speculative decode (4 query
// positions), a KV-cache slice in HF's interleaved layout, batch 2 and head dim 256.
// max_s bounds S (the host emulation skips the long ones).
inline std::vector<AttnCase> decode_attention_cases(int64_t max_s = INT64_MAX) {
  std::vector<AttnCase> v;
  const char* mask_names[] = {"no mask", "bool mask", "float mask", "per-head mask", "causal"};
  for (int64_t S : {1, 7, 2049, 32771}) {
    if (S > max_s) continue;
    for (int group = 0; group < 2; ++group)
      for (int m = 0; m < 5; ++m) {
        AttnCase c;
        c.B = 1;
        c.Hq = group == 0 ? 32 : 8;
        c.Hk = 8;
        c.E = group == 0 ? 64 : 128;
        c.L = 1;
        c.S = S;
        c.gqa = true;
        c.mask = m == 1   ? MaskKind::kBoolLS
                 : m == 2 ? MaskKind::kFloatB1LS
                 : m == 3 ? MaskKind::kFloatPerHead
                          : MaskKind::kNone;
        c.masked_rows = m == 3;
        c.causal = m == 4;
        c.name =
            "decode S=" + std::to_string(S) + (group == 0 ? " gqa 32/8 " : " 8/8 ") + mask_names[m];
        v.push_back(c);
      }
  }
  AttnCase c;
  c.name = "speculative decode L=4 gqa 16/4 causal";
  c.B = 1;
  c.Hq = 16;
  c.Hk = 4;
  c.L = 4;
  c.S = 300;
  c.gqa = true;
  c.causal = true;
  v.push_back(c);
  c = {};
  c.name = "decode batch 2 cache slice interleaved, lse";
  c.B = 2;
  c.Hq = c.Hk = 4;
  c.L = 1;
  c.S = 1111;
  c.kv_capacity = 2048;
  c.interleaved = true;
  c.lse = 1;
  v.push_back(c);
  c = {};
  c.name = "decode head dim 256, explicit scale";
  c.B = 1;
  c.Hq = 4;
  c.Hk = 2;
  c.gqa = true;
  c.L = 2;
  c.S = 700;
  c.E = 256;
  c.scale = 0.2;
  v.push_back(c);
  return v;
}

// A [B?, H, T, D] tensor in the case's layout (interleaved heads, a cache of `capacity`
// positions, or T and D swapped in memory).
inline Tensor make_attn_tensor(DType dt, bool no_batch, int64_t B, int64_t H, int64_t T, int64_t D,
                               bool interleaved, int64_t capacity, bool transposed,
                               std::mt19937& gen) {
  const int64_t cap = std::max(capacity, T);
  Tensor base;
  Shape sizes = no_batch ? Shape{H, T, D} : Shape{B, H, T, D};
  Shape strides;
  if (interleaved) {
    base = Tensor::empty(dt, {B, cap, H, D}).value();
    strides = {cap * H * D, D, H * D, 1};
  } else if (transposed) {
    base = Tensor::empty(dt, {B, H, D, cap}).value();
    strides = {H * D * cap, D * cap, 1, cap};
  } else {
    base = Tensor::empty(dt, {B, H, cap, D}).value();
    strides = {H * cap * D, cap * D, D, 1};
  }
  if (no_batch) strides.erase(strides.begin());
  Tensor t = base.view_as(sizes, strides, 0);
  fill_random(t, gen, -1.0, 1.0);
  return t;
}

struct AttnInputs {
  Tensor q, k, v;
  std::optional<Tensor> mask;
  std::vector<cpu::KernelArg> args;
  const char* target = "";
  size_t outputs = 1;
};

inline AttnInputs make_attn_inputs(const AttnCase& c, DType dt, std::mt19937& gen) {
  AttnInputs in;
  const int64_t kb = c.kv_batch1 ? 1 : c.B;
  in.q =
      make_attn_tensor(dt, c.no_batch, c.B, c.Hq, c.L, c.E, c.interleaved, 0, c.transposed_q, gen);
  in.k = make_attn_tensor(dt, c.no_batch, kb, c.Hk, c.S, c.E, c.interleaved, c.kv_capacity, false,
                          gen);
  in.v = make_attn_tensor(dt, c.no_batch, kb, c.hv(), c.S, c.ev(), c.interleaved, c.kv_capacity,
                          false, gen);
  const double inf = std::numeric_limits<double>::infinity();
  std::bernoulli_distribution keep(0.7);
  if (c.mask == MaskKind::kBoolLS) {
    in.mask = Tensor::empty(DType::kBool, {c.L, c.S}).value();
    for (int64_t i = 0; i < c.L * c.S; ++i) set_double(*in.mask, i, keep(gen) ? 1 : 0);
  } else if (c.mask != MaskKind::kNone) {
    const Shape ms =
        c.mask == MaskKind::kFloatB1LS ? Shape{c.B, 1, c.L, c.S} : Shape{c.B, c.Hq, c.L, c.S};
    in.mask = random_tensor(dt, ms, Layout::kContiguous, gen, -2, 1);
    for (int64_t i = 0; i < in.mask->numel(); ++i)
      if (!keep(gen)) set_double(*in.mask, i, -inf);
  }
  if (c.masked_rows && in.mask) {
    const int64_t rows = in.mask->numel() / c.S;
    for (int64_t r = 0; r < rows; r += 5)
      for (int64_t j = 0; j < c.S; ++j)
        set_double(*in.mask, r * c.S + j, in.mask->dtype() == DType::kBool ? 0 : -inf);
  }
  const cpu::KernelArg mask_arg =
      in.mask ? cpu::KernelArg{*in.mask} : cpu::KernelArg{std::monostate{}};
  const cpu::KernelArg scale_arg =
      c.scale ? cpu::KernelArg{*c.scale} : cpu::KernelArg{std::monostate{}};
  if (c.lse == 0) {
    in.target = "aten.scaled_dot_product_attention.default";
    in.args = {in.q, in.k, in.v, mask_arg, 0.0, c.causal, scale_arg, c.gqa};
  } else if (c.lse == 1) {
    in.target = "aten._scaled_dot_product_flash_attention_for_cpu.default";
    in.args = {in.q, in.k, in.v, 0.0, c.causal, mask_arg, scale_arg};
    in.outputs = 2;
  } else {
    in.target = "aten._scaled_dot_product_efficient_attention.default";
    in.args = {in.q, in.k, in.v, mask_arg, true, 0.0, c.causal, scale_arg};
    in.outputs = 2;
  }
  return in;
}

inline std::vector<Tolerance> attention_tolerances(DType dt) {
  switch (dt) {
    case DType::kFloat32:
      return {{2e-5, 2e-5}, {2e-5, 2e-5}};
    case DType::kFloat64:
      return {{1e-10, 1e-10}, {1e-5, 1e-5}};  // lse is float32
    case DType::kFloat16:
      return {{2e-3, 2e-3}, {1e-4, 1e-4}};
    default:
      return {{1.6e-2, 1.6e-2}, {1e-4, 1e-4}};
  }
}

}  // namespace splice::cuda::testing
