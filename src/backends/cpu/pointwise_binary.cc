// Binary pointwise arithmetic: add/sub/rsub (with alpha), mul, div (true, trunc, floor),
// remainder (Python's sign rule), fmod (C's sign rule), pow, where, masked_fill,
// logical_and/or/xor and bitwise_and/or/xor. Either operand of a
// .Tensor overload may be a wrapped Python number (`2 - x` exports as sub.Tensor(2, x)). Operands
// broadcast; the result dtype is PyTorch's result_type (true division of integers gives float32);
// inputs are converted to that dtype and the op computes in its opmath type (float for f16/bf16,
// rounded once). As in PyTorch's mul/div kernels, a 0-d second operand of a 16-bit float op keeps
// its original value in float instead of being rounded to 16 bits first.
#include <atomic>
#include <cmath>

#include "backends/common/promotion.h"
#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "ir/pointwise.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

using backend::promotion_operand;
using backend::PromotionOperand;
using backend::result_type;

namespace {

enum class BinOp { kAdd, kMul, kDiv, kDivTrunc, kDivFloor, kRem, kFmod, kPow };

// A tensor or a Python number operand. The tensor is the kernel's argument itself (or a local
// of the caller that outlives the operand), not a copy: a kernel call copies no tensor it only
// reads.
struct Operand {
  const Tensor* tensor = nullptr;
  Scalar scalar;

