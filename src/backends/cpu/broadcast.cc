// The broadcasting helpers of iter.h: numpy broadcasting of shapes and strides.
#include <algorithm>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"

namespace splice::cpu {

Result<Shape> broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t sa = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t sb = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    KCHECK(sa == sb || sa == 1 || sb == 1, ErrorKind::kShapeMismatch,
           "shapes {} and {} do not broadcast (dim {}: {} vs {})", shape_string(a), shape_string(b),
           i, sa, sb);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  const size_t rank = shape.size();
  const size_t lead = rank - t.sizes().size();
  Shape strides(rank, 0);
  for (size_t i = lead; i < rank; ++i) {
    const int64_t s = t.sizes()[i - lead];
    strides[i] = (s == 1 && shape[i] != 1) ? 0 : t.strides()[i - lead];
  }
  return strides;
}

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  return t.view_as(shape, broadcast_strides(t, shape), t.offset());
}

}  // namespace splice::cpu
