// More pointwise ops: sign, isnan/isinf, atan2, and the parameterised activations hardtanh,
// leaky_relu, softplus and elu. sign keeps the input's dtype ((0 < x) - (x < 0), so a NaN or a
// -0.0 gives +0 and bool is unchanged); isnan/isinf give bool (false for integers); atan2
// promotes its operands and lifts integers to float32. hardtanh is clamp in self's dtype (it
// also runs on integers, as in PyTorch); the other activations are floating-only. 16-bit
// floats compute in float and round once, as PyTorch's CPU kernels do.
#include <cmath>

#include "backends/common/promotion.h"
#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "ir/pointwise.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

using backend::result_type;

namespace {

Result<Outputs> sign(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_loop<T, T>(out, self, [](T xs) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return xs;
      } else {
        return from_opmath<T>(
            ir::pw::formula<ir::pw::Sign, ir::pw::class_of<opmath_t<T>>()>(to_opmath(xs)));
      }
    });
  });
  return Outputs{out};
}

template <bool kNan>
Result<Outputs> is_nan_inf(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kBool, self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_loop<bool, T>(out, self, [](T x) {
      if constexpr (is_float_v<T>) {
        return kNan ? std::isnan(to_opmath(x)) : std::isinf(to_opmath(x));
      } else {
        return false;
      }
    });
  });
  return Outputs{out};
}

// atan2.default(self, other).
Result<Outputs> atan2(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor other, a.tensor(1));
  DType dtype = result_type(self, other);
  if (!is_floating(dtype)) dtype = DType::kFloat32;
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, self.sizes(), other.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, shape));
  const Tensor x = to_dtype(self, dtype), y = to_dtype(other, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      binary_loop<T, T, T>(out, x, y, [](T p, T q) {
        return from_opmath<T>(ir::pw::Atan2::on_float(to_opmath(p), to_opmath(q)));
      });
    }
  });
  return Outputs{out};
}

// hardtanh.default(self, Scalar min_val=-1, Scalar max_val=1): clamp(self, min_val, max_val)
// into self's dtype (PyTorch's hardtanh_out is clamp_out into a tensor like self).
Result<Outputs> hardtanh(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar lo, a.scalar_or(1, Scalar(int64_t{-1})));
  SPLICE_ASSIGN_OR_RETURN(Scalar hi, a.scalar_or(2, Scalar(int64_t{1})));
  KCHECK(self.dtype() != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      // Bounds are converted to the dtype first (Scalar::to<scalar_t>), as clamp does.
      const auto lv = to_opmath(*scalar_to_tensor(lo, self.dtype()).data<T>());
      const auto hv = to_opmath(*scalar_to_tensor(hi, self.dtype()).data<T>());
      unary_loop<T, T>(out, self, [&](T xs) {
        using M = decltype(lv);
        return from_opmath<T>(
            ir::pw::formula<ir::pw::Hardtanh, ir::pw::class_of<M>()>(to_opmath(xs), lv, hv));
      });
    }
  });
  return Outputs{out};
}

enum class Act { kLeakyRelu, kSoftplus, kElu };

// leaky_relu(self, negative_slope=0.01), softplus(self, beta=1, threshold=20) and
// elu(self, alpha=1, scale=1, input_scale=1): floating inputs only; the Scalar parameters are
// read in the opmath type.
template <Act kAct>
Result<Outputs> activation(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  const double d0 = kAct == Act::kLeakyRelu ? 0.01 : 1.0;
  const double d1 = kAct == Act::kSoftplus ? 20.0 : 1.0;
  SPLICE_ASSIGN_OR_RETURN(Scalar p0, a.scalar_or(1, Scalar(d0)));
  SPLICE_ASSIGN_OR_RETURN(Scalar p1, a.scalar_or(2, Scalar(d1)));
  SPLICE_ASSIGN_OR_RETURN(Scalar p2, a.scalar_or(3, Scalar(1.0)));
  KCHECK(is_floating(self.dtype()), ErrorKind::kBadInput, "not implemented for {} tensors",
         dtype_name(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using M = opmath_t<T>;
      const M a0 = static_cast<M>(p0.to_double()), a1 = static_cast<M>(p1.to_double()),
              a2 = static_cast<M>(p2.to_double());
      unary_loop<T, T>(out, self, [&](T xs) {
        const M x = to_opmath(xs);
        switch (kAct) {
          case Act::kLeakyRelu:
            return from_opmath<T>(ir::pw::LeakyRelu::on_float(x, a0));
          case Act::kSoftplus:  // a0 = beta, a1 = threshold
            return from_opmath<T>(ir::pw::Softplus::on_float(x, a0, a1));
          case Act::kElu:  // a0 = alpha, a1 = scale, a2 = input_scale
            return from_opmath<T>(ir::pw::Elu::on_float(x, a0, a1, a2));
        }
        return xs;
      });
    }
  });
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> pointwise_more_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::sign, sign>(),
      entry<OpId::isnan, is_nan_inf<true>>(),
      entry<OpId::isinf, is_nan_inf<false>>(),
      entry<OpId::atan2, atan2>(),
      entry<OpId::hardtanh, hardtanh>(),
      entry<OpId::leaky_relu, activation<Act::kLeakyRelu>>(),
      entry<OpId::softplus, activation<Act::kSoftplus>>(),
      entry<OpId::elu, activation<Act::kElu>>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
