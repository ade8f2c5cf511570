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
  return values_.get(static_cast<size_t>(slot),
                     [&] { return shape_under(type.dtype, type.sizes, &symbols_); });
}

std::optional<int64_t> BoundShapes::buffer_bytes(int b, const SymExpr& bytes) {
  const int64_t* n = buffers_.get(static_cast<size_t>(b), [&]() -> std::optional<int64_t> {
    auto r = bytes.evaluate(symbols_);
    if (!r.ok()) return std::nullopt;
    return *r;
  });
  if (n == nullptr) return std::nullopt;
  return *n;
}

const Shape* BoundShapes::group_sizes(int g, std::span<const SymExpr> sizes) {
  return groups_.get(static_cast<size_t>(g), [&]() -> std::optional<Shape> {
    // The element type does not matter here: only the sizes are kept.
    auto s = shape_under(DType::kUInt8, sizes, &symbols_);
    if (!s) return std::nullopt;
    return std::move(s->sizes);
  });
}

}  // namespace splice::detail
