#include "runtime/bound_shapes.h"

namespace splice::detail {

std::optional<StaticShape> shape_under(DType dtype, std::span<const SymExpr> sizes,
                                       const SymBindings* symbols) {
  StaticShape s;
  for (const SymExpr& d : sizes) {
    std::optional<int64_t> n = d.constant();
    if (!n && symbols != nullptr) {
      auto r = d.evaluate(*symbols);
      if (r.ok()) n = *r;
    }
    if (!n || *n < 0) return std::nullopt;
    s.sizes.push_back(*n);
  }
  auto numel = checked_numel(s.sizes);
  if (!numel) return std::nullopt;
  s.strides = contiguous_strides(s.sizes);
  s.nbytes = *numel * static_cast<int64_t>(dtype_size(dtype));
  return s;
}

void BoundShapes::begin_call(const SymBindings& symbols, size_t slots, size_t buffers,
                             size_t groups) {
  if (started_ && symbols == symbols_ && values_.state.size() == slots) return;
  started_ = true;
  symbols_ = symbols;
  values_.reset(slots);
  buffers_.reset(buffers);
  groups_.reset(groups);
}

const StaticShape* BoundShapes::value(int32_t slot, const ir::TensorType& type) {
  const auto i = static_cast<size_t>(slot);
  if (values_.state[i] == State::kUnknown) {
    auto s = shape_under(type.dtype, type.sizes, &symbols_);
    values_.state[i] = s ? State::kKnown : State::kLate;
    if (s) values_.known[i] = std::move(*s);
  }
  return values_.state[i] == State::kKnown ? &values_.known[i] : nullptr;
}

std::optional<int64_t> BoundShapes::buffer_bytes(int b, const SymExpr& bytes) {
  const auto i = static_cast<size_t>(b);
  if (buffers_.state[i] == State::kUnknown) {
    auto n = bytes.evaluate(symbols_);
    buffers_.state[i] = n.ok() ? State::kKnown : State::kLate;
    if (n.ok()) buffers_.known[i] = *n;
  }
  if (buffers_.state[i] != State::kKnown) return std::nullopt;
  return buffers_.known[i];
}

const Shape* BoundShapes::group_sizes(int g, std::span<const SymExpr> sizes) {
  const auto i = static_cast<size_t>(g);
  if (groups_.state[i] == State::kUnknown) {
    // The element type does not matter here: only the sizes are kept.
    auto s = shape_under(DType::kUInt8, sizes, &symbols_);
    groups_.state[i] = s ? State::kKnown : State::kLate;
    if (s) groups_.known[i] = std::move(s->sizes);
  }
  return groups_.state[i] == State::kKnown ? &groups_.known[i] : nullptr;
}

}  // namespace splice::detail
