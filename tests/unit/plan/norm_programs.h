#pragma once
// RMSNorm chains as exported programs in splice's text IR (plan/norm_fusion.h's pattern), for
// the planner's tests (norm_fusion_test.cc) and the GPU's (unit/cuda/gpu_norm_fusion_test.cc):
// a residual add x + r, the norm of the sum in `stat` (casts to and from it when the model's
// dtype differs), a weight w, and a second output that reads the sum (as the next residual
// add does), so the kernel must store it.

#include <fmt/format.h>

#include <string>

#include "support/dtype.h"

namespace splice::testing {

struct NormProgram {
  DType dtype = DType::kFloat16;  // x, r, w and the output
  DType stat = DType::kFloat32;   // the statistics' dtype (float32: the model upcasts)
  int64_t rows = 3;
  int64_t hidden = 64;
  bool residual = true;
  bool weight_first = false;  // w * y (transformers' order) instead of y * w
};

inline std::string norm_program(const NormProgram& p) {
  const std::string t(dtype_name(p.dtype)), s(dtype_name(p.stat));
  const std::string row = fmt::format("[{}, {}]", p.rows, p.hidden);
  const std::string one = fmt::format("[{}, 1]", p.rows);
  const std::string cast_kw =
      "layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None";
  std::string body;
  std::string a = "%x";
  if (p.residual) {
    body += fmt::format("  %a: {t}{row} = aten.add.Tensor(%x, %r, alpha=1)\n", fmt::arg("t", t),
                        fmt::arg("row", row));
    a = "%a";
  }
  std::string xf = a;
  if (p.stat != p.dtype) {
    body += fmt::format("  %xf: {s}{row} = aten._to_copy.default({a}, dtype={s}, {kw})\n",
                        fmt::arg("s", s), fmt::arg("row", row), fmt::arg("a", a),
                        fmt::arg("kw", cast_kw));
    xf = "%xf";
  }
  body += fmt::format(
      "  %sq: {s}{row} = aten.mul.Tensor({xf}, {xf})\n"
      "  %m: {s}{one} = aten.mean.dim(%sq, [-1], True, dtype=None)\n"
      "  aten._assert_tensor_metadata.default(%m, None, None, {s}, device=\"cpu\", "
      "layout=\"strided\") @assert_m\n"
      "  %v: {s}{one} = aten.add.Tensor(%m, 1e-05, alpha=1)\n"
      "  %rs: {s}{one} = aten.rsqrt.default(%v)\n"
      "  %y: {s}{row} = aten.mul.Tensor({xf}, %rs)\n",
      fmt::arg("s", s), fmt::arg("row", row), fmt::arg("one", one), fmt::arg("xf", xf));
  std::string y = "%y";
  if (p.stat != p.dtype) {
    body += fmt::format("  %yt: {t}{row} = aten._to_copy.default(%y, dtype={t}, {kw})\n",
                        fmt::arg("t", t), fmt::arg("row", row), fmt::arg("kw", cast_kw));
    y = "%yt";
  }
  body += fmt::format("  %o: {t}{row} = aten.mul.Tensor({l}, {r})\n", fmt::arg("t", t),
                      fmt::arg("row", row), fmt::arg("l", p.weight_first ? "%w" : y),
                      fmt::arg("r", p.weight_first ? y : "%w"));
  body += fmt::format("  %n: {t}{row} = aten.neg.default({a})\n", fmt::arg("t", t),
                      fmt::arg("row", row), fmt::arg("a", a));
  std::string sig = "signature {\n  input %x: user_input\n";
  if (p.residual) sig += "  input %r: user_input\n";
  sig += "  input %w: user_input\n  output 0: user_output\n  output 1: user_output\n}\n";
  std::string inputs = fmt::format("%x: {}{}", t, row);
  if (p.residual) inputs += fmt::format(", %r: {}{}", t, row);
  inputs += fmt::format(", %w: {}[{}]", t, p.hidden);
  return sig + "graph(" + inputs + ") {\n" + body + "  return (%o, %n)\n}\n";
}

}  // namespace splice::testing