  PromotionOperand promotion() const {
    return tensor ? promotion_operand(*tensor) : promotion_operand(scalar);
  }
  Tensor as(DType d) const { return tensor ? to_dtype(*tensor, d) : scalar_to_tensor(scalar, d); }
  // The operand in dtype d: the tensor itself when it has that dtype, else a converted copy
  // kept in `holder`.
  const Tensor& in(DType d, Tensor& holder) const {
    if (tensor != nullptr && tensor->dtype() == d) return *tensor;
    holder = as(d);
    return holder;
  }
  const Shape& shape() const {
    static const Shape kScalarShape;
    return tensor ? tensor->sizes() : kScalarShape;
  }
  bool is_zero_dim() const { return !tensor || tensor->dim() == 0; }
  double value() const { return tensor ? item_as_double(*tensor) : scalar.to_double(); }
};

using ir::pw::int_pow;
using ir::pw::wrap_add;
using ir::pw::wrap_mul;

Result<Tensor> arith(std::string_view op, BinOp kind, const Operand& a, const Operand& b,
                     const Scalar& alpha) {
  const PromotionOperand ops[] = {a.promotion(), b.promotion()};
  const DType common = result_type(ops);
  DType compute = common;
  if (kind == BinOp::kDiv && !is_floating(common)) compute = DType::kFloat32;
  if (kind == BinOp::kAdd) {
    KCHECK(!(is_integral(common) || common == DType::kBool) || !alpha.is_double(),
           ErrorKind::kBadInput,
           "for integral input tensors, argument alpha must not be a floating point number");
    KCHECK(common != DType::kBool || alpha.is_bool(), ErrorKind::kBadInput,
           "boolean alpha only supported for boolean results");
  }
  KCHECK(
      common != DType::kBool || kind == BinOp::kAdd || kind == BinOp::kMul || kind == BinOp::kDiv,
      ErrorKind::kBadInput, "not implemented for bool tensors");
  // Equal shapes (the common case) need no broadcast shape of their own.
  Shape broadcast;
  if (a.shape() != b.shape()) {
    SPLICE_ASSIGN_OR_RETURN(broadcast, broadcast_shapes(op, a.shape(), b.shape()));
  }
  const Shape& shape = a.shape() == b.shape() ? a.shape() : broadcast;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, compute, shape));
  Tensor a_holder, b_holder;
  const Tensor& ta = a.in(compute, a_holder);
  const Tensor& tb = b.in(compute, b_holder);
  const bool b_original = (kind == BinOp::kMul || kind == BinOp::kDiv) && b.is_zero_dim() &&
                          (compute == DType::kFloat16 || compute == DType::kBFloat16);
  const double b_value = b_original ? b.value() : 0.0;
  // Set from the (possibly multi-threaded) element loop.
  std::atomic<bool> divided_by_zero{false};
  dispatch_dtype(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      const bool al = alpha.to_bool();
      binary_loop<bool, bool, bool>(out, ta, tb, [&](bool x, bool y) {
        return kind == BinOp::kAdd ? (x || (al && y)) : (x && y);
      });
    } else if constexpr (is_int_v<T>) {
      const T al = cast_value<T>(alpha.to_int());
      binary_loop<T, T, T>(out, ta, tb, [&](T x, T y) -> T {
        switch (kind) {
          case BinOp::kAdd:
            return wrap_add(x, wrap_mul(al, y));
          case BinOp::kMul:
            return wrap_mul(x, y);
          case BinOp::kPow:
            return int_pow(x, y);
          default:
            break;
        }
        if (y == 0) {
          divided_by_zero.store(true, std::memory_order_relaxed);
          return 0;
        }
        if constexpr (std::is_signed_v<T>) {
          // Avoids INT_MIN / -1 (and INT_MIN % -1), which trap on x86.
          if (y == -1)
            return kind == BinOp::kRem || kind == BinOp::kFmod ? T(0) : wrap_mul(x, T(-1));
        }
        if (kind == BinOp::kFmod) return static_cast<T>(x % y);  // C's sign rule: x's sign
        if (kind == BinOp::kRem) {
          T r = static_cast<T>(x % y);
          if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
          return r;
        }
        T q = static_cast<T>(x / y);
        if (kind == BinOp::kDivFloor && x % y != 0 && ((x < 0) != (y < 0))) q = q - 1;
        return q;
      });
    } else {
      const M al = static_cast<M>(alpha.to_double());
      const M bv = static_cast<M>(b_value);
      if constexpr (std::is_same_v<T, M>) {
        // float and double: the common ops as branch-free loops the compiler vectorises (the
        // same arithmetic as the general loop below, so the same bits).
        if (kind == BinOp::kMul) {
          binary_loop<T, T, T>(out, ta, tb, [](T x, T y) { return x * y; });
          return;
        }
        if (kind == BinOp::kAdd && alpha.to_double() == 1.0) {
          binary_loop<T, T, T>(out, ta, tb, [](T x, T y) { return x + y; });
          return;
        }
        if (kind == BinOp::kAdd) {
          binary_loop<T, T, T>(out, ta, tb, [al](T x, T y) { return x + al * y; });
          return;
        }
        if (kind == BinOp::kDiv) {
          binary_loop<T, T, T>(out, ta, tb, [](T x, T y) { return x / y; });
          return;
        }
      }
      binary_loop<T, T, T>(out, ta, tb, [&](T xs, T ys) -> T {
        const M x = to_opmath(xs);
        const M y = b_original ? bv : to_opmath(ys);
        M r = M(0);
        switch (kind) {
          case BinOp::kAdd:
            r = alpha.to_double() == 1.0 ? ir::pw::Add::on_float(x, y)
                                         : ir::pw::AddScaled::on_float(x, y, al);
            break;
          case BinOp::kMul:
            r = ir::pw::Mul::on_float(x, y);
            break;
          case BinOp::kDiv:
            r = ir::pw::Div::on_float(x, y);
            break;
          case BinOp::kDivTrunc:
            r = ir::pw::DivTrunc::on_float(x, y);
            break;
          case BinOp::kDivFloor:
            r = ir::pw::DivFloor::on_float(x, y);
            break;
          case BinOp::kRem:
            r = ir::pw::Remainder::on_float(x, y);
            break;
          case BinOp::kFmod:
            r = ir::pw::Fmod::on_float(x, y);
            break;
          case BinOp::kPow:
            r = ir::pw::Pow::on_float(x, y);
            break;
        }
        return from_opmath<T>(r);
      });
    }
  });
  KCHECK(!divided_by_zero.load(), ErrorKind::kBadInput,
         "integer division by zero (ZeroDivisionError)");
  return out;
}

Operand tensor_operand(const Tensor& t) { return Operand{&t, Scalar()}; }
Operand scalar_operand(Scalar s) { return Operand{nullptr, s}; }

// The single output of a kernel, moved (an initializer list would copy it).
Outputs single_output(Tensor t) {
  Outputs out;
  out.reserve(1);
  out.push_back(std::move(t));
  return out;
}

