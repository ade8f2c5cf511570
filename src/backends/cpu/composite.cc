// The CompositeImplicit shape and conversion ops that the training IR keeps and the functional
// forms decompose: the `to` overloads, pad (constant, reflect, replicate, circular), narrow,
// contiguous, dropout in eval mode, chunk, flatten/unflatten, the *_as ops, movedim/moveaxis/
// swapaxes/swapdims, and diagonal (which einsum's decomposition uses). Most are written in terms
// of the primitive kernels (reshape, permute, expand, split), as ATen writes them, so they
// inherit those kernels' checks and view behaviour. Ops whose schema marks the result as an
// alias of self (`Tensor(a)`) may return self or a view; the others return new tensors.
#include <cstring>

#include "backends/cpu/args.h"
#include "tensor/convert.h"
#include "backends/cpu/composite.h"
#include "tensor/dtype_dispatch.h"
#include "support/checked_math.h"

namespace splice::cpu {

Result<Outputs> run_kernel(std::string_view op, std::string_view target,
                           std::vector<KernelArg> args) {
  KernelFn fn = find_kernel(target);
  KCHECK(fn != nullptr, ErrorKind::kInternal, "is built on {}, which has no kernel", target);
  auto r = call_kernel(fn, args);
  if (!r.ok()) return r.error().with_context(std::string(op));
  return r;
}

Result<Tensor> run_kernel1(std::string_view op, std::string_view target,
                           std::vector<KernelArg> args) {
  SPLICE_ASSIGN_OR_RETURN(Outputs out, run_kernel(op, target, std::move(args)));
  KCHECK(out.size() == 1, ErrorKind::kInternal, "{} returned {} tensors, expected 1", target,
         out.size());
  return out[0];
}

namespace {

// `to` is a cast when the dtype changes and `self` itself otherwise (copy=False: the result
// aliases self, which is safe because splice's runtime never writes through a kernel's result
// into its input). copy=True always returns a new tensor.
Result<Outputs> to_impl(const Tensor& self, DType dtype, bool copy) {
  if (dtype == self.dtype() && !copy) return Outputs{self};
  return Outputs{cast_copy(self, dtype)};
}

// to.dtype(self, ScalarType dtype, bool non_blocking=False, bool copy=False, mf=None)
Result<Outputs> to_dtype_op(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  KCHECK(dtype.has_value(), ErrorKind::kBadInput, "dtype must not be None");
  SPLICE_ASSIGN_OR_RETURN(bool copy, a.boolean_or(3, false));
  return to_impl(self, *dtype, copy);
}

// to.dtype_layout(self, *, dtype=None, layout=None, device=None, pin_memory=None,
// non_blocking=False, copy=False, mf=None): layout and device are ignored (CPU, strided).
Result<Outputs> to_dtype_layout(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  SPLICE_ASSIGN_OR_RETURN(bool copy, a.boolean_or(6, false));
  return to_impl(self, dtype.value_or(self.dtype()), copy);
}

// to.device(self, Device device, ScalarType dtype, non_blocking=False, copy=False, mf=None)
Result<Outputs> to_device(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  KCHECK(dtype.has_value(), ErrorKind::kBadInput, "dtype must not be None");
  SPLICE_ASSIGN_OR_RETURN(bool copy, a.boolean_or(4, false));
  return to_impl(self, *dtype, copy);
}

// to.other(self, Tensor other, non_blocking=False, copy=False, mf=None): other's dtype.
Result<Outputs> to_other(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor other, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(bool copy, a.boolean_or(3, false));
  return to_impl(self, other.dtype(), copy);
}

// type_as(self, other): self in other's dtype, always a new tensor (no alias in the schema).
Result<Outputs> type_as(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor other, a.tensor(1));
  return Outputs{cast_copy(self, other.dtype())};
}

// contiguous(self, *, memory_format=contiguous_format): self when already contiguous.
Result<Outputs> contiguous(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  return Outputs{self.is_contiguous() ? self : contiguous_copy(self)};
}

// dropout(input, float p, bool train): the identity in eval mode (and for p == 0, which keeps
// every element and scales by 1); random masks are not reproducible against PyTorch.
Result<Outputs> dropout(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar p, a.scalar(1));
  SPLICE_ASSIGN_OR_RETURN(bool train, a.boolean(2));
  const double pv = p.to_double();
  KCHECK(pv >= 0.0 && pv <= 1.0, ErrorKind::kOutOfRange,
         "dropout probability has to be between 0 and 1, but got {}", pv);
  KCHECK(!train || pv == 0.0, ErrorKind::kUnsupportedOp,
         "dropout in training mode is not supported (p={}); export the model after "
         "model.eval()",
         pv);
  return Outputs{contiguous_copy(input)};
}

