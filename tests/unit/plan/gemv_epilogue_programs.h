#pragma once
// Programs with a decode-shaped product and the pointwise group that reads it, in splice's text
// IR (plan/gemv_epilogue.h), for the planner's tests (gemv_epilogue_test.cc) and the GPU's
// (unit/cuda/gpu_gemv_epilogue_test.cc):
//   kSiluMul:  gu = linear(x, w); y = silu(gu[..., :I]) * gu[..., I:]   (x [1, rows, K], w [2I, K])
//   kResidual: h = add(linear(x, w, b), r), and neg(h)                 (w [N, K], a bias b [N])
//   kMm:       h = add(mm(x, t(w)), r)                                  (run_decompositions' form)
//   kNormBlock: a decoder's MLP half: h = add(r, linear(x, wo)); n = RMSNorm(h) · nw (float32
//              statistics); y = silu · mul of linear(n, w)'s halves; returns h and y — the add
//              the epilogue of the first GEMV, the norm the prologue of the second
// `unaligned` reads the weight as a slice of a wider one (rows of K + 1 elements), which no
// 16-byte load reads: the runtime then runs the product and the epilogue apart. `returned`
// also returns the product, which the group then may not take.

#include <fmt/format.h>

#include <string>

#include "support/dtype.h"

namespace splice::testing {

struct GemvEpilogueProgram {
  enum class Kind { kSiluMul, kResidual, kMm, kNormBlock };
  Kind kind = Kind::kSiluMul;
  DType dtype = DType::kFloat16;
  int64_t rows = 1;
  int64_t k = 256;
  int64_t width = 128;  // I for kSiluMul, N otherwise
  bool unaligned = false;
  bool returned = false;
};

inline std::string gemv_epilogue_program(const GemvEpilogueProgram& p) {
  using Kind = GemvEpilogueProgram::Kind;
  const std::string t(dtype_name(p.dtype));
  const bool gated = p.kind == Kind::kSiluMul || p.kind == Kind::kNormBlock;
  const int64_t n = gated ? 2 * p.width : p.width;
  const int64_t wk = p.unaligned ? p.k + 1 : p.k;
  auto ty = [&](int64_t last) {
    return p.kind == Kind::kMm ? fmt::format("{}[{}, {}]", t, p.rows, last)
                               : fmt::format("{}[1, {}, {}]", t, p.rows, last);
  };
  std::string sig = "signature {\n  input %x: user_input\n  input %w: user_input\n";
  std::string inputs = fmt::format("%x: {}, %w: {}[{}, {}]", ty(p.k), t, n, wk);
  std::string body;
  std::string w = "%w";
  if (p.unaligned) {
    body +=
        fmt::format("  %wv: {}[{}, {}] = aten.slice.Tensor(%w, 1, 1, {}, 1)\n", t, n, p.k, p.k + 1);
    w = "%wv";
  }
  std::string outputs = "  output 0: user_output\n";
  std::string ret;
  switch (p.kind) {
    case Kind::kSiluMul:
      body += fmt::format(
          "  %gu: {n} = aten.linear.default(%x, {w}, None)\n"
          "  %g: {i} = aten.slice.Tensor(%gu, 2, 0, {I}, 1)\n"
          "  %u: {i} = aten.slice.Tensor(%gu, 2, {I}, {N}, 1)\n"
          "  %s: {i} = aten.silu.default(%g)\n"
          "  %y: {i} = aten.mul.Tensor(%s, %u)\n",
          fmt::arg("n", ty(n)), fmt::arg("i", ty(p.width)), fmt::arg("w", w),
          fmt::arg("I", p.width), fmt::arg("N", n));
      ret = "%y";
      break;
    case Kind::kResidual:
      sig += "  input %b: user_input\n  input %r: user_input\n";
      inputs += fmt::format(", %b: {}[{}], %r: {}", t, n, ty(n));
      body += fmt::format(
          "  %gu: {n} = aten.linear.default(%x, {w}, %b)\n"
          "  %h: {n} = aten.add.Tensor(%gu, %r, alpha=1)\n"
          "  %y: {n} = aten.neg.default(%h)\n",
          fmt::arg("n", ty(n)), fmt::arg("w", w));
      outputs += "  output 1: user_output\n";
      ret = "%h, %y";
      break;
    case Kind::kNormBlock: {
      const std::string kw =
          "layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None";
      const std::string f = fmt::format("f32[1, {}, {}]", p.rows, p.k);
      const std::string one = fmt::format("f32[1, {}, 1]", p.rows);
      sig += "  input %wo: user_input\n  input %r: user_input\n  input %nw: user_input\n";
      inputs += fmt::format(", %wo: {t}[{k}, {k}], %r: {h}, %nw: {t}[{k}]", fmt::arg("t", t),
                            fmt::arg("k", p.k), fmt::arg("h", ty(p.k)));
      body += fmt::format(
          "  %o: {h} = aten.linear.default(%x, %wo, None)\n"
          "  %h: {h} = aten.add.Tensor(%r, %o, alpha=1)\n"
          "  %hf: {f} = aten._to_copy.default(%h, dtype=f32, {kw})\n"
          "  %sq: {f} = aten.mul.Tensor(%hf, %hf)\n"
          "  %m: {one} = aten.mean.dim(%sq, [-1], True, dtype=None)\n"
          "  %v: {one} = aten.add.Tensor(%m, 1e-05, alpha=1)\n"
          "  %rs: {one} = aten.rsqrt.default(%v)\n"
          "  %yn: {f} = aten.mul.Tensor(%hf, %rs)\n"
          "  %yt: {h} = aten._to_copy.default(%yn, dtype={t}, {kw})\n"
          "  %nrm: {h} = aten.mul.Tensor(%nw, %yt)\n"
          "  %gu: {n} = aten.linear.default(%nrm, {w}, None)\n"
          "  %g: {i} = aten.slice.Tensor(%gu, 2, 0, {I}, 1)\n"
          "  %u: {i} = aten.slice.Tensor(%gu, 2, {I}, {N}, 1)\n"
          "  %s: {i} = aten.silu.default(%g)\n"
          "  %y: {i} = aten.mul.Tensor(%s, %u)\n",
          fmt::arg("h", ty(p.k)), fmt::arg("f", f), fmt::arg("one", one), fmt::arg("kw", kw),
          fmt::arg("t", t), fmt::arg("n", ty(n)), fmt::arg("i", ty(p.width)), fmt::arg("w", w),
          fmt::arg("I", p.width), fmt::arg("N", n));
      outputs += "  output 1: user_output\n";
      ret = "%h, %y";
      break;
    }
    case Kind::kMm:
      sig += "  input %r: user_input\n";
      inputs += fmt::format(", %r: {}", ty(n));
      body += fmt::format(
          "  %wt: {t}[{k}, {n}] = aten.t.default({w})\n"
          "  %gu: {o} = aten.mm.default(%x, %wt)\n"
          "  %h: {o} = aten.add.Tensor(%r, %gu, alpha=1)\n",
          fmt::arg("t", t), fmt::arg("k", p.k), fmt::arg("n", n), fmt::arg("o", ty(n)),
          fmt::arg("w", w));
      ret = "%h";
      break;
  }
  if (p.returned) {
    outputs += fmt::format("  output {}: user_output\n", p.kind == Kind::kResidual ? 2 : 1);
    ret += ", %gu";
  }
  return sig + outputs + "}\ngraph(" + inputs + ") {\n" + body + "  return (" + ret + ")\n}\n";
}

}  // namespace splice::testing
