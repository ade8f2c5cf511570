// Shape rules of the view and shape ops: view/reshape with -1 inferred (infer_size), permute,
// transpose, squeeze/unsqueeze, expand, slice/select, the splits (split, split_with_sizes,
// unbind, chunk: one output per piece, counted from the node when the size is symbolic) and the
// CompositeImplicit views the training IR keeps (flatten, unflatten, view_as, reshape_as,
// expand_as, movedim, swapaxes, diagonal, narrow) and diagonal_scatter, diagonal's inverse.
// Every view keeps self's dtype; the size checks PyTorch makes (numel preserved, a size-1 dim to
// expand, an index in range) are requirements on the symbols.
#include "ir/shape_rules_util.h"

#include <algorithm>

namespace splice::ir::rules {

namespace {

// torch's infer_size: `shape` (one entry may be -1) for a tensor of `count` elements.
Result<Sizes> infer_size(RuleArgs& a, Sizes shape, const SymExpr& count) {
  std::optional<size_t> infer_at;
  std::vector<SymExpr> known;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].constant() == -1) {
      if (infer_at)
        return a.error("only one dimension can be inferred in shape {}", sizes_string(shape));
      infer_at = i;
      continue;
    }
    if (auto c = shape[i].constant(); c && *c < 0)
      return a.error("invalid shape dimension {} in {}", *c, sizes_string(shape));
    known.push_back(shape[i]);
  }
  ShapeEnv& env = a.env();
  const SymExpr product = env.simplify(numel(known));
  const std::string what = fmt::format("shape {} is invalid for an input of {} elements",
                                       sizes_string(shape), count.to_string());
  if (!infer_at) {
    SPLICE_TRY(a.require_equal(env.simplify(count), product, what));
    return shape;
  }
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kNe, {product, 0}),
                       fmt::format("cannot reshape a tensor of {} elements into shape {}: the "
                                   "unspecified dimension size -1 can be any value",
                                   count.to_string(), sizes_string(shape))));
  if (auto q = sym_exact_quotient(env.simplify(count), product)) {
    shape[*infer_at] = env.simplify(*q);
  } else {
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kEq, {py_mod(count, product), 0}), what));
    shape[*infer_at] = env.simplify(floor_div(count, product));
  }
  return shape;
}

Result<Outputs> view(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes shape, a.sym_list(a.has("size") ? "size" : "shape"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, infer_size(a, std::move(shape), numel(self->sizes)));
  return one(self->dtype, std::move(sizes));
}

Result<Outputs> permute_to(RuleArgs& a, const TensorType& self, const std::vector<int64_t>& dims) {
  if (static_cast<int64_t>(dims.size()) != self.rank())
    return a.error("permute dims {} do not match the input's rank {}", fmt::join(dims, ", "),
                   self.rank());
  Sizes out;
  std::vector<bool> seen(self.rank(), false);
  for (int64_t d : dims) {
    SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(a, d, self.rank(), false));
    if (seen[w]) return a.error("permute dims repeat dim {}", w);
    seen[w] = true;
    out.push_back(self.sizes[w]);
  }
  return one(self.dtype, std::move(out));
}

Result<Outputs> permute(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.int_list("dims"));
  return permute_to(a, *self, dims);
}

Result<Outputs> transpose_dims(RuleArgs& a, int64_t d0, int64_t d1) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(d0, wrap_dim(a, d0, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(d1, wrap_dim(a, d1, self->rank()));
  if (self->rank() == 0) return same_as(*self);
  Sizes out = self->sizes;
  std::swap(out[d0], out[d1]);
  return one(self->dtype, std::move(out));
}

Result<Outputs> transpose(RuleArgs& a) {
  const bool axes = a.has("axis0");
  SPLICE_ASSIGN_OR_RETURN(int64_t d0, a.integer(axes ? "axis0" : "dim0"));
  SPLICE_ASSIGN_OR_RETURN(int64_t d1, a.integer(axes ? "axis1" : "dim1"));
  return transpose_dims(a, d0, d1);
}

Result<Outputs> t(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() > 2) return a.error("t() expects a tensor with <= 2 dims, got {}", self->rank());
  if (self->rank() < 2) return same_as(*self);
  return transpose_dims(a, 0, 1);
}