// Source index along one padded dim for output position o (-1: the constant fill value).
// i = o - before is the position in the input; reflect mirrors without repeating the edge,
// replicate clamps, circular wraps.
enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

int64_t pad_source(PadMode mode, int64_t o, int64_t before, int64_t n) {
  int64_t i = o - before;
  switch (mode) {
    case PadMode::kConstant:
      return i >= 0 && i < n ? i : -1;
    case PadMode::kReflect:
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
      return i;
    case PadMode::kReplicate:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kCircular:
      return ((i % n) + n) % n;
  }
  return -1;
}

// narrow(self, int dim, SymInt start, SymInt length): a view of [start, start+length) along
// dim; a negative start counts from the end.
Result<Outputs> narrow(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t start, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t length, a.integer(3));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch, "narrow() cannot be applied to a 0-dim tensor");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const int64_t size = self.size(dim);
  KCHECK(length >= 0, ErrorKind::kOutOfRange, "narrow(): length must be non-negative, got {}",
         length);
  KCHECK(start >= -size && start <= size, ErrorKind::kOutOfRange,
         "start ({}) is out of bounds for dim {} of size {}", start, dim, size);
  if (start < 0) start += size;
  KCHECK(start <= size - length, ErrorKind::kOutOfRange,
         "start ({}) + length ({}) exceeds dimension size ({})", start, length, size);
  Shape sizes = self.sizes();
  sizes[dim] = length;
  return Outputs{self.view_as(sizes, self.strides(), self.offset() + start * self.stride(dim))};
}

// chunk(self, int chunks, int dim=0): split with pieces of ceil(size / chunks) (fewer pieces
// than chunks when they do not divide evenly), or `chunks` empty pieces of an empty dim.
Result<Outputs> chunk(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t chunks, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(2));
  KCHECK(self.dim() > 0, ErrorKind::kShapeMismatch,
         "chunk expects at least a 1-dimensional tensor");
  KCHECK(chunks > 0, ErrorKind::kOutOfRange, "chunk expects `chunks` to be greater than 0, got {}",
         chunks);
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  const int64_t size = self.size(dim);
  if (size == 0) {
    // PyTorch returns `chunks` empty pieces; a count beyond any real program is an error
    // rather than a huge allocation.
    KCHECK(chunks <= (int64_t{1} << 24), ErrorKind::kOutOfRange,
           "{} chunks of an empty dim is more than splice supports", chunks);
    return run_kernel(op, "aten.split_with_sizes.default",
                      {self, std::vector<int64_t>(chunks, 0), dim});
  }
  const int64_t split_size = size / chunks + (size % chunks != 0 ? 1 : 0);
  return run_kernel(op, "aten.split.Tensor", {self, split_size, dim});
}

// flatten.using_ints(self, int start_dim=0, int end_dim=-1): dims start..end merged into one;
// a 0-d tensor becomes 1-d.
Result<Outputs> flatten(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t start, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t end, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(start, wrap_dim(op, start, self.dim()));
  SPLICE_ASSIGN_OR_RETURN(end, wrap_dim(op, end, self.dim()));
  KCHECK(start <= end, ErrorKind::kBadInput,
         "flatten() has invalid args: start_dim ({}) cannot come after end_dim ({})", start, end);
  if (self.dim() == 0) return run_kernel(op, "aten.reshape.default", {self, Shape{1}});
  if (start == end) return Outputs{self};
  Shape sizes(self.sizes().begin(), self.sizes().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= self.size(d);  // <= numel: no overflow
  sizes.push_back(merged);
  sizes.insert(sizes.end(), self.sizes().begin() + end + 1, self.sizes().end());
  return run_kernel(op, "aten.reshape.default", {self, sizes});
}

// unflatten.int(self, int dim, SymInt[] sizes): dim split into `sizes` (one may be -1).
Result<Outputs> unflatten(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(Shape pieces, a.int_list(2));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  KCHECK(!pieces.empty(), ErrorKind::kShapeMismatch, "unflatten: sizes must be non-empty");
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  int64_t known = 1;
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i] == -1 && !infer_at) {
      infer_at = i;
      continue;
    }
    const auto k = pieces[i] >= 0 ? checked_mul(known, pieces[i]) : std::nullopt;
    KCHECK(k.has_value(), ErrorKind::kShapeMismatch, "unflatten: invalid sizes {}",
           shape_string(pieces));
    known = *k;
  }
  if (infer_at) {
    KCHECK(known != 0 && size % known == 0, ErrorKind::kShapeMismatch,
           "unflatten: sizes {} don't multiply up to the size of dim {} ({}) in the input tensor",
           shape_string(pieces), dim, size);
    pieces[*infer_at] = size / known;
  } else {
    KCHECK(known == size, ErrorKind::kShapeMismatch,
           "unflatten: provided sizes {} don't multiply up to the size of dim {} ({}) in the "
           "input tensor",
           shape_string(pieces), dim, size);
  }
  Shape sizes = self.sizes();
  if (sizes.empty()) sizes.push_back(1);
  sizes.erase(sizes.begin() + dim);
  sizes.insert(sizes.begin() + dim, pieces.begin(), pieces.end());
  return run_kernel(op, "aten.reshape.default", {self, sizes});
}

