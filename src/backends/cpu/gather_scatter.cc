// Index ops along one dim: index_select, gather, embedding, scatter (src and value forms) and
// index_add. Unlike index.Tensor, these ops do not wrap negative indices: PyTorch raises for
// any index outside [0, size), and so do we (kOutOfRange naming the op, dim, size and index),
// checking every index before touching memory. scatter is functional (a new copy of self);
// duplicate indices follow PyTorch CPU's serial order: scatter's last write wins, index_add
// accumulates in index order, rounding to the dtype after each addition (self is stored in
// its dtype), with a + alpha * b computed in the dtype's opmath. A 0-d tensor counts as 1-D
// of size 1 for dims and shapes, as PyTorch's ensure_nonempty_dim does.
#include <algorithm>
#include <cstring>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

// t viewed as 1-D of size 1 when 0-d (a view, no copy).
Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.view_as({1}, {1}, t.offset()) : t; }

// The index values as a contiguous int64 tensor, each checked to lie in [0, size).
Result<Tensor> checked_index(std::string_view op, const Tensor& index, int64_t dim, int64_t size,
                             bool allow_int32) {
  KCHECK(index.dtype() == DType::kInt64 || (allow_int32 && index.dtype() == DType::kInt32),
         ErrorKind::kBadInput, "expected an {} index, got {}",
         allow_int32 ? "int64 or int32" : "int64", dtype_name(index.dtype()));
  Tensor idx = cast_copy(index, DType::kInt64);
  const int64_t* p = idx.data<int64_t>();
  for (int64_t i = 0, n = idx.numel(); i < n; ++i) {
    KCHECK(p[i] >= 0 && p[i] < size, ErrorKind::kOutOfRange,
           "index {} is out of range for dim {} of size {}", p[i], dim, size);
  }
  return idx;
}

// Copies one element of dtype_size bytes; the index ops move elements without converting.
inline void copy_element(std::byte* dst, const std::byte* src, size_t esize) {
  std::memcpy(dst, src, esize);
}

// Fills the contiguous `out` with self's slices at dim picked by idx (out's slice i is self's
// slice idx[i]): the shared core of index_select and embedding.
void take_along(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& idx) {
  const Tensor s = at_least_1d(self);
  Shape in_shape = s.sizes();
  in_shape[dim] = idx.numel();
  const Tensor o = out.view_as(in_shape, contiguous_strides(in_shape), 0);
  if (dim == 0 && s.is_contiguous()) {
    // Each slice is one block of memory in self and in out (an embedding's rows): a copy of
    // bytes per index, not a strided walk of every element.
    const size_t block =
        static_cast<size_t>(o.numel() / std::max<int64_t>(idx.numel(), 1)) * dtype_size(s.dtype());
    const int64_t* pi = idx.data<int64_t>();
    const std::byte* src = s.raw_data();
    std::byte* dst = o.raw_data();
    for (int64_t i = 0; i < idx.numel(); ++i)
      std::memcpy(dst + static_cast<size_t>(i) * block, src + static_cast<size_t>(pi[i]) * block,
                  block);
    return;
  }
  Shape row_sizes = in_shape, src_strides = s.strides(), dst_strides = o.strides();
  row_sizes.erase(row_sizes.begin() + dim);
  src_strides.erase(src_strides.begin() + dim);
  dst_strides.erase(dst_strides.begin() + dim);
  const int64_t* pi = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const Tensor dst = o.view_as(row_sizes, dst_strides, i * o.stride(dim));
    const Tensor row = s.view_as(row_sizes, src_strides, s.offset() + pi[i] * s.stride(dim));
    copy_cast_into(dst, row);
  }
}

Result<Outputs> index_select(std::string_view op, std::span<const KernelArg> args) {
  // index_select(self, int dim, Tensor index)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  KCHECK(index.dim() <= 1, ErrorKind::kShapeMismatch, "index must be 0-d or 1-D, got shape {}",
         shape_string(index.sizes()));
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  SPLICE_ASSIGN_OR_RETURN(Tensor idx, checked_index(op, index, dim, size, true));
  Shape out_shape = self.sizes();
  if (self.dim() > 0) {
    out_shape[dim] = idx.numel();
  } else {
    KCHECK(idx.numel() == 1, ErrorKind::kShapeMismatch,
           "a 0-d self takes exactly one index, got {}", idx.numel());
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), out_shape));
  take_along(out, self, dim, idx);
  return Outputs{out};
}

