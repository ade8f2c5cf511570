// Shape-rearranging copies: tril/triu (zero one side of a diagonal of the last two dims), flip
// (a copy through a view with negated strides), roll (each dim's two halves swapped; no dims
// rolls the flattened tensor), constant_pad_nd (negative pads crop) and stack (cat of the
// inputs along a new dim, dtypes promoted); aten.pad.default reaches no backend
// (passes/decompose_composites rewrites it). Every result is a new contiguous tensor; the copies go
// through copy_cast_into on strided views, so inputs of any layout work.
#include "backends/common/promotion.h"
#include "backends/cpu/args.h"
#include "support/checked_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

using backend::PromotionOperand;
using backend::result_type;

namespace {

// tril/triu(self, SymInt diagonal=0): keeps element (i, j) of each matrix when
// j - i <= diagonal (tril) or j - i >= diagonal (triu), zeroes the rest.
template <bool kLower>
Result<Outputs> tri(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t diagonal, a.integer(1));
  KCHECK(self.dim() >= 2, ErrorKind::kShapeMismatch,
         "input tensor must have at least 2 dimensions, got {}", self.dim());
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  copy_cast_into(out, self);
  const int64_t rows = self.size(self.dim() - 2), cols = self.size(self.dim() - 1);
  const int64_t matrices = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = kLower ? j - i <= diagonal : j - i >= diagonal;
          if (!keep) p[(m * rows + i) * cols + j] = T(0);
        }
      }
    }
  });
  return Outputs{out};
}

// flip(self, int[] dims).
Result<Outputs> flip(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape dims, a.int_list(1));
  std::vector<bool> flipped(self.dim(), false);
  for (int64_t d : dims) {
    SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(op, d, self.dim()));
    if (self.dim() == 0) continue;
    KCHECK(!flipped[w], ErrorKind::kBadInput, "dim {} appears multiple times in the list of dims",
           w);
    flipped[w] = true;
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), self.sizes()));
  if (out.numel() == 0) return Outputs{out};
  Shape strides = self.strides();
  int64_t offset = self.offset();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!flipped[d]) continue;
    offset += (self.size(d) - 1) * strides[d];  // the last element comes first
    strides[d] = -strides[d];
  }
  copy_cast_into(out, self.view_as(self.sizes(), strides, offset));
  return Outputs{out};
}

// src rolled by `shift` along dim into a new tensor: out[(i + shift) mod n] = src[i].
Tensor roll_dim(const Tensor& src, int64_t dim, int64_t shift) {
  Tensor out = empty(src.dtype(), src.sizes());
  const int64_t n = src.size(dim);
  const int64_t s = n == 0 ? 0 : ((shift % n) + n) % n;
  auto piece = [](const Tensor& t, int64_t dim, int64_t start, int64_t len) {
    Shape sizes = t.sizes();
    sizes[dim] = len;
    return t.view_as(sizes, t.strides(), t.offset() + start * t.stride(dim));
  };
  copy_cast_into(piece(out, dim, s, n - s), piece(src, dim, 0, n - s));
  copy_cast_into(piece(out, dim, 0, s), piece(src, dim, n - s, s));
  return out;
}

// roll(self, SymInt[1] shifts, int[1] dims=[]).
Result<Outputs> roll(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape shifts, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(Shape dims, a.int_list(2));
  if (dims.empty()) {
    KCHECK(shifts.size() == 1, ErrorKind::kShapeMismatch,
           "shifts {} must have one entry when dims is empty", shape_string(shifts));
    const Tensor flat = contiguous_copy(self);
    const Tensor rolled = roll_dim(flat.view_as({flat.numel()}, {1}, 0), 0, shifts[0]);
    return Outputs{rolled.view_as(self.sizes(), contiguous_strides(self.sizes()), 0)};
  }
  KCHECK(shifts.size() == dims.size(), ErrorKind::kShapeMismatch,
         "shifts and dimensions must align, got shifts {} and dims {}", shape_string(shifts),
         shape_string(dims));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "cannot roll a 0-d tensor along a dim");
  Tensor cur = self;
  for (size_t k = 0; k < dims.size(); ++k) {
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(op, dims[k], self.dim()));
    cur = roll_dim(cur, d, shifts[k]);
  }
  return Outputs{cur};
}

