#pragma once
// Every pointwise function (ir::PointwiseFn), each written once as a struct in its family's
// header, rendered by each consumer: the CPU interpreter and kernels instantiate the formulas
// with native scalars (primitives.h), the CUDA backend with an expression type that prints CUDA
// source (backends/cuda/pointwise_expr.h).
//
// A function is a struct with
//   name    its name in dumps and messages ("silu");
//   arity   its operand count, parameters included (leaky_relu's slope is operand y);
//   on_bool, on_int, on_float: its formula in each compute class it is defined for, a static
//           function template over the value type V taking `arity` V's; on_any stands for every
//           class the struct has no own member for. Which members exist is the function's
//           dtype rule (compute_classes below; the op's lowering picks the compute and result
//           dtypes, see pointwise.h);
//   optional predicate = true: the result dtype is bool (the formula returns a truth value);
//   optional bool_condition = true: operand 0 is converted to bool, not the compute dtype
//           (where);
//   optional kernel_only: classes only a single-op kernel computes (integer division, whose
//           ZeroDivisionError a kernel reports): neither the CPU interpreter nor a fused group
//           on any backend runs them;
//   optional device_only: classes the host cannot compute (erfinv has no std:: function):
//           the CPU interpreter does not run them.
// and its X(Name) in its family's list; the enum value is kName.

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "ir/ops/pointwise/activation.h"
#include "ir/ops/pointwise/arithmetic.h"
#include "ir/ops/pointwise/compute_class.h"
#include "ir/ops/pointwise/logical.h"
#include "ir/ops/pointwise/math.h"
#include "ir/ops/pointwise/selection.h"

// Pointwise ops defined whole in their family's header, one entry each:
//   OP(id, target, schema, in-place target, in-place schema, rule, Function)
// id, target and schema as in ir/op_list.inc (the op's class is kCompute), the in-place twin
// (x.op_()) as in ir/inplace_list.inc ("", "" where PyTorch has none), the rule (PointwiseOpRule:
// its shape and dtype rule, how it lowers to one node and what its CUDA unit-test case passes) and
// the struct of its formula. Everything else follows from the entry: the op table and the in-place
// table list it, the shape rules, the lowering, both backends' kernel tables (the CPU runs the
// lowered program through its interpreter) and the CUDA pointwise cases read it. Each family
// contributes its SPLICE_PW_<FAMILY>_OPS list here.
// clang-format off
#define SPLICE_POINTWISE_OPS(OP) SPLICE_PW_MATH_OPS(OP)
// clang-format on

// Every function, family by family.
// clang-format off
#define SPLICE_POINTWISE_FNS(X) \
  SPLICE_PW_ARITHMETIC(X)       \
  SPLICE_PW_LOGICAL(X) SPLICE_PW_SELECTION(X) SPLICE_PW_MATH(X) SPLICE_PW_ACTIVATION(X)
// clang-format on

namespace splice::ir {

#define SPLICE_PW_ENUM(Name) k##Name,
enum class PointwiseFn : uint8_t { SPLICE_POINTWISE_FNS(SPLICE_PW_ENUM) };
#undef SPLICE_PW_ENUM

// The rules an op defined in ir/ops/pointwise/ follows (PyTorch's elementwise_dtypes kinds).
enum class PointwiseOpRule : uint8_t {
  // f(self): integer and bool inputs lift to float32 (INT_TO_FLOAT), floats keep their dtype;
  // 16-bit floats compute in float32.
  kFloatUnary,
  // f(self, other), two tensors: broadcast, promoted to their result_type, integers lifted to
  // float32 (INT_TO_FLOAT, as atan2).
  kFloatBinary,
};

namespace pw {

// A function's struct as a value (visit passes one).
template <class F>
struct Fn {
  using type = F;
};

// The struct of a function known at compile time: struct_of<PointwiseFn::kSilu>::type is Silu.
template <PointwiseFn fn>
struct struct_of;
#define SPLICE_PW_STRUCT_OF(Name)          \
  template <>                              \
  struct struct_of<PointwiseFn::k##Name> { \
    using type = Name;                     \
  };
SPLICE_POINTWISE_FNS(SPLICE_PW_STRUCT_OF)
#undef SPLICE_PW_STRUCT_OF

// Calls f(Fn<Struct>{}) for the struct of `fn`.
template <class Visitor>
decltype(auto) visit(PointwiseFn fn, Visitor&& f) {
  switch (fn) {
#define SPLICE_PW_CASE(Name) \
  case PointwiseFn::k##Name: \
    return f(Fn<Name>{});
    SPLICE_POINTWISE_FNS(SPLICE_PW_CASE)
#undef SPLICE_PW_CASE
  }
  return f(Fn<Copy>{});  // unreachable for a valid enum value
}

template <class F>
constexpr bool is_predicate() {
  if constexpr (requires { F::predicate; }) return F::predicate;
  return false;
}
template <class F>
constexpr bool has_bool_condition() {
  if constexpr (requires { F::bool_condition; }) return F::bool_condition;
  return false;
}
template <class F>
constexpr uint8_t kernel_only_classes() {
  if constexpr (requires { F::kernel_only; }) return F::kernel_only;
  return 0;
}
template <class F>
constexpr uint8_t device_only_classes() {
  if constexpr (requires { F::device_only; }) return F::device_only;
  return 0;
}

// Whether F has a formula for compute class `cls` (its own member or on_any).
template <class F, uint8_t cls>
constexpr bool defines() {
  constexpr bool any = requires { &F::template on_any<bool>; }
  || requires { &F::template on_any<bool, bool>; };
  if constexpr (cls == kComputeBool) return any || requires {
      &F::template on_bool<bool>;
    };
  if constexpr (cls == kComputeInt) return any || requires {
      &F::template on_int<int>;
    };
  return any || requires { &F::template on_float<float>; };
}

template <class F>
constexpr uint8_t compute_classes() {
  return static_cast<uint8_t>((defines<F, kComputeBool>() ? kComputeBool : 0) |
                              (defines<F, kComputeInt>() ? kComputeInt : 0) |
                              (defines<F, kComputeFloat>() ? kComputeFloat : 0));
}

// F's formula for class `cls` applied to the operands.
template <class F, uint8_t cls, class... V>
auto formula(V... v) {
  if constexpr (cls == kComputeBool && requires { F::on_bool(v...); })
    return F::on_bool(v...);
  else if constexpr (cls == kComputeInt && requires { F::on_int(v...); })
    return F::on_int(v...);
  else if constexpr (cls == kComputeFloat && requires { F::on_float(v...); })
    return F::on_float(v...);
  else
    return F::on_any(v...);
}

// The compute class of a native type.
template <class T>
constexpr uint8_t class_of() {
  if constexpr (std::is_same_v<T, bool>) return kComputeBool;
  if constexpr (std::is_integral_v<T>) return kComputeInt;
  return kComputeFloat;
}

}  // namespace pw

}  // namespace splice::ir
