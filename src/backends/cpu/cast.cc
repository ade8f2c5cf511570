// Tensor-level dtype conversion (to_dtype, cast_copy, copy_cast_into) built on cast_value,
// which carries the c10 element conversion rules; plus the broadcasting helpers of iter.h.
#include "backends/cpu/cast.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"

namespace splice::cpu {

void copy_cast_into(const Tensor& dst, const Tensor& src) {
  const std::array<const int64_t*, 2> strides = {dst.strides().data(), src.strides().data()};
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using D = typename decltype(dst_tag)::type;
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using S = typename decltype(src_tag)::type;
      D* out = dst.data<D>();
      const S* in = src.data<S>();
      for_each_offset<2>(dst.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        out[o[0]] = cast_value<D>(in[o[1]]);
      });
    });
  });
}

Tensor cast_copy(const Tensor& src, DType dtype) {
  Tensor out = Tensor::empty(dtype, src.sizes());
  if (dtype == src.dtype() && src.is_contiguous()) {
    if (src.numel() > 0) std::memcpy(out.raw_data(), src.raw_data(), src.nbytes());
    return out;
  }
  copy_cast_into(out, src);
  return out;
}

Tensor to_dtype(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  return cast_copy(t, dtype);
}

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
