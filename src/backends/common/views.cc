// The view ops' computation for every backend (views.h): permute, transpose, t, unsqueeze,
// squeeze, expand, slice, select, alias/detach, diagonal, the list-returning
// split_with_sizes/split/unbind (every piece a view, returned in order) and reshape's view when
// the strides allow one. Each returns views that share the input's storage, whatever its device:
// only sizes, strides and the offset are computed, no element is read.
#include "backends/common/views.h"

#include <algorithm>
#include <limits>

#include "backends/common/args.h"
#include "support/checked_math.h"
#include "tensor/indexing.h"

namespace splice::backend {

// Strides for viewing (old sizes, old strides) as new_sizes without copying, or
// nullopt (PyTorch's computeStride: merge runs of dims that are contiguous with each other).
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides,
                                  const Shape& new_sizes) {
  if (old_sizes.empty()) return contiguous_strides(new_sizes);
  if (shape_numel(old_sizes) == 0) {
    if (old_sizes == new_sizes) return old_strides;
    return contiguous_strides(new_sizes);
  }
  Shape new_strides(new_sizes.size(), 0);
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    if (tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

namespace {

// Sizes with one -1 inferred from numel (PyTorch's infer_size).
Result<Shape> infer_size(std::string_view op, const Shape& requested, int64_t numel) {
  Shape out = requested;
  int64_t known = 1;
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      KCHECK(!infer_at, ErrorKind::kShapeMismatch, "only one dimension can be inferred in {}",
             shape_string(requested));
      infer_at = i;
      continue;
    }
    KCHECK(out[i] >= 0, ErrorKind::kShapeMismatch, "invalid size {} in {}", out[i],
           shape_string(requested));
    auto k = checked_mul(known, out[i]);
    KCHECK(k.has_value(), ErrorKind::kShapeMismatch, "sizes {} overflow", shape_string(requested));
    known = *k;
  }
  if (infer_at) {
    KCHECK(known != 0 && numel % known == 0, ErrorKind::kShapeMismatch,
           "shape {} is invalid for input of size {}", shape_string(requested), numel);
    out[*infer_at] = numel / known;
  } else {
    KCHECK(known == numel, ErrorKind::kShapeMismatch, "shape {} is invalid for input of size {}",
           shape_string(requested), numel);
  }
  return out;
}

Tensor transposed(const Tensor& self, int64_t d0, int64_t d1) {
  Shape sizes = self.sizes(), strides = self.strides();
  if (self.dim() > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return self.view_as(sizes, strides, self.offset());
}

// Removes the size-1 dims among `dims` (all dims when `dims` is empty and all_dims is set).
Tensor squeezed(const Tensor& self, const std::vector<bool>& drop) {
  Shape sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (drop[d] && self.size(d) == 1) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  return self.view_as(sizes, strides, self.offset());
}

// Pieces of `self` along dim with the given sizes (checked to sum to the dim's size).
Views split_views(const Tensor& self, int64_t dim, const Shape& piece_sizes) {
  Views out;
  int64_t start = 0;
  for (int64_t len : piece_sizes) {
    Shape sizes = self.sizes();
    sizes[dim] = len;
    out.push_back(self.view_as(sizes, self.strides(), self.offset() + start * self.stride(dim)));
    start += len;
  }
  return out;
}

}  // namespace

Result<ReshapeView> reshape_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  ReshapeView r;
  SPLICE_ASSIGN_OR_RETURN(r.self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape requested, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(r.sizes, infer_size(op, requested, r.self.numel()));
  if (auto strides = view_strides(r.self.sizes(), r.self.strides(), r.sizes))
    r.view = r.self.view_as(r.sizes, *strides, r.self.offset());
  return r;
}

Result<Views> permute_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape dims, a.int_list(1));
  const int64_t rank = self.dim();
  KCHECK(static_cast<int64_t>(dims.size()) == rank, ErrorKind::kShapeMismatch,
         "got {} dims for a tensor of rank {}", dims.size(), rank);
  Shape sizes(rank), strides(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(op, dims[i], rank));
    KCHECK(!seen[d], ErrorKind::kBadInput, "dim {} repeats in {}", d, shape_string(dims));
    seen[d] = true;
    sizes[i] = self.size(d);
    strides[i] = self.stride(d);
  }
  return Views{self.view_as(sizes, strides, self.offset())};
}