Result<Outputs> embedding(std::string_view op, std::span<const KernelArg> args) {
  // embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False); the
  // last three only matter for the gradient.
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor weight, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor indices, a.tensor(1));
  KCHECK(weight.dim() == 2, ErrorKind::kShapeMismatch, "weight must be 2-D, got shape {}",
         shape_string(weight.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor idx, checked_index(op, indices, 0, weight.size(0), true));
  Shape out_shape = indices.sizes();
  out_shape.push_back(weight.size(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, weight.dtype(), out_shape));
  take_along(out, weight, 0, idx);
  return Outputs{out};
}

// Shared shape checks of gather and scatter: index has self's rank (0-d counting as 1-D) and
// fits self on every dim but `dim` (and fits src on every dim when given).
Result<void> check_gather_scatter_shapes(std::string_view op, const Tensor& self, int64_t dim,
                                         const Tensor& index, const Tensor* src) {
  const Tensor s = at_least_1d(self), ix = at_least_1d(index);
  KCHECK(ix.dim() == s.dim(), ErrorKind::kShapeMismatch,
         "index of shape {} must have the same number of dims as self {}",
         shape_string(index.sizes()), shape_string(self.sizes()));
  const Tensor sr = src ? at_least_1d(*src) : s;
  KCHECK(sr.dim() == s.dim(), ErrorKind::kShapeMismatch,
         "src of shape {} must have the same number of dims as self {}",
         shape_string(src ? src->sizes() : self.sizes()), shape_string(self.sizes()));
  for (int64_t d = 0; d < s.dim(); ++d) {
    KCHECK(d == dim || ix.size(d) <= s.size(d), ErrorKind::kShapeMismatch,
           "index {} is larger than self {} at dim {}", shape_string(index.sizes()),
           shape_string(self.sizes()), d);
    KCHECK(!src || ix.size(d) <= sr.size(d), ErrorKind::kShapeMismatch,
           "index {} is larger than src {} at dim {}", shape_string(index.sizes()),
           shape_string(src->sizes()), d);
  }
  return ok_result();
}

Result<Outputs> gather(std::string_view op, std::span<const KernelArg> args) {
  // gather(self, int dim, Tensor index, *, bool sparse_grad=False): out[c] = self[c with dim
  // replaced by index[c]]; out has index's shape.
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  SPLICE_TRY(check_gather_scatter_shapes(op, self, dim, index, nullptr));
  const Tensor s = at_least_1d(self);
  SPLICE_ASSIGN_OR_RETURN(Tensor idx, checked_index(op, index, dim, s.size(dim), false));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), index.sizes()));
  const int64_t* pi = idx.data<int64_t>();
  const size_t esize = dtype_size(self.dtype());
  const std::byte* ps = s.raw_data();
  std::byte* po = out.raw_data();
  int64_t lin = 0;
  for_each_coord(at_least_1d(idx).sizes(), [&](const Shape& c) {
    int64_t off = 0;
    for (int64_t d = 0; d < s.dim(); ++d) off += (d == dim ? pi[lin] : c[d]) * s.stride(d);
    copy_element(po + lin * esize, ps + off * esize, esize);
    ++lin;
  });
  return Outputs{out};
}

// out = copy of self; out[c with dim replaced by index[c]] = value(c) for each c of index, in
// row-major order (the last duplicate wins).
Result<Outputs> scatter_impl(std::string_view op, const Tensor& self, int64_t dim,
                             const Tensor& index, const Tensor& src) {
  const Tensor o0 = contiguous_copy(self);
  const Tensor o = at_least_1d(o0);
  SPLICE_ASSIGN_OR_RETURN(Tensor idx, checked_index(op, index, dim, o.size(dim), false));
  // src is self-shaped-or-larger (scatter.src) or a broadcast 0-d value (scatter.value).
  const Tensor sr = at_least_1d(src);
  const int64_t* pi = idx.data<int64_t>();
  const size_t esize = dtype_size(self.dtype());
  const std::byte* ps = sr.raw_data();
  std::byte* po = o.raw_data();
  int64_t lin = 0;
  for_each_coord(at_least_1d(idx).sizes(), [&](const Shape& c) {
    int64_t off = 0, soff = 0;
    for (int64_t d = 0; d < o.dim(); ++d) {
      off += (d == dim ? pi[lin] : c[d]) * o.stride(d);
      soff += c[d] * sr.stride(d);
    }
    copy_element(po + off * esize, ps + soff * esize, esize);
    ++lin;
  });
  return Outputs{o0};
}

