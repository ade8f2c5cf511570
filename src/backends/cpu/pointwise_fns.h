#pragma once
// The pointwise functions (ir/ops/pointwise/) over arrays of the compute type, for the program
// interpreter (pointwise_program.cc): each formula instantiated with the native compute type,
// applied element by element in chunks the compiler vectorizes. Functions built on exp or erf
// take the vectorised loops of vec_math.h in float32 (libm's are scalar), as the op kernels do,
// so a value is the same bits whichever route computed it.

#include <cstdint>
#include <type_traits>

#include "backends/cpu/vec_math.h"
#include "ir/pointwise.h"

namespace splice::cpu::pointwise {

using ir::PointwiseFn;

// Elements of one tile: the most a function runs over at once.
inline constexpr int64_t kTileElements = 256;
// Functions run over `count` elements, a multiple of this: whole chunks, each a loop of
// constant trip count that the compiler vectorizes even at -O2 (GCC's cheap cost model
// vectorizes no loop that needs a remainder). A short tile (a [2, 8, 1] RMSNorm scale has 16
// elements) computes one chunk, not a whole tile; the interpreter ignores what lies past its
// element count.
inline constexpr int64_t kChunkElements = 32;
static_assert(kTileElements % kChunkElements == 0);

// The count a function runs over for n elements: n rounded up to whole chunks.
constexpr int64_t chunked_count(int64_t n) {
  return (n + kChunkElements - 1) / kChunkElements * kChunkElements;
}

// The vectorised float32 loop that computes `fn`, or null (vec_math.h; tested against the
// formulas in vec_math_test.cc).
using FloatArrayFn = void (*)(const float*, float*, int64_t);
constexpr FloatArrayFn vector_fn(PointwiseFn fn) {
  switch (fn) {
    case PointwiseFn::kExp:
      return exp_floats;
    case PointwiseFn::kSigmoid:
      return sigmoid_floats;
    case PointwiseFn::kSilu:
      return silu_floats;
    case PointwiseFn::kErf:
      return erf_floats;
    case PointwiseFn::kGelu:
      return gelu_floats;
    default:
      return nullptr;
  }
}

// Whether the interpreter computes function F in the native type T.
template <class F, class T>
constexpr bool interprets() {
  constexpr uint8_t cls = ir::pw::class_of<T>();
  constexpr uint8_t excluded = ir::pw::kernel_only_classes<F>() | ir::pw::device_only_classes<F>();
  return ir::pw::defines<F, cls>() && (excluded & cls) == 0 && !ir::pw::has_bool_condition<F>();
}

// Applies a function whose result is the compute type T over `count` elements (chunked_count):
// out[i] = fn(x[i], y[i], z[i], w[i]);
// `out` is never an operand (so the loops vectorize).
// Returns false for a function (or class) it does not implement.
template <typename T>
bool apply(PointwiseFn fn, int64_t count, const T* x, const T* y, const T* z, const T* w,
           T* __restrict out) {
  if constexpr (std::is_same_v<T, float>) {
    if (const FloatArrayFn vec = vector_fn(fn)) {
      vec(x, out, count);
      return true;
    }
  }
  return ir::pw::visit(fn, [&]<class F>(ir::pw::Fn<F>) {
    if constexpr (interprets<F, T>() && !ir::pw::is_predicate<F>()) {
      constexpr uint8_t cls = ir::pw::class_of<T>();
      for (int64_t c = 0; c < count; c += kChunkElements)
        for (int64_t i = c; i < c + kChunkElements; ++i) {
          if constexpr (F::arity == 1)
            out[i] = ir::pw::formula<F, cls>(x[i]);
          else if constexpr (F::arity == 2)
            out[i] = ir::pw::formula<F, cls>(x[i], y[i]);
          else if constexpr (F::arity == 3)
            out[i] = ir::pw::formula<F, cls>(x[i], y[i], z[i]);
          else
            out[i] = ir::pw::formula<F, cls>(x[i], y[i], z[i], w[i]);
        }
      return true;
    } else {
      return false;
    }
  });
}

// where(cond, y, z) in the compute type T.
template <typename T>
void apply_where(int64_t count, const bool* c, const T* y, const T* z, T* __restrict out) {
  for (int64_t k = 0; k < count; k += kChunkElements)
    for (int64_t i = k; i < k + kChunkElements; ++i)
      out[i] = ir::pw::Where::on_any(c[i], y[i], z[i]);
}

// A function whose result is bool (comparisons, logical ops, classification), computed in T.
template <typename T>
bool apply_predicate(PointwiseFn fn, int64_t count, const T* x, const T* y, bool* __restrict out) {
  return ir::pw::visit(fn, [&]<class F>(ir::pw::Fn<F>) {
    if constexpr (interprets<F, T>() && ir::pw::is_predicate<F>()) {
      constexpr uint8_t cls = ir::pw::class_of<T>();
      for (int64_t c = 0; c < count; c += kChunkElements)
        for (int64_t i = c; i < c + kChunkElements; ++i) {
          if constexpr (F::arity == 1)
            out[i] = ir::pw::formula<F, cls>(x[i]);
          else
            out[i] = ir::pw::formula<F, cls>(x[i], y[i]);
        }
      return true;
    } else {
      return false;
    }
  });
}

}  // namespace splice::cpu::pointwise
