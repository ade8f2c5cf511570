#pragma once
// The matmul-family cases shared by the host emulation test (matmul_plan_test.cc, no GPU) and
// the GPU test (matmul_test.cc): every op, 1-D operands, broadcast batches, transposed /
// sliced / permuted operands (the sliced ones need a copy), strided outputs, empty dims, k = 0,
// beta 0 with a NaN self, every dtype. Each case builds its host tensors and knows its CPU
// kernel target and arguments, so the CPU backend is the oracle.

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/matmul_exec.h"
#include "kernel_check.h"
#include "passes/pass.h"

namespace splice::cuda::testing {

// Whether `target` is rewritten by passes::decompose_composites before any backend (baddbmm,
// the `to` overloads, contiguous, ...): the CPU backend has no kernel for it to compare with;
// the CUDA launchers and lowerings for it stay for fusion, which will produce them again.
inline bool decomposed_before_backends(std::string_view target) {
  for (std::string_view t : passes::decomposed_targets())
    if (t == target) return true;
  return false;
}

struct OperandSpec {
  Shape shape;
  Layout layout = Layout::kContiguous;
};

struct MatmulCase {
  MatmulKind kind = MatmulKind::kMm;
  OperandSpec a, b;
  std::optional<OperandSpec> c;  // addmm/baddbmm self, linear bias
  double beta = 1.0, alpha = 1.0;
  bool strided_out = false;
  bool nan_self = false;  // fill self with NaN (with beta = 0 it must not show)
};

inline MatmulCase make_case(MatmulKind kind, OperandSpec a, OperandSpec b,
                            std::optional<OperandSpec> c = std::nullopt, double beta = 1.0,
                            double alpha = 1.0, bool strided_out = false, bool nan_self = false) {
  MatmulCase mc;
  mc.kind = kind;
  mc.a = std::move(a);
  mc.b = std::move(b);
  mc.c = std::move(c);
  mc.beta = beta;
  mc.alpha = alpha;
  mc.strided_out = strided_out;
  mc.nan_self = nan_self;
  return mc;
}

inline std::vector<MatmulCase> matmul_cases() {
  using L = Layout;
  const L C = L::kContiguous, T = L::kTransposed, S = L::kSliced, P = L::kPermuted;
  std::vector<MatmulCase> v = {
      make_case(MatmulKind::kMm, {{5, 7}, C}, {{7, 3}, C}),
      make_case(MatmulKind::kMm, {{1, 1}, C}, {{1, 1}, C}),
      make_case(MatmulKind::kMm, {{64, 33}, T}, {{33, 65}, C}, std::nullopt, 1, 1, true),
      make_case(MatmulKind::kMm, {{17, 9}, C}, {{9, 31}, T}),
      make_case(MatmulKind::kMm, {{17, 9}, T}, {{9, 31}, T}),
      make_case(MatmulKind::kMm, {{6, 10}, S}, {{10, 4}, S}),
      make_case(MatmulKind::kMm, {{0, 4}, C}, {{4, 3}, C}),
      make_case(MatmulKind::kMm, {{3, 0}, C}, {{0, 4}, C}),
      make_case(MatmulKind::kMm, {{130, 257}, C}, {{257, 129}, C}),
      make_case(MatmulKind::kMm, {{1, 300}, C}, {{300, 1}, C}),
      make_case(MatmulKind::kBmm, {{3, 5, 7}, C}, {{3, 7, 2}, C}),
      make_case(MatmulKind::kBmm, {{4, 6, 8}, T}, {{4, 8, 5}, P}, std::nullopt, 1, 1, true),
      make_case(MatmulKind::kBmm, {{2, 9, 3}, S}, {{2, 3, 4}, C}),
      make_case(MatmulKind::kBmm, {{2, 0, 3}, C}, {{2, 3, 4}, C}),
      make_case(MatmulKind::kBmm, {{5, 4, 0}, C}, {{5, 0, 3}, C}),
      make_case(MatmulKind::kMatmul, {{7}, C}, {{7}, C}),
      make_case(MatmulKind::kMatmul, {{7}, S}, {{7, 4}, C}),
      make_case(MatmulKind::kMatmul, {{5, 7}, C}, {{7}, S}),
      make_case(MatmulKind::kMatmul, {{3, 5, 7}, C}, {{7, 4}, C}),
      make_case(MatmulKind::kMatmul, {{3, 5, 7}, T}, {{7, 4}, T}),
      make_case(MatmulKind::kMatmul, {{5, 7}, C}, {{3, 7, 4}, C}),
      make_case(MatmulKind::kMatmul, {{2, 1, 4, 5}, C}, {{3, 5, 6}, C}, std::nullopt, 1, 1, true),
      make_case(MatmulKind::kMatmul, {{2, 3, 4, 5}, P}, {{2, 3, 5, 6}, T}),
      make_case(MatmulKind::kMatmul, {{7}, C}, {{2, 7, 3}, C}),
      make_case(MatmulKind::kMatmul, {{2, 4, 7}, C}, {{7}, C}),
      make_case(MatmulKind::kMatmul, {{2, 3, 4, 5}, C}, {{5, 2}, S}),
      make_case(MatmulKind::kLinear, {{4, 8}, C}, {{6, 8}, C}, OperandSpec{{6}, C}),
      make_case(MatmulKind::kLinear, {{2, 3, 8}, C}, {{6, 8}, C}, OperandSpec{{6}, C}, 1, 1, true),
      make_case(MatmulKind::kLinear, {{2, 3, 8}, T}, {{6, 8}, T}, OperandSpec{{6}, S}),
      make_case(MatmulKind::kLinear, {{5, 8}, C}, {{6, 8}, C}),
      make_case(MatmulKind::kLinear, {{5, 8}, C}, {{8}, C}, OperandSpec{{}, C}),
      make_case(MatmulKind::kLinear, {{3, 5, 8}, P}, {{6, 8}, C}, OperandSpec{{1}, C}),
      make_case(MatmulKind::kLinear, {{9, 64}, C}, {{96, 64}, C}, OperandSpec{{9, 96}, C}),
      make_case(MatmulKind::kAddmm, {{5, 7}, C}, {{7, 3}, C}, OperandSpec{{3}, C}),
      make_case(MatmulKind::kAddmm, {{5, 7}, C}, {{7, 3}, T}, OperandSpec{{5, 3}, T}, 0.5, 2.0),
      make_case(MatmulKind::kAddmm, {{5, 7}, C}, {{7, 3}, C}, OperandSpec{{5, 1}, C}, 1, 1, true),
      make_case(MatmulKind::kAddmm, {{5, 7}, C}, {{7, 3}, C}, OperandSpec{{}, C}, -1.5, 0.25),
      make_case(MatmulKind::kAddmm, {{5, 7}, C}, {{7, 3}, C}, OperandSpec{{5, 3}, C}, 0.0, 1.0,
                false, true),
      make_case(MatmulKind::kAddmm, {{4, 0}, C}, {{0, 3}, C}, OperandSpec{{3}, C}, 2.0, 1.0),
      make_case(MatmulKind::kBaddbmm, {{3, 5, 7}, C}, {{3, 7, 2}, C}, OperandSpec{{3, 5, 2}, C},
                0.5, 1.5),
      make_case(MatmulKind::kBaddbmm, {{3, 5, 7}, T}, {{3, 7, 2}, C}, OperandSpec{{2}, C}),
      make_case(MatmulKind::kBaddbmm, {{2, 4, 6}, C}, {{2, 6, 3}, S}, OperandSpec{{2, 4, 3}, C},
                0.0, 1.0, true, true),
  };
  return v;
}

inline const char* kind_target(MatmulKind k) {
  switch (k) {
    case MatmulKind::kMm:
      return "aten.mm.default";
    case MatmulKind::kBmm:
      return "aten.bmm.default";
    case MatmulKind::kMatmul:
      return "aten.matmul.default";
    case MatmulKind::kLinear:
      return "aten.linear.default";
    case MatmulKind::kAddmm:
      return "aten.addmm.default";
    case MatmulKind::kBaddbmm:
      return "aten.baddbmm.default";
  }
  return "";
}

// The host tensors of a case.
struct MatmulInputs {
  Tensor a, b;
  std::optional<Tensor> c;
  std::vector<cpu::KernelArg> args;  // the CPU kernel's arguments
};

inline MatmulInputs make_matmul_inputs(const MatmulCase& mc, DType dtype, std::mt19937& gen) {
  MatmulInputs in;
  const double lo = is_floating(dtype) ? -1.0 : -3.0, hi = is_floating(dtype) ? 1.0 : 3.0;
  in.a = random_tensor(dtype, mc.a.shape, mc.a.layout, gen, lo, hi);
  in.b = random_tensor(dtype, mc.b.shape, mc.b.layout, gen, lo, hi);
  if (mc.c) {
    in.c = random_tensor(dtype, mc.c->shape, mc.c->layout, gen, lo, hi);
    if (mc.nan_self && is_floating(dtype))
      for (int64_t i = 0; i < in.c->numel(); ++i) set_double(*in.c, i, std::nan(""));
  }
  switch (mc.kind) {
    case MatmulKind::kAddmm:
    case MatmulKind::kBaddbmm:
      // Integer tensors take integer scalars (a float beta is truncated, as baddbmm does).
      if (is_floating(dtype))
        in.args = {*in.c, in.a, in.b, mc.beta, mc.alpha};
      else
        in.args = {*in.c, in.a, in.b, static_cast<int64_t>(mc.beta),
                   static_cast<int64_t>(mc.alpha)};
      break;
    case MatmulKind::kLinear:
      in.args = {in.a, in.b};
      if (in.c)
        in.args.push_back(*in.c);
      else
        in.args.push_back(std::monostate{});
      break;
    default:
      in.args = {in.a, in.b};
      break;
  }
  return in;
}

inline std::string case_label(const MatmulCase& mc, DType dtype) {
  std::string s = std::string(kind_target(mc.kind)) + " " + dname(dtype) + " " +
                  shape_string(mc.a.shape) + layout_name(mc.a.layout) + " x " +
                  shape_string(mc.b.shape) + layout_name(mc.b.layout);
  if (mc.c) s += " c=" + shape_string(mc.c->shape) + layout_name(mc.c->layout);
  if (mc.beta != 1.0 || mc.alpha != 1.0)
    s += " beta=" + std::to_string(mc.beta) + " alpha=" + std::to_string(mc.alpha);
  if (mc.strided_out) s += " strided-out";
  return s;
}

// Tolerance of a product with inner dim k (values in [-1, 1]).
inline Tolerance matmul_tolerance(DType dtype, int64_t k) {
  const double sk = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  switch (dtype) {
    case DType::kFloat32:
      return {2e-6 * sk, 1e-5};
    case DType::kFloat64:
      return {1e-12 * sk, 1e-12};
    case DType::kFloat16:
      return {1e-3 * sk, 2e-3};
    case DType::kBFloat16:
      return {8e-3 * sk, 1.6e-2};
    default:
      return {0, 0};
  }
}

inline int64_t case_k(const MatmulCase& mc) { return mc.a.shape.empty() ? 0 : mc.a.shape.back(); }

}  // namespace splice::cuda::testing