// Tensor.T: every dim reversed (a permute).
Result<Outputs> numpy_T(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  std::vector<int64_t> dims(self->rank());
  for (int64_t d = 0; d < self->rank(); ++d) dims[d] = self->rank() - 1 - d;
  return permute_to(a, *self, dims);
}

// Tensor.mT: the last two dims swapped; eager refuses fewer than two.
Result<Outputs> mT(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() < 2)
    return a.error(
        "tensor.mT is only supported on matrices or batches of matrices. Got {}-D "
        "tensor.",
        self->rank());
  return transpose_dims(a, -2, -1);
}

Result<Outputs> unsqueeze(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank() + 1, false));
  Sizes out = self->sizes;
  out.insert(out.begin() + dim, SymExpr(1));
  return one(self->dtype, std::move(out));
}

// Drops the listed dims that are 1. A symbolic size the ranges do not show to be 1 stays,
// as PyTorch's size-oblivious squeeze keeps it.
Result<Outputs> squeeze_dims(RuleArgs& a, const TensorType& self,
                             const std::optional<std::vector<int64_t>>& dims) {
  std::vector<bool> drop(self.rank(), false);
  if (!dims) {
    std::fill(drop.begin(), drop.end(), true);
  } else {
    for (int64_t d : *dims) {
      SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(a, d, self.rank()));
      if (self.rank() > 0) drop[w] = true;
    }
  }
  Sizes out;
  for (int64_t d = 0; d < self.rank(); ++d) {
    const bool one_sized = a.env().decide(SymExpr::make(SymOp::kEq, {self.sizes[d], 1})) == true;
    if (!(drop[d] && one_sized)) out.push_back(self.sizes[d]);
  }
  return one(self.dtype, std::move(out));
}

Result<Outputs> squeeze(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (!a.has("dim")) return squeeze_dims(a, *self, std::nullopt);
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.int_list("dim"));
  return squeeze_dims(a, *self, dims);
}

Result<Sizes> expand_sizes(RuleArgs& a, const TensorType& self, const Sizes& size) {
  if (static_cast<int64_t>(size.size()) < self.rank())
    return a.error(
        "the number of sizes provided ({}) must be greater or equal to the number of "
        "dimensions in the tensor ({})",
        size.size(), self.rank());
  const size_t offset = size.size() - self.rank();
  Sizes out;
  for (size_t i = 0; i < size.size(); ++i) {
    const SymExpr& want = size[i];
    if (i < offset) {
      if (auto c = want.constant(); c && *c < 0)
        return a.error("the expanded size {} isn't allowed in a leading, non-existing dimension {}",
                       *c, i);
      out.push_back(want);
      continue;
    }
    const SymExpr& have = self.sizes[i - offset];
    if (want.constant() == -1) {
      out.push_back(have);
      continue;
    }
    if (!a.env().provably_equal(have, want)) {
      SPLICE_TRY(a.require(
          SymExpr::make(SymOp::kOr, {SymExpr::make(SymOp::kEq, {have, want}),
                                     SymExpr::make(SymOp::kEq, {have, 1})}),
          fmt::format("the expanded size {} must match the existing size {} at non-singleton "
                      "dimension {} (target sizes {}, tensor sizes {})",
                      want.to_string(), have.to_string(), i, sizes_string(size),
                      sizes_string(self.sizes))));
    }
    out.push_back(want);
  }
  return out;
}

Result<Outputs> expand(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("size"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, expand_sizes(a, *self, size));
  return one(self->dtype, std::move(out));
}

Result<Outputs> slice(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0) return a.error("slice() cannot be applied to a 0-dim tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(auto start, a.optional_sym_int("start"));
  SPLICE_ASSIGN_OR_RETURN(auto end, a.optional_sym_int("end"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr step, a.sym_int("step"));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {step, 1}),
                       fmt::format("slice step must be positive, got {}", step.to_string())));
  Sizes out = self->sizes;
  SPLICE_ASSIGN_OR_RETURN(out[dim], slice_length(a, self->sizes[dim], start, end, step));
  return one(self->dtype, std::move(out));
}

Result<Outputs> select(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0) return a.error("select() cannot be applied to a 0-dim tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(SymExpr index, a.sym_int("index"));
  const SymExpr& n = self->sizes[dim];
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kGe, {index, -n}),
                                                   SymExpr::make(SymOp::kLt, {index, n})}),
                       fmt::format("select(): index {} out of range for a tensor of size {} at "
                                   "dimension {}",
                                   index.to_string(), sizes_string(self->sizes), dim)));
  Sizes out = self->sizes;
  out.erase(out.begin() + dim);
  return one(self->dtype, std::move(out));
}

