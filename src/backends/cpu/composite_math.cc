// aten.native_group_norm, the core ATen op that group_norm is built from (passes/
// decompose_composites rewrites group_norm into it). Kept as one fused kernel on purpose: its
// decomposition (torch/_refs.native_group_norm) is eight kernels — a reshape, var_mean, rsqrt,
// sub, mul, a reshape back and the affine mul/add — each a pass over the input, where this
// kernel makes three over each group and accumulates the statistics in double. The other
// CompositeImplicit math ops this file used to run (einsum, baddbmm, outer, the vector norms,
// std_mean, group_norm) are decomposed into primitive ops before any backend sees them.
#include <cmath>

#include "backends/cpu/args.h"
#include "support/checked_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

// (out, mean, rstd) of group norm over input viewed as [N, C, HxW] with `groups` groups of
// C / groups channels; mean and rstd are [N, groups]. Statistics in double (biased variance).
Result<Outputs> group_norm_impl(std::string_view op, const Tensor& input,
                                const std::optional<Tensor>& weight,
                                const std::optional<Tensor>& bias, int64_t n, int64_t c,
                                int64_t hxw, int64_t groups, double eps) {
  KCHECK(is_floating(input.dtype()), ErrorKind::kBadInput,
         "expected a floating point input, got {}", dtype_name(input.dtype()));
  KCHECK(groups > 0 && c % groups == 0, ErrorKind::kShapeMismatch,
         "expected number of channels in input to be divisible by num_groups, but got input of "
         "shape {} and num_groups={}",
         shape_string(input.sizes()), groups);
  const auto nc = checked_mul(n, c);
  const auto total = nc ? checked_mul(*nc, hxw) : std::nullopt;
  KCHECK(n >= 0 && c >= 0 && hxw >= 0 && total && *total == input.numel(),
         ErrorKind::kShapeMismatch, "N={} C={} HxW={} do not match an input of shape {}", n, c, hxw,
         shape_string(input.sizes()));
  for (const auto* p : {&weight, &bias}) {
    KCHECK(!*p || (*p)->numel() == c, ErrorKind::kShapeMismatch,
           "expected weight and bias to have {} elements, got shape {}", c,
           shape_string((*p)->sizes()));
  }
  const Tensor x = input.is_contiguous() ? input : contiguous_copy(input);
  const Tensor w = weight ? cast_copy(*weight, DType::kFloat64) : Tensor();
  const Tensor b = bias ? cast_copy(*bias, DType::kFloat64) : Tensor();
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, input.dtype(), input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor mean_t, new_tensor(op, input.dtype(), {n, groups}));
  SPLICE_ASSIGN_OR_RETURN(Tensor rstd_t, new_tensor(op, input.dtype(), {n, groups}));
  const int64_t cg = c / groups;
  const int64_t count = cg * hxw;
  dispatch_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      const T* px = x.data<T>();
      T* po = out.data<T>();
      const double* pw = weight ? w.data<double>() : nullptr;
      const double* pb = bias ? b.data<double>() : nullptr;
      for (int64_t i = 0; i < n * groups; ++i) {
        const int64_t base = i * count;  // groups are contiguous runs of cg * hxw elements
        double sum = 0.0;
        for (int64_t j = 0; j < count; ++j) sum += static_cast<double>(to_opmath(px[base + j]));
        const double mean = sum / static_cast<double>(count);
        double m2 = 0.0;
        for (int64_t j = 0; j < count; ++j) {
          const double d = static_cast<double>(to_opmath(px[base + j])) - mean;
          m2 += d * d;
        }
        const double rstd = 1.0 / std::sqrt(m2 / static_cast<double>(count) + eps);
        mean_t.data<T>()[i] = cast_value<T>(mean);
        rstd_t.data<T>()[i] = cast_value<T>(rstd);
        const int64_t c0 = (i % groups) * cg;
        for (int64_t j = 0; j < count; ++j) {
          const int64_t ch = c0 + j / hxw;
          double y = (static_cast<double>(to_opmath(px[base + j])) - mean) * rstd;
          if (pw) y *= pw[ch];
          if (pb) y += pb[ch];
          po[base + j] = cast_value<T>(y);
        }
      }
    }
  });
  return Outputs{out, mean_t, rstd_t};
}

Result<std::optional<Tensor>> opt_tensor(const Args& a, size_t i) {
  if (a.is_none(i)) return std::optional<Tensor>();
  SPLICE_ASSIGN_OR_RETURN(Tensor t, a.tensor(i));
  return std::optional<Tensor>(t);
}

// native_group_norm(input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW,
// int group, float eps) -> (out, mean, rstd)
Result<Outputs> native_group_norm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto weight, opt_tensor(a, 1));
  SPLICE_ASSIGN_OR_RETURN(auto bias, opt_tensor(a, 2));
  SPLICE_ASSIGN_OR_RETURN(int64_t n, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(int64_t c, a.integer(4));
  SPLICE_ASSIGN_OR_RETURN(int64_t hxw, a.integer(5));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer(6));
  SPLICE_ASSIGN_OR_RETURN(Scalar eps, a.scalar(7));
  return group_norm_impl(op, input, weight, bias, n, c, hxw, groups, eps.to_double());
}

}  // namespace

std::span<const KernelEntry> composite_math_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::native_group_norm, native_group_norm>().accepting(DTypeSet::floating()),
  };
  return kEntries;
}

}  // namespace splice::cpu
