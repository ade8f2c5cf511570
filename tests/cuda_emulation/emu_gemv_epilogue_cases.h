// The epilogues the GEMV-epilogue emulation checks (gen and run share this list), each with
// its host reference: the program's outputs from its inputs, every step rounded to its dtype.
#pragma once
#include <cmath>
#include <functional>
#include <vector>

#include "backends/cuda/gemv_epilogue.h"
#include "tensor/half.h"

namespace splice::cuda {

inline float emu_round(DType t, float v) {
  if (t == DType::kFloat16) return half_bits_to_float(float_to_half_bits(v));
  if (t == DType::kBFloat16) return bfloat16_bits_to_float(float_to_bfloat16_bits(v));
  return v;
}

struct EmuEpilogueCase {
  const char* name;
  GemvEpilogueShape shape;
  // inputs: per program input, its value (already of its dtype) as float; outputs likewise.
  std::function<void(const float* in, float* out)> reference;
  bool norm_weight = false;  // with shape.norm: whether the norm has a weight
};

inline std::vector<EmuEpilogueCase> emu_gemv_epilogue_cases() {
  std::vector<EmuEpilogueCase> cases;
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    EmuEpilogueCase c{"silu_mul", {}, {}};
    c.shape.dtype = t;
    auto& p = c.shape.program;
    const auto g = p.add_input(t);
    const auto u = p.add_input(t);
    const auto s = p.add_node(ir::PointwiseFn::kSilu, {g}, t, DType::kFloat32);
    p.add_output(p.add_node(ir::PointwiseFn::kMul, {s, u}, t, DType::kFloat32));
    c.shape.is_range = {true, true};
    c.reference = [t](const float* in, float* out) {
      const float s = emu_round(t, in[0] / (1.0f + std::exp(-in[0])));
      out[0] = emu_round(t, s * in[1]);
    };
    cases.push_back(c);
  }
  for (bool range_first : {true, false}) {
    const DType t = range_first ? DType::kFloat16 : DType::kBFloat16;
    EmuEpilogueCase c{range_first ? "residual" : "residual_swapped", {}, {}};
    c.shape.dtype = t;
    auto& p = c.shape.program;
    const auto a = p.add_input(t);
    const auto b = p.add_input(t);
    const auto h = p.add_node(ir::PointwiseFn::kAdd, {a, b}, t, DType::kFloat32);
    p.add_output(h);
    p.add_output(p.add_node(ir::PointwiseFn::kNeg, {h}, t, DType::kFloat32));
    c.shape.is_range = {range_first, !range_first};
    c.reference = [t](const float* in, float* out) {
      out[0] = emu_round(t, in[0] + in[1]);
      out[1] = -out[0];
    };
    cases.push_back(c);
  }
  // RMSNorm prologues: SiLU·mul after a norm with a weight (gate/up), and the product alone (an
  // identity epilogue: q/k/v) after one without, in bfloat16 with float16 statistics.
  {
    EmuEpilogueCase c = cases[0];
    c.name = "norm_silu_mul";
    c.shape.norm = GemvNormPrologue{DType::kFloat32, DType::kFloat16};
    c.norm_weight = true;
    cases.push_back(c);
  }
  {
    EmuEpilogueCase c{"norm_identity", {}, {}};
    const DType t = DType::kBFloat16;
    c.shape.dtype = t;
    const auto a = c.shape.program.add_input(t);
    c.shape.program.add_output(
        c.shape.program.add_node(ir::PointwiseFn::kCopy, {a}, t, DType::kFloat32));
    c.shape.is_range = {true};
    c.shape.norm = GemvNormPrologue{DType::kFloat32, DType::kBFloat16};
    c.reference = [](const float* in, float* out) { out[0] = in[0]; };
    cases.push_back(c);
  }
  return cases;
}

}  // namespace splice::cuda