// A tensor operand, or a Python number export passed where a tensor is expected (a wrapped
// number, `x * 2` → mul.Tensor(x, 2)), which promotes like a scalar.
// The operand points into `args`, which outlive the kernel call.
Result<Operand> read_operand(const Args& a, std::span<const KernelArg> args, size_t i) {
  // Tensors first: trying a tensor as a number would format an error message on every call.
  if (a.is_tensor(i)) return tensor_operand(std::get<Tensor>(args[i]));
  if (auto s = a.scalar(i); s.ok()) return scalar_operand(*s);
  return a.tensor(i).error();  // neither a tensor nor a number: "should be Tensor"
}

// add/sub/rsub .Tensor(self, other, *, alpha=1) and .Scalar(self, other, alpha=1); rsub
// computes other - alpha * self.
template <bool kNegate, bool kScalarOther, bool kReverse = false>
Result<Outputs> add_like(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand self, read_operand(a, args, 0));
  Operand other;
  if constexpr (kScalarOther) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, a.scalar(1));
    other = scalar_operand(s);
  } else {
    SPLICE_ASSIGN_OR_RETURN(other, read_operand(a, args, 1));
  }
  KCHECK(self.tensor || other.tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(2, Scalar(int64_t{1})));
  if constexpr (kNegate) {
    const PromotionOperand ops[] = {self.promotion(), other.promotion()};
    KCHECK(result_type(ops) != DType::kBool, ErrorKind::kBadInput,
           "subtraction with two bool tensors is not supported; use logical_xor");
    if (alpha.is_double())
      alpha = Scalar(-alpha.to_double());
    else
      alpha = Scalar(static_cast<int64_t>(0 - static_cast<uint64_t>(alpha.to_int())));
  }
  if constexpr (kReverse) std::swap(self, other);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, arith(op, BinOp::kAdd, self, other, alpha));
  return single_output(std::move(out));
}

// mul/div/remainder/pow with a tensor or scalar second operand; div modes read arg 2.
template <BinOp kKind, bool kScalarOther>
Result<Outputs> binary(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand self, read_operand(a, args, 0));
  Operand other;
  if constexpr (kScalarOther) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, a.scalar(1));
    other = scalar_operand(s);
  } else {
    SPLICE_ASSIGN_OR_RETURN(other, read_operand(a, args, 1));
  }
  BinOp kind = kKind;
  if (kKind == BinOp::kDivTrunc) {  // the *_mode overloads: rounding_mode picks the op
    SPLICE_ASSIGN_OR_RETURN(auto mode, a.opt_string(2));
    if (!mode)
      kind = BinOp::kDiv;
    else if (*mode == "floor")
      kind = BinOp::kDivFloor;
    else
      KCHECK(*mode == "trunc", ErrorKind::kBadInput,
             "rounding_mode must be None, 'trunc' or 'floor', got '{}'", *mode);
  }
  if (kKind == BinOp::kPow && kScalarOther) {
    KCHECK(!(self.tensor && is_integral(self.tensor->dtype()) && other.scalar.is_int() &&
             other.scalar.to_int() < 0),
           ErrorKind::kBadInput, "integers to negative integer powers are not allowed");
  }
  KCHECK(self.tensor || other.tensor, ErrorKind::kBadInput,
         "expects a tensor operand, got two numbers");
  SPLICE_ASSIGN_OR_RETURN(Tensor out, arith(op, kind, self, other, Scalar(int64_t{1})));
  return single_output(std::move(out));
}

Result<Outputs> pow_scalar(std::string_view op, std::span<const KernelArg> args) {
  // pow.Scalar(Scalar self, Tensor exponent)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Scalar self, a.scalar(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor exponent, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, arith(op, BinOp::kPow, scalar_operand(self),
                                            tensor_operand(exponent), Scalar(int64_t{1})));
  return single_output(std::move(out));
}