Result<Views> transpose_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t d0, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t d1, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(d0, wrap_dim(op, d0, self.dim()));
  SPLICE_ASSIGN_OR_RETURN(d1, wrap_dim(op, d1, self.dim()));
  return Views{transposed(self, d0, d1)};
}

Result<Views> t_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  KCHECK(self.dim() <= 2, ErrorKind::kShapeMismatch, "expects a tensor with <= 2 dims, got {}",
         self.dim());
  if (self.dim() < 2) return Views{self};
  return Views{transposed(self, 0, 1)};
}

Result<Views> unsqueeze_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  const int64_t rank = self.dim();
  KCHECK(dim >= -rank - 1 && dim <= rank, ErrorKind::kOutOfRange,
         "dim {} is out of range for unsqueezing a tensor of rank {} (expected [{}, {}])", dim,
         rank, -rank - 1, rank);
  if (dim < 0) dim += rank + 1;
  Shape sizes = self.sizes(), strides = self.strides();
  const int64_t new_stride = dim >= rank ? 1 : sizes[dim] * strides[dim];
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, new_stride);
  return Views{self.view_as(sizes, strides, self.offset())};
}

Result<Views> squeeze_dims_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape dims, a.int_list(1));
  std::vector<bool> drop(self.dim(), false);
  for (int64_t d : dims) {
    SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(op, d, self.dim()));
    if (self.dim() > 0) drop[w] = true;
  }
  return Views{squeezed(self, drop)};
}

Result<Views> squeeze_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  return Views{squeezed(self, std::vector<bool>(self.dim(), true))};
}

Result<Views> expand_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape size, a.int_list(1));
  const int64_t rank = static_cast<int64_t>(size.size());
  KCHECK(rank >= self.dim(), ErrorKind::kShapeMismatch,
         "the expanded size {} has fewer dims than the tensor's sizes {}", shape_string(size),
         shape_string(self.sizes()));
  const int64_t lead = rank - self.dim();
  Shape sizes(rank), strides(rank, 0);
  for (int64_t i = 0; i < rank; ++i) {
    if (i < lead) {
      KCHECK(size[i] >= 0, ErrorKind::kShapeMismatch,
             "the expanded size {} has -1 or a negative size in a new leading dim",
             shape_string(size));
      sizes[i] = size[i];
      continue;
    }
    const int64_t s = self.size(i - lead);
    const int64_t want = size[i] == -1 ? s : size[i];
    KCHECK(want == s || (s == 1 && want >= 0), ErrorKind::kShapeMismatch,
           "the expanded size {} must match the existing size {} at dim {} (sizes {})", want, s, i,
           shape_string(self.sizes()));
    sizes[i] = want;
    strides[i] = (s == 1 && want != 1) ? 0 : self.stride(i - lead);
  }
  return Views{self.view_as(sizes, strides, self.offset())};
}

Result<Views> slice_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto start_opt, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(auto end_opt, a.opt_integer(3));
  SPLICE_ASSIGN_OR_RETURN(auto step_opt, a.opt_integer(4));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "cannot slice a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const int64_t step = step_opt.value_or(1);
  KCHECK(step >= 1, ErrorKind::kOutOfRange, "slice step must be positive, got {}", step);
  const int64_t size = self.size(dim);
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  if (start < 0) start = start < -size ? 0 : start + size;
  if (end < 0) end = end < -size ? 0 : end + size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape sizes = self.sizes(), strides = self.strides();
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return Views{self.view_as(sizes, strides, self.offset() + start * self.stride(dim))};
}