Result<Outputs> identity(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  return same_as(*self);
}

// Pieces of `sizes` along `dim`, one output each.
Outputs pieces(const TensorType& self, int64_t dim, const Sizes& sizes) {
  Outputs out;
  for (const SymExpr& s : sizes) {
    Sizes piece = self.sizes;
    piece[dim] = s;
    out.push_back(tensor_out(self.dtype, std::move(piece)));
  }
  return out;
}

Result<Outputs> split_with_sizes(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, a.sym_list("split_sizes"));
  for (const SymExpr& s : sizes)
    SPLICE_TRY(a.require(
        SymExpr::make(SymOp::kGe, {s, 0}),
        fmt::format("split_with_sizes expects non-negative sizes, got {}", sizes_string(sizes))));
  const SymExpr total = sizes.empty() ? SymExpr(0) : SymExpr::make(SymOp::kAdd, sizes);
  SPLICE_TRY(a.require_equal(
      a.env().simplify(total), self->sizes[dim],
      fmt::format("split_with_sizes expects split_sizes {} to sum exactly to the size of dim {}",
                  sizes_string(sizes), dim)));
  return pieces(*self, dim, sizes);
}

// The pieces of a split of `n` into `split`-sized chunks, the last one smaller. A static size
// decides their number; for a symbolic one, export fixed it, so the node's output count is
// taken and required to fit.
Result<Outputs> split_even(RuleArgs& a, const TensorType& self, int64_t dim, const SymExpr& split,
                           size_t count) {
  const SymExpr& n = self.sizes[dim];
  if (auto c = n.constant(); c && split.constant()) {
    const int64_t s = *split.constant();
    if (s == 0 && *c != 0)
      return a.error("split_size can only be 0 if the dimension size is 0, but got {}", *c);
    const int64_t pieces = (s == 0 || *c == 0) ? 1 : (*c - 1) / s + 1;
    // A node records every piece; more pieces than outputs is an archive that lies about the
    // split (and must not make the rule build that many outputs).
    if (pieces > static_cast<int64_t>(std::max<size_t>(count, 1)))
      return a.error("a split of size {} into pieces of {} gives {} outputs, the node has {}", *c,
                     s, pieces, count);
    count = static_cast<size_t>(pieces);
  }
  if (count == 0) return a.error("a split of a symbolic size needs its outputs recorded");
  const SymExpr k = static_cast<int64_t>(count);
  const SymExpr last = a.env().simplify(n - (k - 1) * split);
  SPLICE_TRY(
      a.require(SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kGe, {last, count == 1 ? 0 : 1}),
                                            SymExpr::make(SymOp::kLe, {last, split})}),
                fmt::format("a split of size {} into pieces of {} does not give {} outputs",
                            n.to_string(), split.to_string(), count)));
  Sizes sizes(count, split);
  sizes.back() = last;
  return pieces(self, dim, sizes);
}

Result<Outputs> split(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(SymExpr split_size, a.sym_int("split_size"));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {split_size, 0}),
                       "split expects split_size to be non-negative"));
  return split_even(a, *self, dim, split_size, a.output_count());
}

Result<Outputs> chunk(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0) return a.error("chunk expects at least a 1-dimensional tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t chunks, a.integer("chunks"));
  if (chunks <= 0) return a.error("chunk expects `chunks` to be greater than 0, got {}", chunks);
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  const SymExpr& n = self->sizes[dim];
  // An empty dim gives `chunks` empty pieces (split_with_sizes), as ATen's chunk.
  if (n.constant() == 0) {
    if (chunks > static_cast<int64_t>(std::max<size_t>(a.output_count(), 1)))
      return a.error("chunk of an empty dim into {} pieces, but the node has {} outputs", chunks,
                     a.output_count());
    return pieces(*self, dim, Sizes(chunks, SymExpr(0)));
  }
  // (size + chunks - 1) // chunks, spelled as ATen's chunk computes it.
  const SymExpr split_size = a.env().simplify(floor_div(n + (chunks - 1), chunks));
  return split_even(a, *self, dim, split_size, a.output_count());
}