// where.self / ScalarSelf / ScalarOther / Scalar: (condition, self, other), each of self and
// other a tensor or a number.
Result<Outputs> where(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor cond, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, args, 1));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, args, 2));
  KCHECK(cond.dtype() == DType::kBool || cond.dtype() == DType::kUInt8, ErrorKind::kBadInput,
         "condition must be a bool tensor, got {}", dtype_name(cond.dtype()));
  const PromotionOperand ops[] = {x.promotion(), y.promotion()};
  const DType dtype = result_type(ops);
  SPLICE_ASSIGN_OR_RETURN(Shape s1, broadcast_shapes(op, cond.sizes(), x.shape()));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, s1, y.shape()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, shape));
  const Tensor tc = to_dtype(cond, DType::kBool), tx = x.as(dtype), ty = y.as(dtype);
  const Shape sc = broadcast_strides(tc, shape), sx = broadcast_strides(tx, shape),
              sy = broadcast_strides(ty, shape);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    const bool* pc = tc.data<bool>();
    const T* px = tx.data<T>();
    const T* py = ty.data<T>();
    const std::array<const int64_t*, 4> strides = {out.strides().data(), sc.data(), sx.data(),
                                                   sy.data()};
    // Row by row (over threads) when every operand's innermost dim is dense or broadcast, as
    // a mask, scores and a scalar fill are; else element by element.
    const int64_t ic = sc.empty() ? 0 : sc.back(), ix = sx.empty() ? 0 : sx.back(),
                  iy = sy.empty() ? 0 : sy.back();
    const bool rows =
        for_each_row<4>(shape, strides, [&](const std::array<int64_t, 4>& o, int64_t n) {
          T* ro = po + o[0];
          const bool* rc = pc + o[1];
          const T* rx = px + o[2];
          const T* ry = py + o[3];
          for (int64_t i = 0; i < n; ++i) ro[i] = rc[i * ic] ? rx[i * ix] : ry[i * iy];
        });
    if (rows) return;
    for_each_offset<4>(shape, strides, [&](const std::array<int64_t, 4>& o) {
      po[o[0]] = pc[o[1]] ? px[o[2]] : py[o[3]];
    });
  });
  return single_output(std::move(out));
}

enum class LogicOp { kAnd, kOr, kXor };

template <LogicOp kOp>
Result<Outputs> logical(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor x, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor y, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, x.sizes(), y.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kBool, shape));
  // Truth is decided in each operand's own dtype (NaN is true), as PyTorch does.
  const Tensor bx = to_dtype(x, DType::kBool), by = to_dtype(y, DType::kBool);
  binary_loop<bool, bool, bool>(out, bx, by, [](bool p, bool q) {
    return kOp == LogicOp::kAnd ? (p && q) : kOp == LogicOp::kOr ? (p || q) : (p != q);
  });
  return single_output(std::move(out));
}

// bitwise_and/or/xor (and the __and__/__or__/__xor__ operators) in every overload: either
// operand a tensor or a number, promoted together; integer and bool dtypes only (bool is the
// logical op), as PyTorch's kernels are dispatched.
template <LogicOp kOp>
Result<Outputs> bitwise(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Operand x, read_operand(a, args, 0));
  SPLICE_ASSIGN_OR_RETURN(Operand y, read_operand(a, args, 1));
  KCHECK(x.tensor || y.tensor, ErrorKind::kBadInput, "expects a tensor operand, got two numbers");
  const PromotionOperand ops[] = {x.promotion(), y.promotion()};
  const DType dtype = result_type(ops);
  KCHECK(!is_floating(dtype), ErrorKind::kBadInput,
         "only supported for integer and bool tensors, got {}", dtype_name(dtype));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, x.shape(), y.shape()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, shape));
  const Tensor tx = x.as(dtype), ty = y.as(dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || is_int_v<T>) {
      binary_loop<T, T, T>(out, tx, ty, [](T p, T q) -> T {
        if constexpr (std::is_same_v<T, bool>) {
          return kOp == LogicOp::kAnd ? (p && q) : kOp == LogicOp::kOr ? (p || q) : (p != q);
        } else {
          return static_cast<T>(kOp == LogicOp::kAnd  ? (p & q)
                                : kOp == LogicOp::kOr ? (p | q)
                                                      : (p ^ q));
        }
      });
    }
  });
  return single_output(std::move(out));
}

// masked_fill.Scalar / .Tensor(self, Tensor mask, value): self where mask is false, value where
// it is true, over the broadcast of self and mask, in self's dtype (the value converted as c10
// converts: 7.9 into an int tensor is 7). The mask must be bool and a value tensor 0-d.
Result<Outputs> masked_fill(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor mask, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Operand value, read_operand(a, args, 2));
  KCHECK(mask.dtype() == DType::kBool, ErrorKind::kBadInput,
         "only supports boolean masks, but got mask with dtype {}", dtype_name(mask.dtype()));
  KCHECK(!value.tensor || value.tensor->dim() == 0, ErrorKind::kBadInput,
         "only supports a 0-dimensional value tensor, but got tensor with {} dimension(s)",
         value.tensor ? value.tensor->dim() : 0);
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, self.sizes(), mask.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), shape));
  const Tensor fill = value.as(self.dtype());
  const Shape ss = broadcast_strides(self, shape), sm = broadcast_strides(mask, shape);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* po = out.data<T>();
    const T* px = self.data<T>();
    const bool* pm = mask.data<bool>();
    const T v = *fill.data<T>();
    for_each_offset<3>(
        shape, {out.strides().data(), ss.data(), sm.data()},
        [&](const std::array<int64_t, 3>& o) { po[o[0]] = pm[o[2]] ? v : px[o[1]]; });
  });
  return single_output(std::move(out));
}

}  // namespace

