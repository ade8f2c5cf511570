// Advanced indexing: index.Tensor (read), index_put (write, optional accumulate) and
// index_copy. Indices follow PyTorch: a list over self's leading dims with None for full
// slices; bool/uint8 masks become their nonzero coordinates (one index per mask dim); integer
// index tensors (int64/int32) broadcast together; negative indices wrap; an index outside
// [-size, size) is kOutOfRange naming dim, size and index (checked before any write). The
// indexed dims' result goes where the indices are when they are adjacent, else in front.
#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

struct AdvancedIndex {
  std::vector<std::optional<Tensor>> per_dim;  // contiguous int64 over `bshape`, wrapped
  Shape bshape;
  Shape result_shape;
  // For each result dim: the self dim it walks (>= 0), or -(j + 1) for broadcast dim j.
  std::vector<int64_t> result_src;
};

Result<AdvancedIndex> make_index(std::string_view op, const Tensor& self,
                                 const std::vector<std::optional<Tensor>>& indices) {
  const int64_t rank = self.dim();
  AdvancedIndex ix;
  ix.per_dim.assign(rank, std::nullopt);
  int64_t cursor = 0;
  for (const auto& entry : indices) {
    const int64_t width =
        entry && (entry->dtype() == DType::kBool || entry->dtype() == DType::kUInt8) ? entry->dim()
                                                                                     : 1;
    KCHECK(cursor + width <= rank, ErrorKind::kOutOfRange,
           "too many indices for a tensor of rank {}", rank);
    if (!entry) {
      ++cursor;
      continue;
    }
    const Tensor& t = *entry;
    if (t.dtype() == DType::kBool || t.dtype() == DType::kUInt8) {
      for (int64_t k = 0; k < t.dim(); ++k) {
        KCHECK(t.size(k) == self.size(cursor + k), ErrorKind::kShapeMismatch,
               "the mask of shape {} does not match self's shape {} at dim {}",
               shape_string(t.sizes()), shape_string(self.sizes()), cursor + k);
      }
      const Tensor mask = contiguous_copy(to_dtype(t, DType::kBool));
      std::vector<Shape> coords;
      const bool* pm = mask.data<bool>();
      int64_t lin = 0;
      for_each_coord(mask.sizes(), [&](const Shape& c) {
        if (pm[lin++]) coords.push_back(c);
      });
      const int64_t count = static_cast<int64_t>(coords.size());
      for (int64_t k = 0; k < t.dim(); ++k) {
        Tensor idx = empty(DType::kInt64, {count});
        for (int64_t i = 0; i < count; ++i) idx.data<int64_t>()[i] = coords[i][k];
        ix.per_dim[cursor + k] = idx;
      }
      cursor += t.dim();
      continue;
    }
    KCHECK(t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32, ErrorKind::kBadInput,
           "index tensors must be int64, int32, bool or uint8, got {}", dtype_name(t.dtype()));
    ix.per_dim[cursor++] = to_dtype(t, DType::kInt64);
  }
  // Broadcast the index tensors together, then wrap and range-check them.
  std::vector<int64_t> indexed;
  for (int64_t d = 0; d < rank; ++d) {
    if (!ix.per_dim[d]) continue;
    if (indexed.empty()) ix.bshape = ix.per_dim[d]->sizes();
    SPLICE_ASSIGN_OR_RETURN(ix.bshape, broadcast_shapes(op, ix.bshape, ix.per_dim[d]->sizes()));
    indexed.push_back(d);
  }
  for (int64_t d : indexed) {
    Tensor wrapped = cast_copy(broadcast_to(*ix.per_dim[d], ix.bshape), DType::kInt64);
    int64_t* p = wrapped.data<int64_t>();
    const int64_t size = self.size(d);
    for (int64_t i = 0, n = wrapped.numel(); i < n; ++i) {
      KCHECK(p[i] >= -size && p[i] < size, ErrorKind::kOutOfRange,
             "index {} is out of range for dim {} of size {}", p[i], d, size);
      if (p[i] < 0) p[i] += size;
    }
    ix.per_dim[d] = wrapped;
  }
  bool adjacent = true;
  for (size_t i = 1; i < indexed.size(); ++i) adjacent &= indexed[i] == indexed[i - 1] + 1;
  auto push_bdims = [&] {
    for (size_t j = 0; j < ix.bshape.size(); ++j) {
      ix.result_shape.push_back(ix.bshape[j]);
      ix.result_src.push_back(-static_cast<int64_t>(j) - 1);
    }
  };
  if (!adjacent) push_bdims();
  for (int64_t d = 0; d < rank; ++d) {
    if (ix.per_dim[d]) {
      if (adjacent && d == indexed.front()) push_bdims();
      continue;
    }
    ix.result_shape.push_back(self.size(d));
    ix.result_src.push_back(d);
  }
  return ix;
}

// Calls fn(result_coord, result_linear, self_offset) for each element of the indexed result.
template <typename F>
void for_each_indexed(const AdvancedIndex& ix, const Tensor& self, F&& fn) {
  const Shape bstrides = contiguous_strides(ix.bshape);
  int64_t lin = 0;
  for_each_coord(ix.result_shape, [&](const Shape& coord) {
    int64_t blin = 0, off = 0;
    for (size_t r = 0; r < coord.size(); ++r) {
      const int64_t src = ix.result_src[r];
      if (src >= 0)
        off += coord[r] * self.stride(src);
      else
        blin += coord[r] * bstrides[-src - 1];
    }
    for (size_t d = 0; d < ix.per_dim.size(); ++d)
      if (ix.per_dim[d]) off += ix.per_dim[d]->data<int64_t>()[blin] * self.stride(d);
    fn(coord, lin++, off);
  });
}