Result<Outputs> unbind(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0) return a.error("unbind() cannot be applied to a 0-dim tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  size_t count = a.output_count();
  if (auto c = self->sizes[dim].constant()) {
    if (*c > static_cast<int64_t>(count))
      return a.error("unbind along dim {} gives {} outputs, the node has {}", dim, *c, count);
    count = static_cast<size_t>(*c);
  } else {
    SPLICE_TRY(a.require_equal(self->sizes[dim], static_cast<int64_t>(count),
                               fmt::format("unbind along dim {} gives one output per element, the "
                                           "node has {}",
                                           dim, count)));
  }
  Sizes piece = self->sizes;
  piece.erase(piece.begin() + dim);
  return Outputs(count, tensor_out(self->dtype, piece));
}

// as_strided(self, size, stride, storage_offset): `size` of self's dtype (the storage bounds
// are checked where the offsets are known, in its decomposition).
Result<Outputs> as_strided(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("size"));
  SPLICE_ASSIGN_OR_RETURN(Sizes stride, a.sym_list("stride"));
  if (size.size() != stride.size()) return a.error("mismatch in length of strides and shape");
  return one(self->dtype, std::move(size));
}

// meshgrid(tensors, indexing="ij"): n tensors of 0 or 1 dims, all of one dtype, give n outputs
// of the grid's shape (each input's length in turn); "xy" swaps the first two grid dims (ATen's
// meshgrid).
Result<Outputs> meshgrid(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(std::vector<const TensorType*> tensors, a.tensor_list("tensors"));
  if (tensors.empty()) return a.error("torch.meshgrid: Expected at least one tensor");
  const std::string indexing = a.has("indexing") ? a.string("indexing").value_or("") : "ij";
  if (indexing != "ij" && indexing != "xy")
    return a.error("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {}",
                   indexing);
  Sizes grid;
  for (const TensorType* t : tensors) {
    if (t == nullptr || t->rank() > 1)
      return a.error("torch.meshgrid: Expected 0D or 1D tensor in the tensor list");
    if (t->dtype != tensors[0]->dtype)
      return a.error(
          "torch.meshgrid: Expected all tensors in the tensor list to have the same "
          "dtype");
    grid.push_back(t->rank() == 0 ? SymExpr(1) : t->sizes[0]);
  }
  if (indexing == "xy" && grid.size() >= 2) std::swap(grid[0], grid[1]);
  Outputs out;
  for (const TensorType* t : tensors) out.push_back(tensor_out(t->dtype, grid));
  return out;
}

// tensor_split.sections(self, sections, dim): piece i holds ceil((n - i) / sections) elements
// (the first n % sections pieces one more than the rest, as ATen's tensor_split).
Result<Outputs> tensor_split_sections(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0)
    return a.error(
        "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
        "with 0 dims");
  SPLICE_ASSIGN_OR_RETURN(int64_t sections, a.integer("sections"));
  if (sections <= 0) return a.error("number of sections must be larger than 0, got {}", sections);
  if (sections > static_cast<int64_t>(std::max<size_t>(a.output_count(), 1)))
    return a.error("tensor_split into {} sections, but the node has {} outputs", sections,
                   a.output_count());
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  const SymExpr& n = self->sizes[dim];
  Sizes sizes;
  for (int64_t i = 0; i < sections; ++i)
    sizes.push_back(a.env().simplify(floor_div(n - i + (sections - 1), sections)));
  return pieces(*self, dim, sizes);
}

