#pragma once
// Pointwise functions, activation family: sigmoid and logit, the SiLU/GELU/Mish family, the
// hard activations, relu and the parameterised ones (leaky_relu, elu, softplus), parameters
// given as operands. See functions.h for how a function is written.

#include <cmath>
#include <string_view>

#include "ir/ops/pointwise/compute_class.h"
#include "ir/ops/pointwise/primitives.h"
#include "ir/ops/pointwise/selection.h"

namespace splice::ir::pw {

// 1 / (1 + exp(-x)).
struct Sigmoid {
  static constexpr std::string_view name = "sigmoid";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return V(1) / (V(1) + exp(-x));
  }
};

// log(x / (1 - x)) after clamping x to [y, 1 - y] when eps y >= 0.
struct Logit {
  static constexpr std::string_view name = "logit";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    const V hi = V(1) - y;
    const V v = select(y >= V(0), select(x < y, y, select(x > hi, hi, x)), x);
    return log(v / (V(1) - v));
  }
};

// x / (1 + exp(-x)).
struct Silu {
  static constexpr std::string_view name = "silu";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return x / (V(1) + exp(-x));
  }
};

// x * 0.5 * (1 + erf(x * M_SQRT1_2)).
struct Gelu {
  static constexpr std::string_view name = "gelu";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return x * V(0.5) * (V(1) + erf(x * V(M_SQRT1_2)));
  }
};

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
struct GeluTanh {
  static constexpr std::string_view name = "gelu_tanh";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    const V beta = V(M_SQRT2 * M_2_SQRTPI * 0.5);
    const V kappa = V(0.044715);
    return V(0.5) * x * (V(1) + tanh(beta * (x + kappa * (x * x * x))));
  }
};

// x * tanh(log1p(exp(x))).
struct Mish {
  static constexpr std::string_view name = "mish";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return x * tanh(log1p(exp(x)));
  }
};

// min(max(x + 3, 0), 6) / 6.
struct Hardsigmoid {
  static constexpr std::string_view name = "hardsigmoid";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return std_min(std_max(x + V(3), V(0)), V(6)) / V(6);
  }
};

// x * min(max(x + 3, 0), 6) / 6.
struct Hardswish {
  static constexpr std::string_view name = "hardswish";
  static constexpr int arity = 1;
  template <class V>
  static V on_float(V x) {
    return x * std_min(std_max(x + V(3), V(0)), V(6)) / V(6);
  }
};

// x > 0 ? x : 0 (NaN stays).
struct Relu {
  static constexpr std::string_view name = "relu";
  static constexpr int arity = 1;
  template <class V>
  static V on_int(V x) {
    return select(x > V(0), x, V(0));
  }
  template <class V>
  static V on_float(V x) {
    return select(x > V(0) || x != x, x, V(0));
  }
};

// x > 0 ? x : x * y (y: negative_slope).
struct LeakyRelu {
  static constexpr std::string_view name = "leaky_relu";
  static constexpr int arity = 2;
  template <class V>
  static V on_float(V x, V y) {
    return select(x > V(0), x, x * y);
  }
};

// x <= 0 ? expm1(x * w) * (y * z) : x * z (y: alpha, z: scale, w: input_scale).
struct Elu {
  static constexpr std::string_view name = "elu";
  static constexpr int arity = 4;
  template <class V>
  static V on_float(V x, V y, V z, V w) {
    return select(x <= V(0), expm1(x * w) * (y * z), x * z);
  }
};

// x * y > z ? x : log1p(exp(x * y)) / y (y: beta, z: threshold).
struct Softplus {
  static constexpr std::string_view name = "softplus";
  static constexpr int arity = 3;
  template <class V>
  static V on_float(V x, V y, V z) {
    return select(x * y > z, x, log1p(exp(x * y)) / y);
  }
};

// clang-format off
#define SPLICE_PW_ACTIVATION(X) \
  X(Sigmoid) \
  X(Logit) \
  X(Silu) \
  X(Gelu) \
  X(GeluTanh) \
  X(Mish) \
  X(Hardsigmoid) \
  X(Hardswish) \
  X(Relu) \
  X(LeakyRelu) \
  X(Elu) \
  X(Softplus)
// clang-format on

}  // namespace splice::ir::pw