std::span<const KernelEntry> binary_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::add_Tensor, add_like<false, false>>(kStoresIntoDestination),
      entry<OpId::add_Scalar, add_like<false, true>>(kStoresIntoDestination),
      entry<OpId::sub_Tensor, add_like<true, false>>(kStoresIntoDestination),
      entry<OpId::sub_Scalar, add_like<true, true>>(kStoresIntoDestination),
      entry<OpId::rsub_Tensor, add_like<true, false, true>>(),
      entry<OpId::rsub_Scalar, add_like<true, true, true>>(kStoresIntoDestination),
      entry<OpId::mul_Tensor, binary<BinOp::kMul, false>>(kStoresIntoDestination),
      entry<OpId::mul_Scalar, binary<BinOp::kMul, true>>(kStoresIntoDestination),
      entry<OpId::div_Tensor, binary<BinOp::kDiv, false>>(kStoresIntoDestination),
      entry<OpId::div_Scalar, binary<BinOp::kDiv, true>>(kStoresIntoDestination),
      entry<OpId::div_Tensor_mode, binary<BinOp::kDivTrunc, false>>(),
      entry<OpId::div_Scalar_mode, binary<BinOp::kDivTrunc, true>>(),
      entry<OpId::floor_divide, binary<BinOp::kDivFloor, false>>(),
      entry<OpId::remainder_Tensor, binary<BinOp::kRem, false>>(),
      entry<OpId::remainder_Scalar, binary<BinOp::kRem, true>>(),
      entry<OpId::pow_Tensor_Tensor, binary<BinOp::kPow, false>>(),
      entry<OpId::pow_Tensor_Scalar, binary<BinOp::kPow, true>>(kStoresIntoDestination),
      entry<OpId::pow_Scalar, pow_scalar>(),
      entry<OpId::where_self, where>(kStoresIntoDestination),
      entry<OpId::where_ScalarSelf, where>(),
      entry<OpId::where_ScalarOther, where>(),
      entry<OpId::where_Scalar, where>(),
      entry<OpId::logical_and, logical<LogicOp::kAnd>>(),
      entry<OpId::logical_or, logical<LogicOp::kOr>>(),
      entry<OpId::logical_xor, logical<LogicOp::kXor>>(),
      entry<OpId::fmod_Tensor, binary<BinOp::kFmod, false>>(),
      entry<OpId::fmod_Scalar, binary<BinOp::kFmod, true>>(),
      entry<OpId::bitwise_and_Tensor, bitwise<LogicOp::kAnd>>(),
      entry<OpId::bitwise_and_Scalar, bitwise<LogicOp::kAnd>>(),
      entry<OpId::dunder_and_Tensor, bitwise<LogicOp::kAnd>>(),
      entry<OpId::dunder_and_Scalar, bitwise<LogicOp::kAnd>>(),
      entry<OpId::bitwise_or_Tensor, bitwise<LogicOp::kOr>>(),
      entry<OpId::bitwise_or_Scalar, bitwise<LogicOp::kOr>>(),
      entry<OpId::dunder_or_Tensor, bitwise<LogicOp::kOr>>(),
      entry<OpId::dunder_or_Scalar, bitwise<LogicOp::kOr>>(),
      entry<OpId::bitwise_xor_Tensor, bitwise<LogicOp::kXor>>(),
      entry<OpId::bitwise_xor_Scalar, bitwise<LogicOp::kXor>>(),
      entry<OpId::dunder_xor_Tensor, bitwise<LogicOp::kXor>>(),
      entry<OpId::dunder_xor_Scalar, bitwise<LogicOp::kXor>>(),
      entry<OpId::masked_fill_Scalar, masked_fill>(),
      entry<OpId::masked_fill_Tensor, masked_fill>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