Result<Outputs> scatter_src(std::string_view op, std::span<const KernelArg> args) {
  // scatter.src(self, int dim, Tensor index, Tensor src)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor src, a.tensor(3));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  KCHECK(src.dtype() == self.dtype(), ErrorKind::kShapeMismatch,
         "src dtype {} must equal self's dtype {}", dtype_name(src.dtype()),
         dtype_name(self.dtype()));
  SPLICE_TRY(check_gather_scatter_shapes(op, self, dim, index, &src));
  return scatter_impl(op, self, dim, index, src);
}

Result<Outputs> scatter_value(std::string_view op, std::span<const KernelArg> args) {
  // scatter.value(self, int dim, Tensor index, Scalar value)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar(3));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  SPLICE_TRY(check_gather_scatter_shapes(op, self, dim, index, nullptr));
  // The value as a tensor of index's rank with all strides 0.
  const Tensor v = scalar_to_tensor(value, self.dtype());
  const Tensor ix = at_least_1d(index);
  const Tensor src = v.view_as(ix.sizes(), Shape(ix.dim(), 0), 0);
  return scatter_impl(op, self, dim, index, src);
}

Result<Outputs> index_add(std::string_view op, std::span<const KernelArg> args) {
  // index_add(self, int dim, Tensor index, Tensor source, *, Scalar alpha=1):
  // out.select(dim, index[i]) += alpha * source.select(dim, i).
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor source, a.tensor(3));
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(4, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  KCHECK(index.dim() <= 1, ErrorKind::kShapeMismatch, "index must be 0-d or 1-D, got shape {}",
         shape_string(index.sizes()));
  KCHECK(source.dtype() == self.dtype(), ErrorKind::kShapeMismatch,
         "source dtype {} must equal self's dtype {}", dtype_name(source.dtype()),
         dtype_name(self.dtype()));
  KCHECK(is_floating(self.dtype()) || !alpha.is_double(), ErrorKind::kBadInput,
         "for integral input tensors, alpha must not be a floating point number");
  const Tensor out0 = contiguous_copy(self);
  const Tensor o = at_least_1d(out0), src = at_least_1d(source);
  Shape expected = o.sizes();
  expected[dim] = index.numel();
  KCHECK(src.sizes() == expected, ErrorKind::kShapeMismatch,
         "source of shape {} does not match the expected shape {} (self {}, {} indices on dim "
         "{})",
         shape_string(source.sizes()), shape_string(expected), shape_string(self.sizes()),
         index.numel(), dim);
  SPLICE_ASSIGN_OR_RETURN(Tensor idx, checked_index(op, index, dim, o.size(dim), true));
  Shape row_sizes = o.sizes(), row_strides = o.strides(), src_strides = src.strides();
  row_sizes.erase(row_sizes.begin() + dim);
  row_strides.erase(row_strides.begin() + dim);
  src_strides.erase(src_strides.begin() + dim);
  const int64_t* pi = idx.data<int64_t>();
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    T* po = o.data<T>();
    const T* ps = src.data<T>();
    for (int64_t i = 0; i < idx.numel(); ++i) {
      const int64_t base_o = pi[i] * o.stride(dim), base_s = i * src.stride(dim);
      for_each_offset<2>(
          row_sizes, {row_strides.data(), src_strides.data()},
          [&](const std::array<int64_t, 2>& off) {
            T& dst = po[base_o + off[0]];
            const T x = ps[base_s + off[1]];
            if constexpr (std::is_same_v<T, bool>) {
              dst = dst || (alpha.to_bool() && x);
            } else if constexpr (is_int_v<T>) {
              const uint64_t al = static_cast<uint64_t>(alpha.to_int());
              dst = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(dst)) +
                                   al * static_cast<uint64_t>(static_cast<int64_t>(x)));
            } else {
              const M al = static_cast<M>(alpha.to_double());
              dst = from_opmath<T>(to_opmath(dst) + al * to_opmath(x));
            }
          });
    }
  });
  return Outputs{out0};
}

}  // namespace

std::span<const KernelEntry> gather_scatter_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::index_select, index_select>(),
      entry<OpId::gather, gather>(),
      entry<OpId::embedding, embedding>(kStoresIntoContiguousDestination),
      entry<OpId::scatter_src, scatter_src>(),
      entry<OpId::scatter_value, scatter_value>(),
      entry<OpId::index_add, index_add>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
