#pragma once
// Pointwise functions, logical family: bitwise ops, comparisons, logical ops and the
// classification of floats. Comparisons, logical ops and classification are predicates: their
// result dtype is always bool. See functions.h for how a function is written.

#include <string_view>

#include "ir/ops/pointwise/compute_class.h"
#include "ir/ops/pointwise/primitives.h"

namespace splice::ir::pw {

// Bitwise and/or/xor/not; on bool the logical op.
struct BitwiseAnd {
  static constexpr std::string_view name = "bitwise_and";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x && y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return bit_and(x, y);
  }
};
struct BitwiseOr {
  static constexpr std::string_view name = "bitwise_or";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x || y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return bit_or(x, y);
  }
};
struct BitwiseXor {
  static constexpr std::string_view name = "bitwise_xor";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x != y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return bit_xor(x, y);
  }
};
struct BitwiseNot {
  static constexpr std::string_view name = "bitwise_not";
  static constexpr int arity = 1;
  template <class V>
  static V on_bool(V x) {
    return !x;
  }
  template <class V>
  static V on_int(V x) {
    return bit_not(x);
  }
};

// Comparisons in the compute dtype.
#define SPLICE_PW_COMPARISON(Name, text, op)       \
  struct Name {                                    \
    static constexpr std::string_view name = text; \
    static constexpr int arity = 2;                \
    static constexpr bool predicate = true;        \
    template <class V>                             \
    static auto on_any(V x, V y) {                 \
      return x op y;                               \
    }                                              \
  };
SPLICE_PW_COMPARISON(Eq, "eq", ==)
SPLICE_PW_COMPARISON(Ne, "ne", !=)
SPLICE_PW_COMPARISON(Lt, "lt", <)
SPLICE_PW_COMPARISON(Le, "le", <=)
SPLICE_PW_COMPARISON(Gt, "gt", >)
SPLICE_PW_COMPARISON(Ge, "ge", >=)
#undef SPLICE_PW_COMPARISON

// Logical ops; compute in bool (operands are != 0, NaN is true).
struct LogicalAnd {
  static constexpr std::string_view name = "logical_and";
  static constexpr int arity = 2;
  static constexpr bool predicate = true;
  template <class V>
  static V on_bool(V x, V y) {
    return x && y;
  }
};
struct LogicalOr {
  static constexpr std::string_view name = "logical_or";
  static constexpr int arity = 2;
  static constexpr bool predicate = true;
  template <class V>
  static V on_bool(V x, V y) {
    return x || y;
  }
};
struct LogicalXor {
  static constexpr std::string_view name = "logical_xor";
  static constexpr int arity = 2;
  static constexpr bool predicate = true;
  template <class V>
  static V on_bool(V x, V y) {
    return x != y;
  }
};
struct LogicalNot {
  static constexpr std::string_view name = "logical_not";
  static constexpr int arity = 1;
  static constexpr bool predicate = true;
  template <class V>
  static V on_bool(V x) {
    return !x;
  }
};

// Classification (integers and bool: false, false, true).
struct IsNan {
  static constexpr std::string_view name = "isnan";
  static constexpr int arity = 1;
  static constexpr bool predicate = true;
  template <class V>
  static bool on_bool(V) {
    return false;
  }
  template <class V>
  static bool on_int(V) {
    return false;
  }
  template <class V>
  static auto on_float(V x) {
    return isnan(x);
  }
};
struct IsInf {
  static constexpr std::string_view name = "isinf";
  static constexpr int arity = 1;
  static constexpr bool predicate = true;
  template <class V>
  static bool on_bool(V) {
    return false;
  }
  template <class V>
  static bool on_int(V) {
    return false;
  }
  template <class V>
  static auto on_float(V x) {
    return isinf(x);
  }
};
struct IsFinite {
  static constexpr std::string_view name = "isfinite";
  static constexpr int arity = 1;
  static constexpr bool predicate = true;
  template <class V>
  static bool on_bool(V) {
    return true;
  }
  template <class V>
  static bool on_int(V) {
    return true;
  }
  template <class V>
  static auto on_float(V x) {
    return isfinite(x);
  }
};

// clang-format off
#define SPLICE_PW_LOGICAL(X) \
  X(BitwiseAnd) \
  X(BitwiseOr) \
  X(BitwiseXor) \
  X(BitwiseNot) \
  X(Eq) \
  X(Ne) \
  X(Lt) \
  X(Le) \
  X(Gt) \
  X(Ge) \
  X(LogicalAnd) \
  X(LogicalOr) \
  X(LogicalXor) \
  X(LogicalNot) \
  X(IsNan) \
  X(IsInf) \
  X(IsFinite)
// clang-format on

}  // namespace splice::ir::pw
