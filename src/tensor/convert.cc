// Host tensor conversion (convert_if_needed, convert, copy_cast_into) built on cast_value, which
// carries the c10 element conversion rules.
#include "tensor/convert.h"

#include <cstring>

#include "tensor/strided_walk.h"

namespace splice {

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

Result<Tensor> convert(const Tensor& src, DType dtype) {
  SPLICE_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(dtype, src.sizes()));
  if (dtype == src.dtype() && src.is_contiguous()) {
    if (src.numel() > 0) std::memcpy(out.raw_data(), src.raw_data(), src.nbytes());
    return out;
  }
  copy_cast_into(out, src);
  return out;
}

Result<Tensor> convert_if_needed(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  return convert(t, dtype);
}

}  // namespace splice