Result<Outputs> index_read(std::string_view op, std::span<const KernelArg> args) {
  // index.Tensor(self, Tensor?[] indices)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto indices, a.opt_tensor_list(1));
  SPLICE_ASSIGN_OR_RETURN(AdvancedIndex ix, make_index(op, self, indices));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), ix.result_shape));
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ps = self.data<T>();
    T* po = out.data<T>();
    for_each_indexed(ix, self, [&](const Shape&, int64_t lin, int64_t off) { po[lin] = ps[off]; });
  });
  return Outputs{out};
}

Result<Outputs> index_put(std::string_view op, std::span<const KernelArg> args) {
  // index_put(self, Tensor?[] indices, values, accumulate=False)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto indices, a.opt_tensor_list(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor values, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(bool accumulate, a.boolean_or(3, false));
  KCHECK(values.dtype() == self.dtype() || values.numel() == 1, ErrorKind::kShapeMismatch,
         "values of dtype {} must have self's dtype {} (index_put casts only one-element values)",
         dtype_name(values.dtype()), dtype_name(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(AdvancedIndex ix, make_index(op, self, indices));
  SPLICE_ASSIGN_OR_RETURN(Shape b, broadcast_shapes(op, values.sizes(), ix.result_shape));
  KCHECK(b == ix.result_shape, ErrorKind::kShapeMismatch,
         "values of shape {} cannot be broadcast to the indexed shape {}",
         shape_string(values.sizes()), shape_string(ix.result_shape));
  const Tensor v = broadcast_to(to_dtype(values, self.dtype()), ix.result_shape);
  Tensor out = write_base(self);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pv = v.data<T>();
    T* po = out.data<T>();
    for_each_indexed(ix, out, [&](const Shape& coord, int64_t, int64_t off) {
      int64_t voff = 0;
      for (size_t r = 0; r < coord.size(); ++r) voff += coord[r] * v.stride(r);
      const T x = pv[voff];
      if (!accumulate) {
        po[off] = x;
      } else if constexpr (std::is_same_v<T, bool>) {
        po[off] = po[off] || x;
      } else if constexpr (is_int_v<T>) {
        po[off] = static_cast<T>(static_cast<uint64_t>(po[off]) + static_cast<uint64_t>(x));
      } else {
        po[off] = from_opmath<T>(to_opmath(po[off]) + to_opmath(x));
      }
    });
  });
  return Outputs{out};
}

Result<Outputs> index_copy(std::string_view op, std::span<const KernelArg> args) {
  // index_copy(self, dim, index, source)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor index, a.tensor(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor source, a.tensor(3));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  KCHECK(index.dtype() == DType::kInt64 || index.dtype() == DType::kInt32, ErrorKind::kBadInput,
         "index must be int64 or int32, got {}", dtype_name(index.dtype()));
  KCHECK(index.dim() <= 1, ErrorKind::kShapeMismatch, "index must be 0-d or 1-d, got shape {}",
         shape_string(index.sizes()));
  KCHECK(source.dtype() == self.dtype(), ErrorKind::kShapeMismatch,
         "source dtype {} must equal self's dtype {}", dtype_name(source.dtype()),
         dtype_name(self.dtype()));
  // View self and source with a leading-size-1 dim when 0-d so one loop covers both cases.
  const Tensor s = self.dim() == 0 ? self.view_as({1}, {1}, self.offset()) : self;
  const Tensor src = source.dim() == 0 ? source.view_as({1}, {1}, source.offset()) : source;
  Shape expected = s.sizes();
  expected[dim] = index.numel();
  KCHECK(src.sizes() == expected, ErrorKind::kShapeMismatch,
         "source of shape {} does not match the expected shape {} (self {}, {} indices on dim "
         "{})",
         shape_string(source.sizes()), shape_string(expected), shape_string(self.sizes()),
         index.numel(), dim);
  const Tensor idx = cast_copy(index, DType::kInt64);
  const int64_t size = s.size(dim);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int64_t v = idx.data<int64_t>()[i];
    KCHECK(v >= 0 && v < size, ErrorKind::kOutOfRange,
           "index {} is out of range for dim {} of size {}", v, dim, size);
  }
  Tensor out = write_base(self);
  const Tensor o = out.dim() == 0 ? out.view_as({1}, {1}, out.offset()) : out;
  Shape row_sizes = o.sizes(), row_strides = o.strides(), src_strides = src.strides();
  row_sizes.erase(row_sizes.begin() + dim);
  row_strides.erase(row_strides.begin() + dim);
  src_strides.erase(src_strides.begin() + dim);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const Tensor dst =
        o.view_as(row_sizes, row_strides, o.offset() + idx.data<int64_t>()[i] * o.stride(dim));
    const Tensor row = src.view_as(row_sizes, src_strides, src.offset() + i * src.stride(dim));
    copy_cast_into(dst, row);
  }
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> index_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::index_Tensor, index_read>(),
      entry<OpId::index_put, index_put>(kWritesInPlace),
      entry<OpId::index_copy, index_copy>(kWritesInPlace),
  };
  return kEntries;
}

}  // namespace splice::cpu
