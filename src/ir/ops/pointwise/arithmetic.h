#pragma once
// Pointwise functions, arithmetic family: copy, the four operations, the divisions, pow,
// atan2, neg/abs/sign/square/reciprocal and the fused ternaries (add with alpha, addcmul,
// addcdiv, lerp). How a function is written is described in functions.h; x, y, z, w are the
// operands in order, already converted to the compute dtype.

#include <string_view>

#include "ir/ops/pointwise/compute_class.h"
#include "ir/ops/pointwise/primitives.h"

namespace splice::ir::pw {

// x converted to the result dtype (copy, cast, fill from a constant).
struct Copy {
  static constexpr std::string_view name = "copy";
  static constexpr int arity = 1;
  template <class V>
  static V on_any(V x) {
    return x;
  }
};

// x + y (bool: x || y).
struct Add {
  static constexpr std::string_view name = "add";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x || y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return wrap_add(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return x + y;
  }
};

// x + z * y: add/sub with alpha z (bool: x || (z && y)).
struct AddScaled {
  static constexpr std::string_view name = "add_scaled";
  static constexpr int arity = 3;
  template <class V>
  static V on_bool(V x, V y, V z) {
    return x || (z && y);
  }
  template <class V>
  static V on_int(V x, V y, V z) {
    return wrap_add(x, wrap_mul(z, y));
  }
  template <class V>
  static V on_float(V x, V y, V z) {
    return x + z * y;
  }
};

// x - y.
struct Sub {
  static constexpr std::string_view name = "sub";
  static constexpr int arity = 2;
  template <class V>
  static V on_int(V x, V y) {
    return wrap_sub(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return x - y;
  }
};

// x * y (bool: x && y).
struct Mul {
  static constexpr std::string_view name = "mul";
  static constexpr int arity = 2;
  template <class V>
  static V on_bool(V x, V y) {
    return x && y;
  }
  template <class V>
  static V on_int(V x, V y) {
    return wrap_mul(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return x * y;
  }
};

// x / y.
struct Div {
  static constexpr std::string_view name = "div";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    return x / y;
  }
};

// trunc(x / y); int: C division, y == 0 records a ZeroDivisionError, x / -1 wraps.
struct DivTrunc {
  static constexpr std::string_view name = "div_trunc";
  static constexpr int arity = 2;
  static constexpr uint8_t kernel_only = kComputeInt;
  template <class V>
  static V on_int(V x, V y) {
    return checked_div_trunc(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return trunc(x / y);
  }
};

// floor(x / y) (PyTorch's div_floor: for floats computed from fmod so that x == div*y + mod);
// int: y == 0 records a ZeroDivisionError.
struct DivFloor {
  static constexpr std::string_view name = "div_floor";
  static constexpr int arity = 2;
  static constexpr uint8_t kernel_only = kComputeInt;
  template <class V>
  static V on_int(V x, V y) {
    return checked_div_floor(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return div_floor_float(x, y);
  }
};

// Python's x % y (the sign of y); int: y == 0 records a ZeroDivisionError.
struct Remainder {
  static constexpr std::string_view name = "remainder";
  static constexpr int arity = 2;
  static constexpr uint8_t kernel_only = kComputeInt;
  template <class V>
  static V on_int(V x, V y) {
    return checked_remainder(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    const V r = fmod(x, y);
    return select(r != V(0) && ((y < V(0)) != (r < V(0))), r + y, r);
  }
};

// C's fmod (the sign of x); int: y == 0 records a ZeroDivisionError.
struct Fmod {
  static constexpr std::string_view name = "fmod";
  static constexpr int arity = 2;
  static constexpr uint8_t kernel_only = kComputeInt;
  template <class V>
  static V on_int(V x, V y) {
    return checked_fmod(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return fmod(x, y);
  }
};

// x ** y; int: by squaring with wraparound (PyTorch's powi).
struct Pow {
  static constexpr std::string_view name = "pow";
  static constexpr int arity = 2;
  template <class V>
  static V on_int(V x, V y) {
    return int_pow(x, y);
  }
  template <class V>
  static V on_float(V x, V y) {
    return pow(x, y);
  }
};

// atan2(x, y).
struct Atan2 {
  static constexpr std::string_view name = "atan2";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    return atan2(x, y);
  }
};

// -x (int wraps: INT_MIN stays).
struct Neg {
  static constexpr std::string_view name = "neg";
  static constexpr int arity = 1;
  template <class V>
  static V on_int(V x) {
    return wrap_neg(x);
  }
  template <class V>
  static V on_float(V x) {
    return -x;
  }
};

// |x| (int wraps, unsigned unchanged; bool unchanged).
struct Abs {
  static constexpr std::string_view name = "abs";
  static constexpr int arity = 1;
  template <class V>
  static V on_bool(V x) {
    return x;
  }
  template <class V>
  static V on_int(V x) {
    return wrap_abs(x);
  }
  template <class V>
  static V on_float(V x) {
    return fabs(x);
  }
};

// (0 < x) - (x < 0): NaN and -0.0 give +0; bool unchanged.
struct Sign {
  static constexpr std::string_view name = "sign";
  static constexpr int arity = 1;
  template <class V>
  static V on_bool(V x) {
    return x;
  }
  template <class V>
  static V on_int(V x) {
    return V(select(V(0) < x, V(1), V(0)) - select(x < V(0), V(1), V(0)));
  }
  template <class V>
  static V on_float(V x) {
    return select(V(0) < x, V(1), V(0)) - select(x < V(0), V(1), V(0));
  }
};

// x * x (int wraps).
struct Square {
  static constexpr std::string_view name = "square";
  static constexpr int arity = 1;
  template <class V>
  static V on_int(V x) {
    return wrap_mul(x, x);
  }
  template <class V>
  static V on_float(V x) {
    return x * x;
  }
};

// 1 / x.
struct Reciprocal {
  static constexpr std::string_view name = "reciprocal";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return V(1) / x;
  }
};

// addcmul(self=x, t1=y, t2=z, value=w): x + w * y * z.
struct Addcmul {
  static constexpr std::string_view name = "addcmul";
  static constexpr int arity = 4;
  template <class V>
  static V on_int(V x, V y, V z, V w) {
    return wrap_add(x, wrap_mul(wrap_mul(w, y), z));
  }
  template <class V>
  static V on_float(V x, V y, V z, V w) {
    return x + w * y * z;
  }
};

// addcdiv(self=x, t1=y, t2=z, value=w): x + w * y / z.
struct Addcdiv {
  static constexpr std::string_view name = "addcdiv";
  static constexpr int arity = 4;
  template <class V>
  static V on_float(V x, V y, V z, V w) {
    return x + w * y / z;
  }
};

// lerp(start=x, end=y, weight=z): |z| < 0.5 ? x + z * (y - x) : y - (y - x) * (1 - z).
struct Lerp {
  static constexpr std::string_view name = "lerp";
  static constexpr int arity = 3;
  template <class V>
  static V on_float(V x, V y, V z) {
    return select(fabs(z) < V(0.5), x + z * (y - x), y - (y - x) * (V(1) - z));
  }
};

// clang-format off
#define SPLICE_PW_ARITHMETIC(X) \
  X(Copy) \
  X(Add) \
  X(AddScaled) \
  X(Sub) \
  X(Mul) \
  X(Div) \
  X(DivTrunc) \
  X(DivFloor) \
  X(Remainder) \
  X(Fmod) \
  X(Pow) \
  X(Atan2) \
  X(Neg) \
  X(Abs) \
  X(Sign) \
  X(Square) \
  X(Reciprocal) \
  X(Addcmul) \
  X(Addcdiv) \
  X(Lerp)
// clang-format on

}  // namespace splice::ir::pw
