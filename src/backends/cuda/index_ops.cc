// Host side of the index ops: the CPU kernels' argument checks and shapes, masks turned into
// coordinates on the device (nonzero), the advanced-index parameter block with a dense
// innermost row fused into wide units, and the launch sequences: read; validate + (winners +)
// write (one in-place index position: the write alone, which checks it); validate +
// accumulate; gather; validate + scatter.
#include "backends/cuda/index_ops.h"

#include <algorithm>
#include <cstring>

#include "backends/common/args.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/index_kernels.h"
#include "backends/cuda/indexing.h"
#include "tensor/indexing.h"

namespace splice::cuda {

namespace {

constexpr unsigned kThreads = 256;

Shape sizes_of(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

// t viewed as 1-D of size 1 when 0-d (PyTorch's ensure_nonempty_dim).
DeviceTensor at_least_1d(const DeviceTensor& t) {
  if (t.rank > 0) return t;
  DeviceTensor v = t;
  v.rank = 1;
  v.sizes[0] = 1;
  v.strides[0] = 1;
  return v;
}

bool same_view(const DeviceTensor& a, const DeviceTensor& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.sizes[d] != b.sizes[d] || (a.sizes[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

Result<void> check_out(std::string_view op, const DeviceTensor& out, DType dtype,
                       const Shape& sizes) {
  SPLICE_CHECK_OR_RETURN(out.dtype == dtype && sizes_of(out) == sizes, ErrorKind::kShapeMismatch,
                         "{}: the output is {}{} but the result is {}{}", op, dtype_name(out.dtype),
                         shape_string(sizes_of(out)), dtype_name(dtype), shape_string(sizes));
  return ok_result();
}

Result<void> check_index_dtype(std::string_view op, const DeviceTensor& index, bool allow_int32) {
  KCHECK(index.dtype == DType::kInt64 || (allow_int32 && index.dtype == DType::kInt32),
         ErrorKind::kBadInput, "expected an {} index, got {}",
         allow_int32 ? "int64 or int32" : "int64", dtype_name(index.dtype));
  return ok_result();
}

// The broadcast of two shapes, with the CPU's message.
Result<Shape> broadcast(std::string_view op, const Shape& a, const Shape& b) {
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

// Strides of t aligned to `shape` (t broadcasts to it): 0 on new or expanded dims.
void broadcast_strides(const DeviceTensor& t, const Shape& shape, int64_t* strides) {
  const int rank = static_cast<int>(shape.size());
  const int lead = rank - t.rank;
  for (int i = 0; i < rank; ++i) {
    strides[i] = 0;
    if (i < lead) continue;
    const int64_t s = t.sizes[i - lead];
    strides[i] = (s == 1 && shape[i] != 1) ? 0 : t.strides[i - lead];
  }
}

// The parameter block of an advanced-index launch. `other` walks the result dims (out for a
// read, values broadcast to the result for a write).
Result<AdvancedIndexParams> make_params(std::string_view op, const DeviceTensor& self,
                                        const ResolvedIndex& r, const DeviceTensor& other,
                                        bool wrap, const LaunchContext& ctx) {
  SPLICE_CHECK_OR_RETURN(
      self.rank <= kMaxDims && r.result_shape.size() <= kMaxDims && r.bshape.size() <= kMaxDims,
      ErrorKind::kUnsupportedOp, "{}: more than {} dims in self, the indices or the result", op,
      kMaxDims);
  AdvancedIndexParams p;
  p.rank = static_cast<int32_t>(r.result_shape.size());
  p.brank = static_cast<int32_t>(r.bshape.size());
  p.self_rank = self.rank;
  p.wrap = wrap ? 1 : 0;
  p.numel = 1;
  for (int i = 0; i < p.rank; ++i) {
    p.sizes[i] = r.result_shape[i];
    p.result_dim[i] = r.result_dim[i];
    p.numel *= r.result_shape[i];
  }
  p.bnumel = 1;
  for (int j = 0; j < p.brank; ++j) {
    p.bsizes[j] = r.bshape[j];
    p.bnumel *= r.bshape[j];
  }
  int64_t key_stride = 1;
  for (int d = self.rank - 1; d >= 0; --d) {
    p.self_sizes[d] = self.sizes[d];
    p.self_strides[d] = self.strides[d];
    if (r.per_dim[d]) {
      p.key_strides[d] = key_stride;
      key_stride *= self.sizes[d];
    }
  }
  for (int d = 0; d < self.rank; ++d) {
    if (!r.per_dim[d]) continue;
    const DeviceTensor& ix = *r.per_dim[d];
    p.index[d].data = ix.data;
    p.index[d].is_int32 = ix.dtype == DType::kInt32 ? 1 : 0;
    broadcast_strides(ix, r.bshape, p.index[d].strides);
  }
  broadcast_strides(other, r.result_shape, p.other_strides);
  p.self = self.data;
  p.other = other.data;
  p.error_word = ctx.error_word;
  p.site = ctx.site;
  p.dtype = static_cast<int32_t>(self.dtype);
  return p;
}

// Fuses a dense innermost row (stride 1 in self and other) into units of up to 16 bytes when
// every pointer and stride allows it; returns the unit size in bytes.
int fuse_units(AdvancedIndexParams& p, int esize) {
  if (p.rank == 0) return esize;
  const int r = p.rank - 1;
  const int s = p.result_dim[r];
  if (s < 0 || p.self_strides[s] != 1 || p.other_strides[r] != 1) return esize;
  const int64_t bytes = p.sizes[r] * esize;
  for (int w : {16, 8, 4, 2}) {
    if (w <= esize || bytes % w != 0) continue;
    if (reinterpret_cast<uintptr_t>(p.self) % w || reinterpret_cast<uintptr_t>(p.other) % w)
      continue;
    const int64_t factor = w / esize;
    bool ok = true;
    for (int d = 0; d < p.self_rank && ok; ++d) ok = d == s || p.self_strides[d] % factor == 0;
    for (int k = 0; k < p.rank && ok; ++k) ok = k == r || p.other_strides[k] % factor == 0;
    if (!ok) continue;
    for (int d = 0; d < p.self_rank; ++d)
      if (d != s) p.self_strides[d] /= factor;
    for (int k = 0; k < p.rank; ++k)
      if (k != r) p.other_strides[k] /= factor;
    p.sizes[r] /= factor;
    p.numel /= factor;
    return w;
  }
  return esize;
}

Result<void> require_error_word(std::string_view op, const LaunchContext& ctx) {
  SPLICE_CHECK_OR_RETURN(ctx.error_word != nullptr, ErrorKind::kInternal,
                         "{}: index launches need an error word", op);
  return ok_result();
}

Result<void> run_read(std::string_view op, const DeviceTensor& out, const DeviceTensor& self,
                      const ResolvedIndex& r, bool wrap, const LaunchContext& ctx) {
  SPLICE_TRY(require_error_word(op, ctx));
  SPLICE_TRY(check_out(op, out, self.dtype, r.result_shape));
  SPLICE_ASSIGN_OR_RETURN(AdvancedIndexParams p, make_params(op, self, r, out, wrap, ctx));
  if (p.numel == 0) return ok_result();
  const int unit = fuse_units(p, dtype_size(self.dtype));
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  SPLICE_CUDA_CHECK(launch_index_read(p, unit, grid_blocks(p.numel, kThreads, device), ctx.stream));
  return ok_result();
}

// Writes (or accumulates) `values` (already of self's dtype) into out at the indexed places;
// out is self or becomes a copy of it first.
Result<void> run_write(std::string_view op, const DeviceTensor& out, const DeviceTensor& self,
                       const ResolvedIndex& r, const DeviceTensor& values, bool accumulate,
                       const Scalar& alpha, bool wrap, const LaunchContext& ctx) {
  SPLICE_TRY(require_error_word(op, ctx));
  SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(self)));
  SPLICE_ASSIGN_OR_RETURN(AdvancedIndexParams p, make_params(op, out, r, values, wrap, ctx));
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  // Every index first: a bad one must leave out untouched (the copy of self included). One
  // index position written in place (a KV-cache row at a position) needs no pass of its own:
  // every thread of the write reads that same position, so all of them find it bad and write
  // nothing, or none does — the write kernel checks it (one launch instead of two per write).
  const bool checked_by_write = p.bnumel == 1 && p.numel > 0 && !accumulate && same_view(out, self);
  if (p.bnumel > 0 && !checked_by_write) {
    SPLICE_CUDA_CHECK(
        launch_index_validate(p, grid_blocks(p.bnumel, kThreads, device), ctx.stream));
  }
  if (!same_view(out, self)) SPLICE_TRY(copy_cast(out, self, ctx));
  if (p.numel == 0) return ok_result();
  if (accumulate) {
    if (alpha.is_double()) {
      p.alpha_float = alpha.to_double();
    } else {
      p.alpha_int = alpha.to_int();
      p.alpha_float = static_cast<double>(alpha.to_int());
    }
    int64_t rows = 1;
    for (int k = 0; k < p.rank; ++k)
      if (p.result_dim[k] >= 0) rows *= p.sizes[k];
    SPLICE_CUDA_CHECK(launch_index_accumulate(p, grid_blocks(rows, kThreads, device), ctx.stream));
    return ok_result();
  }
  if (p.bnumel > 1) {
    SPLICE_CHECK_OR_RETURN(r.winner != nullptr, ErrorKind::kInternal,
                           "{}: a write with {} index positions needs its winner table", op,
                           p.bnumel);
    SPLICE_CHECK_OR_RETURN(p.bnumel <= INT32_MAX, ErrorKind::kUnsupportedOp,
                           "{}: {} index positions exceed the 2^31 one write takes", op, p.bnumel);
    p.winner = r.winner;
    SPLICE_CUDA_CHECK(
        cudaMemsetAsync(r.winner, 0xFF, r.winner_entries * sizeof(int32_t), ctx.stream));
    SPLICE_CUDA_CHECK(launch_index_winners(p, grid_blocks(p.bnumel, kThreads, device), ctx.stream));
  }
  const int unit = fuse_units(p, dtype_size(self.dtype));
  SPLICE_CUDA_CHECK(
      launch_index_write(p, unit, grid_blocks(p.numel, kThreads, device), ctx.stream));
  return ok_result();
}

// Workspace for the winner table and a scratch slot after `before` bytes.
Result<void> reserve_write_space(std::string_view op, ResolvedIndex& r, const DeviceTensor& self,
                                 IndexPurpose purpose, size_t before, void*& base,
                                 const LaunchContext& ctx) {
  int64_t entries = 1;
  for (size_t d = 0; d < r.per_dim.size(); ++d)
    if (r.per_dim[d]) entries *= self.sizes[d];
  const size_t winner_bytes =
      purpose == IndexPurpose::kWrite ? align256(entries * sizeof(int32_t)) : 0;
  const size_t total = before + winner_bytes + 256;
  SPLICE_CHECK_OR_RETURN(ctx.workspace != nullptr, ErrorKind::kInternal,
                         "{}: this launch needs a workspace of {} bytes", op, total);
  SPLICE_ASSIGN_OR_RETURN(base, ctx.workspace->reserve(total, ctx.stream));
  char* p = static_cast<char*>(base) + before;
  if (winner_bytes > 0) {
    r.winner = reinterpret_cast<int32_t*>(p);
    r.winner_entries = entries;
    p += winner_bytes;
  }
  r.scratch = p;
  return ok_result();
}

// The result layout of an index list already turned into per-dim index tensors (the CPU's
// make_index after its masks): the index positions' dims go where the indexed dims are when
// those are adjacent, else in front.
Result<void> layout_result(std::string_view op, const DeviceTensor& self, ResolvedIndex& r) {
  std::vector<int> indexed;
  for (int d = 0; d < self.rank; ++d) {
    if (!r.per_dim[d]) continue;
    const Shape s = sizes_of(*r.per_dim[d]);
    if (indexed.empty()) {
      r.bshape = s;
    } else {
      SPLICE_ASSIGN_OR_RETURN(r.bshape, broadcast(op, r.bshape, s));
    }
    indexed.push_back(d);
  }
  bool adjacent = true;
  for (size_t i = 1; i < indexed.size(); ++i) adjacent &= indexed[i] == indexed[i - 1] + 1;
  auto push_bdims = [&] {
    for (size_t j = 0; j < r.bshape.size(); ++j) {
      r.result_shape.push_back(r.bshape[j]);
      r.result_dim.push_back(-static_cast<int32_t>(j) - 1);
    }
  };
  if (!adjacent) push_bdims();
  for (int d = 0; d < self.rank; ++d) {
    if (r.per_dim[d]) {
      if (adjacent && d == indexed.front()) push_bdims();
      continue;
    }
    r.result_shape.push_back(self.sizes[d]);
    r.result_dim.push_back(d);
  }
  return ok_result();
}

// The ResolvedIndex of one index tensor on one dim (index_select, index_copy, index_add:
// the index viewed 1-D; embedding: any shape at dim 0).
ResolvedIndex one_dim_index(const DeviceTensor& self, int64_t dim, const DeviceTensor& index) {
  ResolvedIndex r;
  r.per_dim.assign(self.rank, std::nullopt);
  r.per_dim[dim] = index;
  (void)layout_result("", self, r);  // one index tensor: no broadcast can fail
  return r;
}

}  // namespace

Result<ResolvedIndex> resolve_indices(std::string_view op, const DeviceTensor& self,
                                      std::span<const std::optional<DeviceTensor>> indices,
                                      IndexPurpose purpose, const LaunchContext& ctx) {
  const int64_t rank = self.rank;
  ResolvedIndex r;
  r.per_dim.assign(rank, std::nullopt);
  // Masks and their dims, as the CPU's make_index walks the list.
  struct Mask {
    DeviceTensor mask;
    int64_t first_dim;
  };
  std::vector<Mask> masks;
  int64_t cursor = 0;
  for (const auto& entry : indices) {
    const bool is_mask = entry && (entry->dtype == DType::kBool || entry->dtype == DType::kUInt8);
    const int64_t width = is_mask ? entry->rank : 1;
    KCHECK(cursor + width <= rank, ErrorKind::kOutOfRange,
           "too many indices for a tensor of rank {}", rank);
    if (!entry) {
      ++cursor;
      continue;
    }
    if (is_mask) {
      for (int64_t k = 0; k < entry->rank; ++k) {
        KCHECK(entry->sizes[k] == self.sizes[cursor + k], ErrorKind::kShapeMismatch,
               "the mask of shape {} does not match self's shape {} at dim {}",
               shape_string(sizes_of(*entry)), shape_string(sizes_of(self)), cursor + k);
      }
      masks.push_back({*entry, cursor});
      cursor += entry->rank;
      continue;
    }
    KCHECK(entry->dtype == DType::kInt64 || entry->dtype == DType::kInt32, ErrorKind::kBadInput,
           "index tensors must be int64, int32, bool or uint8, got {}", dtype_name(entry->dtype));
    r.per_dim[cursor++] = *entry;
  }
  // Workspace: each mask's coordinates and tile counts, then the write tables.
  size_t mask_bytes = 0;
  for (const Mask& m : masks) {
    const int64_t n = m.mask.numel();
    const int64_t tiles = (n + kNonzeroTile - 1) / kNonzeroTile;
    mask_bytes += align256(n * std::max<int64_t>(m.mask.rank, 1) * sizeof(int64_t)) +
                  align256((tiles + 1) * sizeof(int64_t));
  }
  // Mark the masks' dims so the winner table counts them.
  for (const Mask& m : masks)
    for (int64_t k = 0; k < m.mask.rank; ++k) r.per_dim[m.first_dim + k] = DeviceTensor{};
  void* base = nullptr;
  if (purpose != IndexPurpose::kRead || !masks.empty())
    SPLICE_TRY(reserve_write_space(op, r, self, purpose, mask_bytes, base, ctx));
  char* cursor_ptr = static_cast<char*>(base);
  for (const Mask& m : masks) {
    const int64_t n = m.mask.numel();
    const int k = std::max(m.mask.rank, 1);
    NonzeroParams np;
    np.rank = m.mask.rank;
    for (int d = 0; d < m.mask.rank; ++d) {
      np.sizes[d] = m.mask.sizes[d];
      np.strides[d] = m.mask.strides[d];
    }
    np.mask = static_cast<const uint8_t*>(m.mask.data);
    np.numel = n;
    np.tiles = (n + kNonzeroTile - 1) / kNonzeroTile;
    np.coords = reinterpret_cast<int64_t*>(cursor_ptr);
    cursor_ptr += align256(n * k * sizeof(int64_t));
    np.counts = reinterpret_cast<int64_t*>(cursor_ptr);
    cursor_ptr += align256((np.tiles + 1) * sizeof(int64_t));
    int64_t count = 0;
    if (n > 0) {
      SPLICE_CUDA_CHECK(launch_nonzero_count(np, ctx.stream));
      SPLICE_CUDA_CHECK(launch_nonzero_scan(np, ctx.stream));
      SPLICE_CUDA_CHECK(launch_nonzero_write(np, ctx.stream));
      // The count decides shapes: wait for it.
      SPLICE_CUDA_CHECK(cudaMemcpyAsync(&count, np.counts + np.tiles, sizeof(int64_t),
                                        cudaMemcpyDeviceToHost, ctx.stream));
      SPLICE_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    }
    for (int64_t j = 0; j < m.mask.rank; ++j) {
      DeviceTensor coords;
      coords.data = np.coords + j;
      coords.dtype = DType::kInt64;
      coords.rank = 1;
      coords.sizes[0] = count;
      coords.strides[0] = m.mask.rank;
      r.per_dim[m.first_dim + j] = coords;
    }
  }
  SPLICE_TRY(layout_result(op, self, r));
  return r;
}

Result<void> index_tensor(const DeviceTensor& out, const DeviceTensor& self,
                          const ResolvedIndex& resolved, const LaunchContext& ctx) {
  return run_read("aten.index.Tensor", out, self, resolved, true, ctx);
}

Result<void> index_put(const DeviceTensor& out, const DeviceTensor& self,
                       std::span<const std::optional<DeviceTensor>> indices,
                       const DeviceTensor& values, bool accumulate, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.index_put.default";
  KCHECK(values.dtype == self.dtype || values.numel() == 1, ErrorKind::kShapeMismatch,
         "values of dtype {} must have self's dtype {} (index_put casts only one-element values)",
         dtype_name(values.dtype), dtype_name(self.dtype));
  SPLICE_ASSIGN_OR_RETURN(
      ResolvedIndex r,
      resolve_indices(op, self, indices,
                      accumulate ? IndexPurpose::kAccumulate : IndexPurpose::kWrite, ctx));
  SPLICE_ASSIGN_OR_RETURN(Shape b, broadcast(op, sizes_of(values), r.result_shape));
  KCHECK(b == r.result_shape, ErrorKind::kShapeMismatch,
         "values of shape {} cannot be broadcast to the indexed shape {}",
         shape_string(sizes_of(values)), shape_string(r.result_shape));
  DeviceTensor v = values;
  if (values.dtype != self.dtype) {
    // One element of another dtype: converted into the scratch slot.
    DeviceTensor one;
    one.data = values.data;
    one.dtype = values.dtype;
    DeviceTensor converted;
    converted.data = r.scratch;
    converted.dtype = self.dtype;
    SPLICE_TRY(copy_cast(converted, one, ctx));
    v = converted;
  }
  return run_write(op, out, self, r, v, accumulate, Scalar(int64_t{1}), true, ctx);
}

Result<void> index_copy(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                        const DeviceTensor& index, const DeviceTensor& source,
                        const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.index_copy.default";
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  KCHECK(index.dtype == DType::kInt64 || index.dtype == DType::kInt32, ErrorKind::kBadInput,
         "index must be int64 or int32, got {}", dtype_name(index.dtype));
  KCHECK(index.rank <= 1, ErrorKind::kShapeMismatch, "index must be 0-d or 1-d, got shape {}",
         shape_string(sizes_of(index)));
  KCHECK(source.dtype == self.dtype, ErrorKind::kShapeMismatch,
         "source dtype {} must equal self's dtype {}", dtype_name(source.dtype),
         dtype_name(self.dtype));
  const DeviceTensor s = at_least_1d(self), src = at_least_1d(source), o = at_least_1d(out);
  Shape expected = sizes_of(s);
  expected[dim] = index.numel();
  KCHECK(sizes_of(src) == expected, ErrorKind::kShapeMismatch,
         "source of shape {} does not match the expected shape {} (self {}, {} indices on dim "
         "{})",
         shape_string(sizes_of(source)), shape_string(expected), shape_string(sizes_of(self)),
         index.numel(), dim);
  ResolvedIndex r = one_dim_index(s, dim, at_least_1d(index));
  void* base = nullptr;
  SPLICE_TRY(reserve_write_space(op, r, s, IndexPurpose::kWrite, 0, base, ctx));
  return run_write(op, o, s, r, src, false, Scalar(int64_t{1}), false, ctx);
}

Result<void> index_add(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                       const DeviceTensor& index, const DeviceTensor& source, const Scalar& alpha,
                       const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.index_add.default";
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  KCHECK(index.rank <= 1, ErrorKind::kShapeMismatch, "index must be 0-d or 1-D, got shape {}",
         shape_string(sizes_of(index)));
  KCHECK(source.dtype == self.dtype, ErrorKind::kShapeMismatch,
         "source dtype {} must equal self's dtype {}", dtype_name(source.dtype),
         dtype_name(self.dtype));
  KCHECK(is_floating(self.dtype) || !alpha.is_double(), ErrorKind::kBadInput,
         "for integral input tensors, alpha must not be a floating point number");
  const DeviceTensor s = at_least_1d(self), src = at_least_1d(source), o = at_least_1d(out);
  Shape expected = sizes_of(s);
  expected[dim] = index.numel();
  KCHECK(sizes_of(src) == expected, ErrorKind::kShapeMismatch,
         "source of shape {} does not match the expected shape {} (self {}, {} indices on dim "
         "{})",
         shape_string(sizes_of(source)), shape_string(expected), shape_string(sizes_of(self)),
         index.numel(), dim);
  SPLICE_TRY(check_index_dtype(op, index, true));
  const ResolvedIndex r = one_dim_index(s, dim, at_least_1d(index));
  return run_write(op, o, s, r, src, true, alpha, false, ctx);
}

Result<void> index_select(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                          const DeviceTensor& index, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.index_select.default";
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  KCHECK(index.rank <= 1, ErrorKind::kShapeMismatch, "index must be 0-d or 1-D, got shape {}",
         shape_string(sizes_of(index)));
  SPLICE_TRY(check_index_dtype(op, index, true));
  if (self.rank == 0) {
    KCHECK(index.numel() == 1, ErrorKind::kShapeMismatch,
           "a 0-d self takes exactly one index, got {}", index.numel());
    SPLICE_TRY(check_out(op, out, self.dtype, {}));
  }
  const DeviceTensor s = at_least_1d(self);
  const ResolvedIndex r = one_dim_index(s, dim, at_least_1d(index));
  return run_read(op, at_least_1d(out), s, r, false, ctx);
}

Result<void> embedding(const DeviceTensor& out, const DeviceTensor& weight,
                       const DeviceTensor& indices, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.embedding.default";
  KCHECK(weight.rank == 2, ErrorKind::kShapeMismatch, "weight must be 2-D, got shape {}",
         shape_string(sizes_of(weight)));
  SPLICE_TRY(check_index_dtype(op, indices, true));
  const ResolvedIndex r = one_dim_index(weight, 0, indices);
  return run_read(op, out, weight, r, false, ctx);
}

namespace {

// gather/scatter's shape rules (cpu/gather_scatter.cc check_gather_scatter_shapes).
Result<void> check_gather_scatter(std::string_view op, const DeviceTensor& self, int64_t dim,
                                  const DeviceTensor& index, const DeviceTensor* src) {
  const DeviceTensor s = at_least_1d(self), ix = at_least_1d(index);
  KCHECK(ix.rank == s.rank, ErrorKind::kShapeMismatch,
         "index of shape {} must have the same number of dims as self {}",
         shape_string(sizes_of(index)), shape_string(sizes_of(self)));
  const DeviceTensor sr = src ? at_least_1d(*src) : s;
  KCHECK(sr.rank == s.rank, ErrorKind::kShapeMismatch,
         "src of shape {} must have the same number of dims as self {}",
         shape_string(src ? sizes_of(*src) : sizes_of(self)), shape_string(sizes_of(self)));
  for (int d = 0; d < s.rank; ++d) {
    KCHECK(d == dim || ix.sizes[d] <= s.sizes[d], ErrorKind::kShapeMismatch,
           "index {} is larger than self {} at dim {}", shape_string(sizes_of(index)),
           shape_string(sizes_of(self)), d);
    KCHECK(!src || ix.sizes[d] <= sr.sizes[d], ErrorKind::kShapeMismatch,
           "index {} is larger than src {} at dim {}", shape_string(sizes_of(index)),
           shape_string(sizes_of(*src)), d);
  }
  SPLICE_CHECK_OR_RETURN(s.rank <= kMaxDims, ErrorKind::kUnsupportedOp,
                         "{}: {} dims exceed the {} CUDA kernels take", op, s.rank, kMaxDims);
  return ok_result();
}

GatherScatterParams gather_scatter_params(const DeviceTensor& self, int64_t dim,
                                          const DeviceTensor& index, const DeviceTensor& other,
                                          const LaunchContext& ctx) {
  const DeviceTensor s = at_least_1d(self), ix = at_least_1d(index), o = at_least_1d(other);
  GatherScatterParams p;
  p.rank = s.rank;
  p.dim = static_cast<int32_t>(dim);
  for (int d = 0; d < s.rank; ++d) {
    p.index_sizes[d] = ix.sizes[d];
    p.index_strides[d] = ix.strides[d];
    p.self_sizes[d] = s.sizes[d];
    p.self_strides[d] = s.strides[d];
    p.other_strides[d] = o.rank == s.rank ? o.strides[d] : 0;
  }
  p.index = static_cast<const int64_t*>(index.data);
  p.self = self.data;
  p.other = other.data;
  p.error_word = ctx.error_word;
  p.site = ctx.site;
  return p;
}

}  // namespace

Result<void> gather(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                    const DeviceTensor& index, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.gather.default";
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  SPLICE_TRY(check_gather_scatter(op, self, dim, index, nullptr));
  SPLICE_TRY(check_index_dtype(op, index, false));
  SPLICE_TRY(require_error_word(op, ctx));
  SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(index)));
  GatherScatterParams p = gather_scatter_params(self, dim, index, out, ctx);
  p.numel = index.numel();
  if (p.numel == 0) return ok_result();
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  SPLICE_CUDA_CHECK(
      launch_gather(p, dtype_size(self.dtype), grid_blocks(p.numel, kThreads, device), ctx.stream));
  return ok_result();
}

Result<void> scatter(const DeviceTensor& out, const DeviceTensor& self, int64_t dim,
                     const DeviceTensor& index, const DeviceTensor* src, const Scalar& value,
                     const LaunchContext& ctx) {
  const std::string_view op = src ? "aten.scatter.src" : "aten.scatter.value";
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.rank));
  if (src) {
    KCHECK(src->dtype == self.dtype, ErrorKind::kShapeMismatch,
           "src dtype {} must equal self's dtype {}", dtype_name(src->dtype),
           dtype_name(self.dtype));
  }
  SPLICE_TRY(check_gather_scatter(op, self, dim, index, src));
  SPLICE_TRY(check_index_dtype(op, index, false));
  SPLICE_TRY(require_error_word(op, ctx));
  SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(self)));
  GatherScatterParams p = gather_scatter_params(out, dim, index, src ? *src : out, ctx);
  if (!src) {
    SPLICE_ASSIGN_OR_RETURN(const Tensor v, backend::scalar_to_tensor(value, self.dtype));
    std::memcpy(&p.value, v.raw_data(), dtype_size(self.dtype));
    p.use_value = 1;
  }
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  const int64_t n = index.numel();
  if (n > 0) {
    p.numel = n;
    SPLICE_CUDA_CHECK(launch_scatter_validate(p, grid_blocks(n, kThreads, device), ctx.stream));
  }
  if (!same_view(out, self)) SPLICE_TRY(copy_cast(out, self, ctx));
  if (n == 0) return ok_result();
  p.numel = n / at_least_1d(index).sizes[dim];  // columns
  SPLICE_CUDA_CHECK(launch_scatter(p, dtype_size(self.dtype),
                                   grid_blocks(p.numel, kThreads, device), ctx.stream));
  return ok_result();
}

}  // namespace splice::cuda
