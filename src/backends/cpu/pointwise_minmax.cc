// Elementwise minimum/maximum, clamp and clamp_min/clamp_max (Scalar and Tensor bounds).
// minimum/maximum propagate a NaN from either side; clamp.default keeps a floating self's dtype and
// otherwise promotes self with the scalar bounds (an int tensor clamped to 0.5 is float32), then
// computes min(max(x, lo), hi), so hi wins when lo > hi and a NaN x stays NaN. clamp.Tensor
// promotes and broadcasts all its tensors; a NaN bound gives NaN, and with a single bound it is
// exactly maximum(self, min) / minimum(self, max), as in PyTorch.
#include <cmath>
#include <limits>

#include "backends/common/promotion.h"
#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

using backend::promotion_operand;
using backend::PromotionOperand;
using backend::result_type;

namespace {

// std::max/std::min with PyTorch's NaN rule for minimum/maximum (bool: or/and).
template <bool kMax, typename T>
T extremum(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return kMax ? (x || y) : (x && y);
  } else {
    if constexpr (is_float_v<T>) {
      if (std::isnan(to_opmath(x)) || std::isnan(to_opmath(y)))
        return T(std::numeric_limits<float>::quiet_NaN());
    }
    if constexpr (kMax) return to_opmath(x) < to_opmath(y) ? y : x;
    return to_opmath(y) < to_opmath(x) ? y : x;
  }
}

// out = extremum(a, b) over the broadcast of a and b in their promoted dtype.
template <bool kMax>
Result<Tensor> extremum_tensors(std::string_view op, const Tensor& a, const Tensor& b) {
  const DType dtype = result_type(a, b);
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, a.sizes(), b.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, shape));
  const Tensor x = to_dtype(a, dtype), y = to_dtype(b, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_loop<T, T, T>(out, x, y, [](T p, T q) { return extremum<kMax>(p, q); });
  });
  return out;
}

template <bool kMax>
Result<Outputs> minimum_maximum(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor other, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, extremum_tensors<kMax>(op, self, other));
  return Outputs{out};
}

// clamp.default(self, Scalar? min=None, Scalar? max=None).
Result<Tensor> clamp_scalar_impl(std::string_view op, const Tensor& self,
                                 const std::optional<Scalar>& lo, const std::optional<Scalar>& hi,
                                 bool single_nan_fills) {
  KCHECK(lo || hi, ErrorKind::kBadInput, "at least one of 'min' or 'max' must not be None");
  DType dtype = self.dtype();
  if (!is_floating(dtype)) {
    std::vector<PromotionOperand> ops = {promotion_operand(self)};
    if (lo) ops.push_back(promotion_operand(*lo));
    if (hi) ops.push_back(promotion_operand(*hi));
    dtype = result_type(ops);
  }
  KCHECK(dtype != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, self.sizes()));
  const Tensor in = to_dtype(self, dtype);
  // PyTorch fills with NaN when both bounds are given and one is NaN; with a single NaN bound
  // clamp leaves x unchanged while clamp_min/clamp_max fill with NaN.
  const bool lo_nan = lo && std::isnan(lo->to_double()), hi_nan = hi && std::isnan(hi->to_double());
  const bool nan_bound = (lo && hi) || single_nan_fills ? lo_nan || hi_nan : false;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      // Bounds are converted to the result dtype first (Scalar::to<scalar_t>).
      const auto lv = to_opmath(lo ? *scalar_to_tensor(*lo, dtype).data<T>() : T(0));
      const auto hv = to_opmath(hi ? *scalar_to_tensor(*hi, dtype).data<T>() : T(0));
      const bool has_lo = lo.has_value(), has_hi = hi.has_value();
      unary_loop<T, T>(out, in, [&](T xs) -> T {
        if constexpr (is_float_v<T>) {
          if (nan_bound) return T(std::numeric_limits<float>::quiet_NaN());
        }
        auto x = to_opmath(xs);
        if (has_lo) x = x < lv ? lv : x;  // std::max(x, lo): a NaN x stays
        if (has_hi) x = hv < x ? hv : x;  // std::min(x, hi)
        return from_opmath<T>(x);
      });
    }
  });
  return out;
}