Result<Tensor> pad_constant(std::string_view op, const Tensor& self, const Shape& pad,
                            const Scalar& value) {
  KCHECK(pad.size() % 2 == 0, ErrorKind::kShapeMismatch,
         "length of pad must be even but instead it equals {}", pad.size());
  const int64_t padded = static_cast<int64_t>(pad.size()) / 2;
  KCHECK(padded <= self.dim(), ErrorKind::kShapeMismatch,
         "length of pad should be no more than twice the number of dimensions of the input ({}), "
         "got {}",
         self.dim(), pad.size());
  Shape out_shape = self.sizes();
  Shape src_start(self.dim(), 0), dst_start(self.dim(), 0), len = self.sizes();
  for (int64_t k = 0; k < padded; ++k) {
    const int64_t d = self.dim() - 1 - k;
    const int64_t lo = pad[2 * k], hi = pad[2 * k + 1];
    auto sz = checked_add(self.size(d), lo);
    if (sz) sz = checked_add(*sz, hi);
    KCHECK(sz.has_value() && *sz >= 0, ErrorKind::kShapeMismatch,
           "the input size {} at dim {}, plus padding {} and {}, resulted in a negative output "
           "size",
           self.size(d), d, lo, hi);
    out_shape[d] = *sz;
    src_start[d] = lo < 0 ? -lo : 0;
    dst_start[d] = lo > 0 ? lo : 0;
    len[d] = std::max<int64_t>(0, self.size(d) - src_start[d] - (hi < 0 ? -hi : 0));
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), out_shape));
  const Tensor v = scalar_to_tensor(value, self.dtype());
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T x = *v.data<T>();
    T* p = out.data<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = x;
  });
  if (shape_numel(len) == 0) return out;
  int64_t src_off = self.offset(), dst_off = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    src_off += src_start[d] * self.stride(d);
    dst_off += dst_start[d] * out.stride(d);
  }
  copy_cast_into(out.view_as(len, out.strides(), dst_off),
                 self.view_as(len, self.strides(), src_off));
  return out;
}

// constant_pad_nd(self, SymInt[] pad, Scalar value=0): pad[2k], pad[2k+1] pad the front and
// back of dim rank-1-k.
Result<Outputs> constant_pad_nd(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape pad, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(Scalar value, a.scalar_or(2, Scalar(int64_t{0})));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, pad_constant(op, self, pad, value));
  return Outputs{out};
}

// stack(Tensor[] tensors, int dim=0): every tensor the same shape; dim in [-rank-1, rank].
Result<Outputs> stack(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, a.tensor_list(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  KCHECK(!tensors.empty(), ErrorKind::kBadInput, "expects a non-empty TensorList");
  const Shape& shape = tensors[0].sizes();
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, tensors[0].dim() + 1));
  std::vector<PromotionOperand> ops;
  for (size_t i = 0; i < tensors.size(); ++i) {
    KCHECK(tensors[i].sizes() == shape, ErrorKind::kShapeMismatch,
           "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
           shape_string(shape), shape_string(tensors[i].sizes()), i);
    ops.push_back({tensors[i].dtype(), PromotionOperand::Priority::kDimensioned});
  }
  Shape out_shape = shape;
  out_shape.insert(out_shape.begin() + dim, static_cast<int64_t>(tensors.size()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, result_type(ops), out_shape));
  Shape strides = out.strides();
  const int64_t step = strides[dim];
  strides.erase(strides.begin() + dim);
  for (size_t i = 0; i < tensors.size(); ++i)
    copy_cast_into(out.view_as(shape, strides, static_cast<int64_t>(i) * step), tensors[i]);
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> shape_op_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::tril, tri<true>>(),
      entry<OpId::triu, tri<false>>(),
      entry<OpId::flip, flip>(),
      entry<OpId::roll, roll>(),
      entry<OpId::constant_pad_nd, constant_pad_nd>(),
      entry<OpId::stack, stack>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