// view_as / reshape_as (self, other): self reshaped to other's sizes.
Result<Outputs> reshape_as(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor other, a.tensor(1));
  return run_kernel(op, "aten.reshape.default", {self, other.sizes()});
}

// expand_as(self, other): self broadcast to other's sizes (a view).
Result<Outputs> expand_as(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor other, a.tensor(1));
  return run_kernel(op, "aten.expand.default", {self, other.sizes(), false});
}

// movedim/moveaxis .int(self, int source, int destination) and .intlist(self, int[] source,
// int[] destination): source dims go to the destination positions, the other dims fill the
// remaining positions in their original order (PyTorch's movedim).
Result<Outputs> movedim(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape src, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(Shape dst, a.int_list(2));
  KCHECK(src.size() == dst.size(), ErrorKind::kShapeMismatch,
         "Invalid source or destination dims: source ({} dims) should contain the same number "
         "of dims as destination ({} dims)",
         src.size(), dst.size());
  const int64_t rank = self.dim();
  const int64_t n = rank == 0 ? 1 : rank;
  Shape perm(n, -1);
  std::vector<bool> src_used(n, false);
  for (size_t i = 0; i < src.size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(int64_t s, wrap_dim(op, src[i], rank));
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(op, dst[i], rank));
    KCHECK(!src_used[s], ErrorKind::kBadInput, "movedim: repeated dim in `source` {}",
           shape_string(src));
    KCHECK(perm[d] == -1, ErrorKind::kBadInput, "movedim: repeated dim in `destination` {}",
           shape_string(dst));
    src_used[s] = true;
    perm[d] = s;
  }
  if (rank == 0) return Outputs{self};
  int64_t next = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (perm[d] != -1) continue;
    while (src_used[next]) ++next;
    perm[d] = next++;
  }
  return run_kernel(op, "aten.permute.default", {self, perm});
}

// swapaxes(self, int axis0, int axis1) / swapdims(self, int dim0, int dim1): transpose.
Result<Outputs> swapaxes(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t d0, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t d1, a.integer(2));
  return run_kernel(op, "aten.transpose.int", {self, d0, d1});
}

}  // namespace