Result<Views> select_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t index, a.integer(2));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "cannot select from a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const int64_t size = self.size(dim);
  SPLICE_ASSIGN_OR_RETURN(index, wrap_index(op, index, dim, size));
  Shape sizes = self.sizes(), strides = self.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return Views{self.view_as(sizes, strides, self.offset() + index * self.stride(dim))};
}

// split_with_sizes(self, SymInt[] split_sizes, int dim=0).
Result<Views> split_with_sizes_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape piece_sizes, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "expects at least a 1-dimensional tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  int64_t total = 0;
  for (int64_t len : piece_sizes) {
    KCHECK(len >= 0, ErrorKind::kShapeMismatch, "split_sizes {} has a negative entry",
           shape_string(piece_sizes));
    KCHECK(len <= self.size(dim) - total, ErrorKind::kShapeMismatch,
           "split_sizes {} exceed dim {} of size {}", shape_string(piece_sizes), dim,
           self.size(dim));
    total += len;
  }
  KCHECK(total == self.size(dim), ErrorKind::kShapeMismatch,
         "split_sizes {} must sum to the size of dim {} ({}), got {}", shape_string(piece_sizes),
         dim, self.size(dim), total);
  return split_views(self, dim, piece_sizes);
}

// split.Tensor(self, SymInt split_size, int dim=0): pieces of split_size, the last one
// smaller; a dim of size 0 gives one empty piece.
Result<Views> split_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t split_size, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "expects at least a 1-dimensional tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const int64_t size = self.size(dim);
  KCHECK(split_size >= 0, ErrorKind::kShapeMismatch, "split_size must be non-negative, got {}",
         split_size);
  KCHECK(split_size > 0 || size == 0, ErrorKind::kShapeMismatch,
         "split_size can only be 0 if dimension size is 0, but got dimension size of {}", size);
  Shape piece_sizes;
  if (split_size == 0) {
    piece_sizes.push_back(0);
  } else {
    const int64_t pieces = std::max<int64_t>((size + split_size - 1) / split_size, 1);
    for (int64_t i = 0; i < pieces; ++i)
      piece_sizes.push_back(std::min(split_size, size - i * split_size));
  }
  return split_views(self, dim, piece_sizes);
}

// unbind.int(self, int dim=0): every index of dim as a select view.
Result<Views> unbind_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "cannot unbind a 0-d tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  Shape sizes = self.sizes(), strides = self.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  Views out;
  for (int64_t i = 0; i < self.size(dim); ++i)
    out.push_back(self.view_as(sizes, strides, self.offset() + i * self.stride(dim)));
  return out;
}

Result<Views> alias_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  return Views{self};
}

// diagonal(self, int offset=0, int dim1=0, int dim2=1): the diagonal of dims dim1/dim2 shifted
// by offset, as the view's last dim.
Result<Views> diagonal_view(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t offset, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim1, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim2, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(dim1, wrap_dim(op, dim1, self.dim()));
  SPLICE_ASSIGN_OR_RETURN(dim2, wrap_dim(op, dim2, self.dim()));
  KCHECK(self.dim() >= 2, ErrorKind::kShapeMismatch,
         "diagonal needs a tensor of at least 2 dims, got {}", self.dim());
  KCHECK(dim1 != dim2, ErrorKind::kBadInput, "diagonal dimensions cannot be identical {}, {}", dim1,
         dim2);
  const int64_t s1 = self.size(dim1), s2 = self.size(dim2);
  int64_t len = 0, start = self.offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(s1, s2 - std::min(offset, s2)), 0);
    if (len > 0) start += offset * self.stride(dim2);
  } else {
    len = std::max<int64_t>(std::min(s1 - std::min(-offset, s1), s2), 0);
    if (len > 0) start -= offset * self.stride(dim1);
  }
  const int64_t diag_stride = self.stride(dim1) + self.stride(dim2);
  Shape sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim1 || d == dim2) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  sizes.push_back(len);
  strides.push_back(diag_stride);
  return Views{self.view_as(sizes, strides, start)};
}

}  // namespace splice::backend