// tensor_split.indices(self, indices, dim): the slices [0:i0], [i0:i1], ..., [ik:], each with
// slice's own wrapping and clamping (ATen slices exactly so).
Result<Outputs> tensor_split_indices(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0)
    return a.error(
        "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
        "with 0 dims");
  SPLICE_ASSIGN_OR_RETURN(Sizes indices, a.sym_list("indices"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  const SymExpr& n = self->sizes[dim];
  Outputs out;
  std::optional<SymExpr> start = SymExpr(0);
  for (size_t i = 0; i <= indices.size(); ++i) {
    std::optional<SymExpr> end = i < indices.size() ? std::optional<SymExpr>(indices[i]) : n;
    Sizes piece = self->sizes;
    SPLICE_ASSIGN_OR_RETURN(piece[dim], slice_length(a, n, start, end, SymExpr(1)));
    out.push_back(tensor_out(self->dtype, std::move(piece)));
    start = end;
  }
  return out;
}

Result<Outputs> flatten(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t start, a.integer("start_dim"));
  SPLICE_ASSIGN_OR_RETURN(int64_t end, a.integer("end_dim"));
  SPLICE_ASSIGN_OR_RETURN(start, wrap_dim(a, start, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(end, wrap_dim(a, end, self->rank()));
  if (start > end)
    return a.error("flatten() has invalid args: start_dim ({}) cannot come after end_dim ({})",
                   start, end);
  if (self->rank() == 0) return one(self->dtype, {SymExpr(1)});
  Sizes out(self->sizes.begin(), self->sizes.begin() + start);
  out.push_back(
      a.env().simplify(numel(Sizes(self->sizes.begin() + start, self->sizes.begin() + end + 1))));
  out.insert(out.end(), self->sizes.begin() + end + 1, self->sizes.end());
  return one(self->dtype, std::move(out));
}

Result<Outputs> unflatten(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, a.sym_list("sizes"));
  if (sizes.empty()) return a.error("unflatten: sizes must be non-empty");
  const SymExpr size = self->rank() == 0 ? SymExpr(1) : self->sizes[dim];
  SPLICE_ASSIGN_OR_RETURN(Sizes inferred, infer_size(a, sizes, size));
  Sizes out = self->sizes;
  if (out.empty()) out.emplace_back(1);
  out.erase(out.begin() + dim);
  out.insert(out.begin() + dim, inferred.begin(), inferred.end());
  return one(self->dtype, std::move(out));
}

Result<Outputs> reshape_as(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* other, a.tensor("other"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, infer_size(a, other->sizes, numel(self->sizes)));
  return one(self->dtype, std::move(sizes));
}

Result<Outputs> expand_as(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* other, a.tensor("other"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, expand_sizes(a, *self, other->sizes));
  return one(self->dtype, std::move(out));
}

// movedim: source dims go to the destination positions; the others fill the remaining
// positions in their original order.
Result<Outputs> movedim(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto src, a.int_list("source"));
  SPLICE_ASSIGN_OR_RETURN(auto dst, a.int_list("destination"));
  if (src.size() != dst.size())
    return a.error(
        "movedim: source ({} dims) and destination ({} dims) must have the same "
        "number of dims",
        src.size(), dst.size());
  const int64_t rank = self->rank();
  if (rank == 0) {
    for (size_t i = 0; i < src.size(); ++i) {
      SPLICE_TRY(wrap_dim(a, src[i], rank));
      SPLICE_TRY(wrap_dim(a, dst[i], rank));
    }
    return same_as(*self);
  }
  std::vector<int64_t> perm(rank, -1);
  std::vector<bool> used(rank, false);
  for (size_t i = 0; i < src.size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(int64_t s, wrap_dim(a, src[i], rank));
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(a, dst[i], rank));
    if (used[s]) return a.error("movedim: repeated dim {} in source", s);
    if (perm[d] != -1) return a.error("movedim: repeated dim {} in destination", d);
    used[s] = true;
    perm[d] = s;
  }
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] != -1) continue;
    while (used[next]) ++next;
    perm[d] = next++;
  }
  return permute_to(a, *self, perm);
}

// The sizes of diagonal(self, offset, dim1, dim2): the other dims in order, then the
// diagonal's length (0 for an offset past either end).
Result<Sizes> diagonal_sizes(RuleArgs& a, const TensorType& self) {
  if (self.rank() < 2)
    return a.error("diagonal needs a tensor of at least 2 dims, got {}", self.rank());
  SPLICE_ASSIGN_OR_RETURN(int64_t offset, a.integer("offset"));
  SPLICE_ASSIGN_OR_RETURN(int64_t d1, a.integer("dim1"));
  SPLICE_ASSIGN_OR_RETURN(int64_t d2, a.integer("dim2"));
  SPLICE_ASSIGN_OR_RETURN(d1, wrap_dim(a, d1, self.rank()));
  SPLICE_ASSIGN_OR_RETURN(d2, wrap_dim(a, d2, self.rank()));
  if (d1 == d2) return a.error("diagonal dimensions cannot be identical {}, {}", d1, d2);
  const SymExpr& s1 = self.sizes[d1];
  const SymExpr& s2 = self.sizes[d2];
  const SymExpr len =
      offset >= 0 ? sym_max(0, sym_min(s1, s2 - offset)) : sym_max(0, sym_min(s1 + offset, s2));
  Sizes out;
  for (int64_t d = 0; d < self.rank(); ++d)
    if (d != d1 && d != d2) out.push_back(self.sizes[d]);
  out.push_back(a.env().simplify(len));
  return out;
}