// pad(self, SymInt[] pad, str mode="constant", float? value=None): pad holds (before, after)
// pairs starting from the last dim; negative constant pads crop. Non-constant modes pad the
// last 1-3 dims of an input with one or two more dims (batch and channel), as PyTorch does.
Result<Outputs> pad_all_modes(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Shape pads, a.int_list(1));
  SPLICE_ASSIGN_OR_RETURN(auto mode_name, a.opt_string(2));
  std::optional<double> value;
  if (!a.is_none(3)) {
    SPLICE_ASSIGN_OR_RETURN(Scalar v, a.scalar(3));
    value = v.to_double();
  }
  const std::string name = mode_name.value_or("constant");
  PadMode mode;
  if (name == "constant") {
    mode = PadMode::kConstant;
  } else if (name == "reflect") {
    mode = PadMode::kReflect;
  } else if (name == "replicate") {
    mode = PadMode::kReplicate;
  } else if (name == "circular") {
    mode = PadMode::kCircular;
  } else {
    return make_error(ErrorKind::kUnsupportedOp,
                      "{}: padding mode '{}' is not supported (constant, reflect, replicate, "
                      "circular are)",
                      op, name);
  }
  const int64_t rank = self.dim();
  const int64_t npad = static_cast<int64_t>(pads.size());
  KCHECK(npad % 2 == 0, ErrorKind::kShapeMismatch, "padding length {} must be divisible by 2",
         npad);
  KCHECK(npad / 2 <= rank, ErrorKind::kShapeMismatch,
         "padding length {} is more than two times the input dimension {}", npad, rank);
  if (mode != PadMode::kConstant) {
    KCHECK(!value.has_value() || *value == 0.0, ErrorKind::kBadInput,
           "padding mode \"{}\" doesn't take in value argument", name);
    const int64_t pdims = npad / 2;
    KCHECK(pdims >= 1 && pdims <= 3 && (rank == pdims + 1 || rank == pdims + 2),
           ErrorKind::kShapeMismatch,
           "padding size {} is not supported for {}D input in mode \"{}\" (2 pads 2D/3D input, "
           "4 pads 3D/4D, 6 pads 4D/5D)",
           npad, rank, name);
  }
  // Per dim: output size and the source offset (or -1) of each output position.
  Shape out_sizes = self.sizes();
  std::vector<std::vector<int64_t>> src_offsets(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = rank - 1 - d;  // pair index: pads[2k], pads[2k+1]
    const int64_t n = self.size(d);
    const int64_t before = 2 * k < npad ? pads[2 * k] : 0;
    const int64_t after = 2 * k < npad ? pads[2 * k + 1] : 0;
    if (2 * k < npad && mode != PadMode::kConstant) {
      KCHECK(before >= 0 && after >= 0, ErrorKind::kUnsupportedOp,
             "negative padding ({}, {}) at dim {} is only supported in constant mode", before,
             after, d);
      if (mode == PadMode::kReflect) {
        KCHECK(before < n && after < n, ErrorKind::kShapeMismatch,
               "padding size should be less than the corresponding input dimension, but got "
               "padding ({}, {}) at dimension {} of input {}",
               before, after, d, shape_string(self.sizes()));
      } else if (mode == PadMode::kCircular) {
        KCHECK(before <= n && after <= n, ErrorKind::kShapeMismatch,
               "padding value causes wrapping around more than once (padding ({}, {}) at "
               "dimension {} of size {})",
               before, after, d, n);
      } else {
        KCHECK(n > 0, ErrorKind::kShapeMismatch, "cannot replicate-pad dim {} of size 0", d);
      }
    }
    const auto size = checked_add(n, before);
    const auto total = size ? checked_add(*size, after) : std::nullopt;
    KCHECK(total.has_value() && *total >= 0, ErrorKind::kShapeMismatch,
           "the input size {}, plus padding {} and {} at dim {}, gives a negative or too large "
           "output size",
           n, before, after, d);
    out_sizes[d] = *total;
    src_offsets[d].resize(*total);
    for (int64_t o = 0; o < *total; ++o) {
      const int64_t i = pad_source(mode, o, before, n);
      src_offsets[d][o] = i < 0 ? -1 : i * self.stride(d);
    }
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, self.dtype(), out_sizes));
  if (out.numel() == 0) return Outputs{out};
  const Tensor fill = scalar_to_tensor(Scalar(value.value_or(0.0)), self.dtype());
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = self.data<T>();
    const T fill_value = *fill.data<T>();
    T* po = out.data<T>();
    // Odometer over the output (contiguous), tracking the summed source offset per dim.
    Shape index(rank, 0);
    const int64_t n = out.numel();
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t src = 0;
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t s = src_offsets[d][index[d]];
        if (s < 0) {
          inside = false;
          break;
        }
        src += s;
      }
      po[flat] = inside ? in[src] : fill_value;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < out_sizes[d]) break;
        index[d] = 0;
      }
    }
  });
  return Outputs{out};
}

Result<Tensor> diagonal_view(std::string_view op, const Tensor& self, int64_t offset, int64_t dim1,
                             int64_t dim2) {
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
  return self.view_as(sizes, strides, start);
}

namespace {

// diagonal(self, int offset=0, int dim1=0, int dim2=1): a view; the diagonal is the last dim.
Result<Outputs> diagonal(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t offset, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim1, a.integer(2));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim2, a.integer(3));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, diagonal_view(op, self, offset, dim1, dim2));
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> composite_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::to_dtype, to_dtype_op>(),
      entry<OpId::to_dtype_layout, to_dtype_layout>(),
      entry<OpId::to_device, to_device>(),
      entry<OpId::to_other, to_other>(),
      entry<OpId::type_as, type_as>(),
      entry<OpId::contiguous, contiguous>(),
      entry<OpId::dropout, dropout>(),
      entry<OpId::narrow, narrow>(),
      entry<OpId::chunk, chunk>(),
      entry<OpId::flatten_using_ints, flatten>(),
      entry<OpId::unflatten_int, unflatten>(),
      entry<OpId::view_as, reshape_as>(),
      entry<OpId::reshape_as, reshape_as>(),
      entry<OpId::expand_as, expand_as>(),
      entry<OpId::movedim_int, movedim>(),
      entry<OpId::movedim_intlist, movedim>(),
      entry<OpId::moveaxis_int, movedim>(),
      entry<OpId::moveaxis_intlist, movedim>(),
      entry<OpId::swapaxes, swapaxes>(),
      entry<OpId::swapdims, swapaxes>(),
      entry<OpId::diagonal, diagonal>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
