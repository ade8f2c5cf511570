#pragma once
// Pointwise functions, selection family: minimum/maximum, the clamps, where and nan_to_num,
// with the generic helpers other families share (std::min/std::max and a plain clamp written
// over any value type). See functions.h for how a function is written.

#include <string_view>

#include "ir/ops/pointwise/compute_class.h"
#include "ir/ops/pointwise/primitives.h"

namespace splice::ir::pw {

// std::max / std::min (a NaN first argument stays).
template <class V>
V std_max(V a, V b) {
  return select(a < b, b, a);
}
template <class V>
V std_min(V a, V b) {
  return select(b < a, b, a);
}
// min(max(x, lo), hi) without a NaN rule (hi wins when lo > hi).
template <class V>
V clamp_plain(V x, V lo, V hi) {
  return std_min(select(x < lo, lo, x), hi);
}

// minimum/maximum with NaN propagation from either side (bool: and/or).
struct Minimum {
  static constexpr std::string_view name = "minimum";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x && y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return select(y < x, y, x);
  }
  template <class V>
  static V on_float(V x, V y) {
    return select(isnan(x) || isnan(y), quiet_nan(x), select(y < x, y, x));
  }
};
struct Maximum {
  static constexpr std::string_view name = "maximum";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x || y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return select(x < y, y, x);
  }
  template <class V>
  static V on_float(V x, V y) {
    return select(isnan(x) || isnan(y), quiet_nan(x), select(x < y, y, x));
  }
};

// clamp(x, lo=y, hi=z): NaN when either bound is NaN, else min(max(x, lo), hi) (hi wins when
// lo > hi; a NaN x stays NaN).
struct Clamp {
  static constexpr std::string_view name = "clamp";
  static constexpr int arity = 3;
  template <class V>
  static V on_int(V x, V y, V z) {
    return clamp_plain(x, y, z);
  }
  template <class V>
  static V on_float(V x, V y, V z) {
    return select(isnan(y) || isnan(z), quiet_nan(x), clamp_plain(x, y, z));
  }
};
// x < y ? y : x (a NaN bound leaves x).
struct ClampMin {
  static constexpr std::string_view name = "clamp_min";
  static constexpr int arity = 2;
  template <class V>
  static V on_int(V x, V y) {
    return select(x < y, y, x);
  }
  template <class V>
  static V on_float(V x, V y) {
    return select(x < y, y, x);
  }
};
// y < x ? y : x.
struct ClampMax {
  static constexpr std::string_view name = "clamp_max";
  static constexpr int arity = 2;
  template <class V>
  static V on_int(V x, V y) {
    return select(y < x, y, x);
  }
  template <class V>
  static V on_float(V x, V y) {
    return select(y < x, y, x);
  }
};
// hardtanh(x, lo=y, hi=z): clamp without the NaN-bound rule.
struct Hardtanh {
  static constexpr std::string_view name = "hardtanh";
  static constexpr int arity = 3;
  template <class V>
  static V on_int(V x, V y, V z) {
    return clamp_plain(x, y, z);
  }
  template <class V>
  static V on_float(V x, V y, V z) {
    return clamp_plain(x, y, z);
  }
};

// where(cond=x, y, z): y where x is true, else z. x is converted to bool, y and z to the
// compute dtype (bool_condition: the backends convert operand 0 to bool).
struct Where {
  static constexpr std::string_view name = "where";
  static constexpr int arity = 3;
  static constexpr bool bool_condition = true;
  template <class C, class V>
  static V on_any(C c, V y, V z) {
    return select(c, y, z);
  }
};

// nan_to_num(x, nan=y, posinf=z, neginf=w).
struct NanToNum {
  static constexpr std::string_view name = "nan_to_num";
  static constexpr int arity = 4;
  template <class V>
  static V on_float(V x, V y, V z, V w) {
    return select(isnan(x), y, select(isinf(x), select(x > V(0), z, w), x));
  }
};

// clang-format off
#define SPLICE_PW_SELECTION(X) \
  X(Minimum) \
  X(Maximum) \
  X(Clamp) \
  X(ClampMin) \
  X(ClampMax) \
  X(Hardtanh) \
  X(Where) \
  X(NanToNum)
// clang-format on

}  // namespace splice::ir::pw
