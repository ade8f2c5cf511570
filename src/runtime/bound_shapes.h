#pragma once
// Shapes under one binding of a program's symbols. A value whose every dim is a constant has
// its StaticShape from load; a dynamic-shape value's sizes depend on the symbols its call's
// inputs bind (s0 = the sequence length). BoundShapes keeps, for one session, what those
// evaluate to under the binding of its last call, so a call with the same input sizes as the
// previous one evaluates no size expression: the issue-17 rule that checks happen once per new
// symbol binding, not once per call.
//
// Only the binding a call starts with is kept. A symbol bound later in the call (a
// data-dependent one, from .item()) may differ from call to call under the same input sizes,
// so a value whose sizes use one is never cached here: the caller evaluates it every call.

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/sym.h"
#include "tensor/tensor.h"

namespace splice::detail {

// A value's sizes, contiguous strides and bytes once they are known numbers.
struct StaticShape {
  Shape sizes;
  Shape strides;
  int64_t nbytes = 0;
};

// The StaticShape of a tensor of `dtype` and `sizes` under `symbols` (nullptr: constants
// only), or nullopt when a size uses a symbol not bound there or the sizes are not a valid
// shape (negative, or too many elements; the caller's own evaluation reports those).
std::optional<StaticShape> shape_under(DType dtype, std::span<const SymExpr> sizes,
                                       const SymBindings* symbols);

class BoundShapes {
 public:
  // Starts a call whose symbols are `symbols` as its inputs bound them: what was evaluated
  // under the same binding stays, anything else is forgotten. `slots`, `buffers` and `groups`
  // count the model's values, planned buffers and pointwise groups.
  void begin_call(const SymBindings& symbols, size_t slots, size_t buffers, size_t groups);

  // Slot `slot`'s shape (a tensor of `type`) under the call's binding, or nullptr when its
  // sizes use a symbol bound later in the call.
  const StaticShape* value(int32_t slot, const ir::TensorType& type);
  // Planned buffer b's byte count under the call's binding, or nullopt as above.
  std::optional<int64_t> buffer_bytes(int b, const SymExpr& bytes);
  // Pointwise group g's iteration space under the call's binding, or nullptr as above.
  const Shape* group_sizes(int g, std::span<const SymExpr> sizes);

 private:
  // One memo per kind: not evaluated yet under this binding, evaluated, or depends on a
  // symbol the binding lacks (evaluated by the caller every call).
  enum class State : uint8_t { kUnknown, kKnown, kLate };
  template <typename T>
  struct Memo {
    std::vector<State> state;
    std::vector<T> known;
    void reset(size_t n) {
      state.assign(n, State::kUnknown);
      known.resize(n);
    }
    // Entry i, from evaluate() (a std::optional<T>, empty when late) the first time it is
    // asked under this binding; nullptr when it is late.
    template <typename Evaluate>
    const T* get(size_t i, Evaluate&& evaluate) {
      if (state[i] == State::kUnknown) {
        auto v = evaluate();
        state[i] = v ? State::kKnown : State::kLate;
        if (v) known[i] = std::move(*v);
      }
      return state[i] == State::kKnown ? &known[i] : nullptr;
    }
  };

  bool started_ = false;
  SymBindings symbols_;
  Memo<StaticShape> values_;
  Memo<int64_t> buffers_;
  Memo<Shape> groups_;
};

}  // namespace splice::detail