Result<Outputs> clamp_scalar(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  std::optional<Scalar> lo, hi;
  if (!a.is_none(1)) {
    SPLICE_ASSIGN_OR_RETURN(lo, a.scalar(1));
  }
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(hi, a.scalar(2));
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, clamp_scalar_impl(op, self, lo, hi, false));
  return Outputs{out};
}

// clamp_min/clamp_max.default(self, Scalar bound): clamp with one bound (same promotion).
template <bool kMin>
Result<Outputs> clamp_one_scalar(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar bound, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out,
                          clamp_scalar_impl(op, self, kMin ? std::optional(bound) : std::nullopt,
                                            kMin ? std::nullopt : std::optional(bound), true));
  return Outputs{out};
}

// clamp_min/clamp_max.Tensor(self, Tensor bound): maximum(self, min) / minimum(self, max).
template <bool kMin>
Result<Outputs> clamp_one_tensor(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor bound, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, extremum_tensors<kMin>(op, self, bound));
  return Outputs{out};
}

// clamp.Tensor(self, Tensor? min=None, Tensor? max=None).
Result<Outputs> clamp_tensor(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  std::optional<Tensor> lo, hi;
  if (!a.is_none(1)) {
    SPLICE_ASSIGN_OR_RETURN(lo, a.tensor(1));
  }
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(hi, a.tensor(2));
  }
  KCHECK(lo || hi, ErrorKind::kBadInput, "at least one of 'min' or 'max' must not be None");
  if (!hi) {
    SPLICE_ASSIGN_OR_RETURN(Tensor out, extremum_tensors<true>(op, self, *lo));
    return Outputs{out};
  }
  if (!lo) {
    SPLICE_ASSIGN_OR_RETURN(Tensor out, extremum_tensors<false>(op, self, *hi));
    return Outputs{out};
  }
  const PromotionOperand ops[] = {promotion_operand(self), promotion_operand(*lo),
                                  promotion_operand(*hi)};
  const DType dtype = result_type(ops);
  KCHECK(dtype != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  SPLICE_ASSIGN_OR_RETURN(Shape s1, broadcast_shapes(op, self.sizes(), lo->sizes()));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, s1, hi->sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, shape));
  const Tensor x = to_dtype(self, dtype), l = to_dtype(*lo, dtype), h = to_dtype(*hi, dtype);
  const Shape sx = broadcast_strides(x, shape), sl = broadcast_strides(l, shape),
              sh = broadcast_strides(h, shape);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      T* po = out.data<T>();
      const T* px = x.data<T>();
      const T* pl = l.data<T>();
      const T* ph = h.data<T>();
      for_each_offset<4>(shape, {out.strides().data(), sx.data(), sl.data(), sh.data()},
                         [&](const std::array<int64_t, 4>& o) {
                           const auto v = to_opmath(px[o[1]]), lv = to_opmath(pl[o[2]]),
                                      hv = to_opmath(ph[o[3]]);
                           if constexpr (is_float_v<T>) {
                             if (std::isnan(lv) || std::isnan(hv)) {
                               po[o[0]] = T(std::numeric_limits<float>::quiet_NaN());
                               return;
                             }
                           }
                           auto r = v < lv ? lv : v;
                           r = hv < r ? hv : r;
                           po[o[0]] = from_opmath<T>(r);
                         });
    }
  });
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> minmax_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::minimum, minimum_maximum<false>>(),
      entry<OpId::maximum, minimum_maximum<true>>(),
      entry<OpId::clamp, clamp_scalar>(),
      entry<OpId::clamp_Tensor, clamp_tensor>(),
      entry<OpId::clamp_min, clamp_one_scalar<true>>(),
      entry<OpId::clamp_max, clamp_one_scalar<false>>(),
      entry<OpId::clamp_min_Tensor, clamp_one_tensor<true>>(),
      entry<OpId::clamp_max_Tensor, clamp_one_tensor<false>>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