Result<Outputs> diagonal(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, diagonal_sizes(a, *self));
  return one(self->dtype, std::move(out));
}

// diagonal_scatter(self, src, offset, dim1, dim2): self's type; src must have the diagonal's
// shape exactly (eager's message), and any dtype (it is copied in, cast to self's).
Result<Outputs> diagonal_scatter(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* src, a.tensor("src"));
  SPLICE_ASSIGN_OR_RETURN(Sizes slice, diagonal_sizes(a, *self));
  const std::string what = fmt::format(
      "expected src to have a size equal to the slice of self. src size = {}, slice "
      "size = {}",
      sizes_string(src->sizes), sizes_string(slice));
  if (src->rank() != static_cast<int64_t>(slice.size())) return a.error("{}", what);
  for (size_t d = 0; d < slice.size(); ++d)
    SPLICE_TRY(a.require_equal(src->sizes[d], slice[d], what));
  return one(self->dtype, self->sizes);
}

Result<Outputs> narrow(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0) return a.error("narrow() cannot be applied to a 0-dim tensor");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(SymExpr start, a.sym_int("start"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr length, a.sym_int("length"));
  const SymExpr& n = self->sizes[dim];
  SPLICE_TRY(
      a.require(SymExpr::make(SymOp::kGe, {length, 0}),
                fmt::format("narrow(): length must be non-negative, got {}", length.to_string())));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kGe, {start, -n}),
                                                   SymExpr::make(SymOp::kLe, {start, n})}),
                       fmt::format("narrow(): start {} is out of range for dim {} of size {}",
                                   start.to_string(), dim, n.to_string())));
  // start + (start < 0)*n is the wrapped start for either sign.
  const SymExpr wrapped = a.env().simplify(start + n * SymExpr::make(SymOp::kLt, {start, 0}));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kLe, {wrapped + length, n}),
                       fmt::format("narrow(): start ({}) + length ({}) exceeds dimension size ({})",
                                   wrapped.to_string(), length.to_string(), n.to_string())));
  Sizes out = self->sizes;
  out[dim] = length;
  return one(self->dtype, std::move(out));
}

constexpr RuleEntry kEntries[] = {
    {OpId::as_strided, as_strided},
    {OpId::meshgrid, meshgrid},
    {OpId::meshgrid_indexing, meshgrid},
    {OpId::tensor_split_sections, tensor_split_sections},
    {OpId::tensor_split_indices, tensor_split_indices},
    {OpId::view, view},
    {OpId::_unsafe_view, view},
    {OpId::reshape, view},
    {OpId::permute, permute},
    {OpId::transpose_int, transpose},
    {OpId::t, t},
    {OpId::numpy_T, numpy_T},
    {OpId::mT, mT},
    {OpId::unsqueeze, unsqueeze},
    {OpId::squeeze_dim, squeeze},
    {OpId::squeeze_dims, squeeze},
    {OpId::squeeze, squeeze},
    {OpId::expand, expand},
    {OpId::broadcast_to, expand},
    {OpId::slice_Tensor, slice},
    {OpId::select_int, select},
    {OpId::alias, identity},
    {OpId::detach, identity},
    {OpId::detach_, identity},
    {OpId::split_with_sizes, split_with_sizes},
    {OpId::split_Tensor, split},
    {OpId::unbind_int, unbind},
    {OpId::chunk, chunk},
    {OpId::flatten_using_ints, flatten},
    {OpId::unflatten_int, unflatten},
    {OpId::view_as, reshape_as},
    {OpId::reshape_as, reshape_as},
    {OpId::expand_as, expand_as},
    {OpId::movedim_int, movedim},
    {OpId::movedim_intlist, movedim},
    {OpId::moveaxis_int, movedim},
    {OpId::moveaxis_intlist, movedim},
    {OpId::swapaxes, transpose},
    {OpId::swapdims, transpose},
    {OpId::diagonal, diagonal},
    {OpId::diagonal_scatter, diagonal_scatter},
    {OpId::narrow, narrow},
};

}  // namespace

std::span<const RuleEntry> view_rules() { return kEntries; }

}  // namespace splice::ir::rules
