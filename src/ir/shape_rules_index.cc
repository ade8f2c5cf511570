// Shape rules of indexing, concatenation and writes: cat (legacy [0]-shaped operands skipped,
// dtypes promoted), diff (a cat along dim, n shorter) and stack; advanced indexing (index.Tensor:
// int index tensors broadcast and land in place of the indexed dims when those are adjacent, else
// in front; a bool mask is its nonzero(), whose length is a fresh symbol); index_select, gather,
// embedding; and the writes, which return self's type: slice_scatter and select_scatter with src
// exactly the written slice's shape, index_put with values broadcastable to the indexed shape,
// index_copy, scatter and index_add, with the dtype checks eager PyTorch's kernels make.
#include "ir/shape_rules_util.h"

#include <algorithm>

namespace splice::ir::rules {

namespace {

bool is_legacy_empty(const TensorType& t) { return t.rank() == 1 && t.sizes[0].constant() == 0; }

Result<Outputs> cat(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(auto tensors, a.tensor_list("tensors"));
  if (tensors.empty()) return a.error("torch.cat(): expected a non-empty list of tensors");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  std::vector<Operand> ops;
  const TensorType* first = nullptr;
  for (const TensorType* t : tensors) {
    ops.push_back(Operand{t, NumberKind::kInt});
    if (!first && !is_legacy_empty(*t)) first = t;
  }
  const DType dtype = result_dtype(ops, Promotion::kDefault);
  if (!first) return one(dtype, {SymExpr(0)});
  if (first->rank() == 0) return a.error("zero-dimensional tensor cannot be concatenated");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, first->rank(), false));
  Sizes out = first->sizes;
  std::vector<SymExpr> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorType& t = *tensors[i];
    if (is_legacy_empty(t)) continue;
    if (t.rank() != first->rank())
      return a.error("tensors must have the same number of dimensions: got {} and {} (tensor {})",
                     first->rank(), t.rank(), i);
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (d == dim) continue;
      SPLICE_TRY(a.require_equal(
          first->sizes[d], t.sizes[d],
          fmt::format("sizes of tensors must match except in dimension "
                      "{}: tensor {} has {}, expected {} at dim {}",
                      dim, i, t.sizes[d].to_string(), first->sizes[d].to_string(), d)));
    }
    parts.push_back(t.sizes[dim]);
  }
  out[dim] = a.env().simplify(SymExpr::make(SymOp::kAdd, parts));
  return one(dtype, std::move(out));
}

// diff: prepend, self and append concatenated along dim (dtypes promoted as cat does), then n
// differences of neighbours, each one shorter; n beyond the length stops at length 0, and
// n == 0 is self as it is, prepend and append ignored (ATen's diff).
Result<Outputs> diff(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t n, a.integer("n"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  if (self->rank() == 0) return a.error("diff expects input to be at least one-dimensional");
  if (n < 0) return a.error("order must be non-negative but got {}", n);
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  if (n == 0) return same_as(*self);
  std::vector<Operand> ops{Operand{self, NumberKind::kInt}};
  std::vector<SymExpr> parts{self->sizes[dim]};
  for (const char* name : {"prepend", "append"}) {
    SPLICE_ASSIGN_OR_RETURN(const TensorType* t, a.optional_tensor(name));
    if (t == nullptr) continue;
    if (t->rank() != self->rank())
      return a.error("diff expects prepend or append to be the same dimension as input");
    for (int64_t d = 0; d < self->rank(); ++d)
      if (d != dim)
        SPLICE_TRY(a.require_equal(
            self->sizes[d], t->sizes[d],
            fmt::format("diff expects the shape of tensor to prepend or append to match that of "
                        "input except along the differencing dimension; input.size({}) = {}, "
                        "but got tensor.size({}) = {}",
                        d, self->sizes[d].to_string(), d, t->sizes[d].to_string())));
    ops.push_back(Operand{t, NumberKind::kInt});
    parts.push_back(t->sizes[dim]);
  }
  Sizes out = self->sizes;
  const SymExpr length = SymExpr::make(SymOp::kAdd, parts);
  out[dim] = a.env().simplify(SymExpr::make(SymOp::kMax, {length - n, SymExpr(0)}));
  return one(result_dtype(ops, Promotion::kDefault), std::move(out));
}

Result<Outputs> stack(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(auto tensors, a.tensor_list("tensors"));
  if (tensors.empty()) return a.error("stack expects a non-empty list of tensors");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  const TensorType& first = *tensors[0];
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, first.rank() + 1, false));
  std::vector<Operand> ops;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorType& t = *tensors[i];
    ops.push_back(Operand{&t, NumberKind::kInt});
    if (t.rank() != first.rank())
      return a.error(
          "stack expects each tensor to be equal size, but got {} at entry 0 and {} at "
          "entry {}",
          sizes_string(first.sizes), sizes_string(t.sizes), i);
    for (int64_t d = 0; d < t.rank(); ++d)
      SPLICE_TRY(a.require_equal(first.sizes[d], t.sizes[d],
                                 fmt::format("stack expects each tensor to be equal size, but got "
                                             "{} at entry 0 and {} at entry {}",
                                             sizes_string(first.sizes), sizes_string(t.sizes), i)));
  }
  Sizes out = first.sizes;
  out.insert(out.begin() + dim, SymExpr(static_cast<int64_t>(tensors.size())));
  return one(result_dtype(ops, Promotion::kDefault), std::move(out));
}

// The shape self[indices] has (advanced indexing), for index.Tensor and index_put's values.
Result<Sizes> indexed_sizes(RuleArgs& a, const TensorType& self,
                            const std::vector<const TensorType*>& indices) {
  // Bool masks stand for their nonzero(): one index tensor of a fresh length per mask dim.
  std::vector<std::optional<Sizes>> expanded;
  for (const TensorType* t : indices) {
    if (t == nullptr) {
      expanded.emplace_back(std::nullopt);
      continue;
    }
    if (t->dtype == DType::kBool || t->dtype == DType::kUInt8) {
      const size_t at = expanded.size();
      if (at + t->rank() > static_cast<size_t>(self.rank()))
        return a.error("too many indices for a tensor of dimension {}", self.rank());
      for (int64_t d = 0; d < t->rank(); ++d)
        SPLICE_TRY(
            a.require_equal(t->sizes[d], self.sizes[at + d],
                            fmt::format("the shape of the mask {} does not match the shape "
                                        "of the indexed tensor {} at dim {}",
                                        sizes_string(t->sizes), sizes_string(self.sizes), at + d)));
      const SymExpr nnz = a.env().fresh_unbacked();
      for (int64_t d = 0; d < t->rank(); ++d) expanded.emplace_back(Sizes{nnz});
      continue;
    }
    if (t->dtype != DType::kInt64 && t->dtype != DType::kInt32)
      return a.error("tensors used as indices must be long, int, byte or bool tensors, got {}",
                     dtype_name(t->dtype));
    expanded.emplace_back(t->sizes);
  }
  if (expanded.size() > static_cast<size_t>(self.rank()))
    return a.error("too many indices for a tensor of dimension {} (got {})", self.rank(),
                   expanded.size());
  std::vector<const Sizes*> shapes;
  std::optional<size_t> first, last;
  for (size_t i = 0; i < expanded.size(); ++i) {
    if (!expanded[i]) continue;
    shapes.push_back(&*expanded[i]);
    if (!first) first = i;
    last = i;
  }
  if (!first) return self.sizes;
  SPLICE_ASSIGN_OR_RETURN(Sizes broadcast_shape, broadcast(a, shapes));
  bool adjacent = true;
  for (size_t i = *first; i <= *last; ++i) adjacent = adjacent && expanded[i].has_value();
  Sizes out;
  if (adjacent) {
    out.assign(self.sizes.begin(), self.sizes.begin() + *first);
    out.insert(out.end(), broadcast_shape.begin(), broadcast_shape.end());
  } else {
    out = broadcast_shape;
  }
  for (size_t d = adjacent ? *last + 1 : 0; d < static_cast<size_t>(self.rank()); ++d) {
    if (!adjacent && d < expanded.size() && expanded[d]) continue;
    out.push_back(self.sizes[d]);
  }
  return out;
}

Result<Outputs> index(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto indices, a.tensor_list("indices"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, indexed_sizes(a, *self, indices));
  return one(self->dtype, std::move(out));
}

Result<const TensorType*> index_tensor(RuleArgs& a, std::string_view name, bool int32_ok) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* index, a.tensor(name));
  if (index->dtype != DType::kInt64 && !(int32_ok && index->dtype == DType::kInt32))
    return a.error("{} has to be an int64{} tensor, got {}", name, int32_ok ? " or int32" : "",
                   dtype_name(index->dtype));
  if (index->rank() > 1) return a.error("{} must be 0-D or 1-D, got {}-D", name, index->rank());
  return index;
}

Result<Outputs> index_select(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* index, index_tensor(a, "index", true));
  if (self->rank() == 0) {
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kLe, {numel(index->sizes), 1}),
                         "index_select(): a 0-d input takes an index of at most one element"));
    return same_as(*self);
  }
  Sizes out = self->sizes;
  out[dim] = numel(index->sizes);
  return one(self->dtype, std::move(out));
}

Result<Outputs> gather(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* index, a.tensor("index"));
  if (index->dtype != DType::kInt64 && index->dtype != DType::kInt32)
    return a.error("gather(): expected dtype int32 or int64 for index, got {}",
                   dtype_name(index->dtype));
  if (std::max<int64_t>(index->rank(), 1) != std::max<int64_t>(self->rank(), 1))
    return a.error("gather(): index tensor must have the same number of dimensions as input");
  return one(self->dtype, index->sizes);
}

Result<Outputs> embedding(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* weight, a.tensor("weight"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* indices, a.tensor("indices"));
  if (weight->rank() != 2)
    return a.error("embedding: weight must be 2-D, got {}-D", weight->rank());
  if (!is_integral(indices->dtype))
    return a.error("embedding: indices must be an integer tensor, got {}",
                   dtype_name(indices->dtype));
  Sizes out = indices->sizes;
  out.push_back(weight->sizes[1]);
  return one(weight->dtype, std::move(out));
}

// ---- writes: self's type ----

// slice_scatter: src must have exactly the shape of the slice it replaces.
Result<Outputs> slice_scatter(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Operand src, a.operand("src"));
  if (self->rank() == 0) return a.error("slice_scatter: cannot slice the 0-d tensor self");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(auto start, a.optional_sym_int("start"));
  SPLICE_ASSIGN_OR_RETURN(auto end, a.optional_sym_int("end"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr step, a.sym_int("step"));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {step, 1}),
                       fmt::format("slice step must be positive, got {}", step.to_string())));
  Sizes slice = self->sizes;
  SPLICE_ASSIGN_OR_RETURN(slice[dim], slice_length(a, self->sizes[dim], start, end, step));
  if (src.tensor) {
    const std::string what = fmt::format("src has shape {} but the slice of self is {}",
                                         sizes_string(src.tensor->sizes), sizes_string(slice));
    if (src.tensor->rank() != self->rank()) return a.error("{}", what);
    for (int64_t d = 0; d < self->rank(); ++d)
      SPLICE_TRY(a.require_equal(src.tensor->sizes[d], slice[d], what));
  }
  return same_as(*self);
}

Result<Outputs> select_scatter(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Operand src, a.operand("src"));
  if (self->rank() == 0) return a.error("select_scatter: cannot select from the 0-d tensor self");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  SPLICE_ASSIGN_OR_RETURN(SymExpr index, a.sym_int("index"));
  const SymExpr& n = self->sizes[dim];
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kGe, {index, -n}),
                                                   SymExpr::make(SymOp::kLt, {index, n})}),
                       fmt::format("index {} is out of range for dim {} of size {}",
                                   index.to_string(), dim, n.to_string())));
  Sizes expected = self->sizes;
  expected.erase(expected.begin() + dim);
  if (src.tensor) {
    const std::string what = fmt::format(
        "src has shape {} but the selected slice of self (dim {} of {}) is {}",
        sizes_string(src.tensor->sizes), dim, sizes_string(self->sizes), sizes_string(expected));
    if (src.tensor->rank() != static_cast<int64_t>(expected.size())) return a.error("{}", what);
    for (size_t d = 0; d < expected.size(); ++d)
      SPLICE_TRY(a.require_equal(src.tensor->sizes[d], expected[d], what));
  }
  return same_as(*self);
}

// A tensor of exactly one element (rank 0 or every size the constant 1).
bool is_one_element(const TensorType& t) {
  return std::all_of(t.sizes.begin(), t.sizes.end(),
                     [](const SymExpr& s) { return s.constant() == 1; });
}

Result<void> require_same_dtype(RuleArgs& a, const TensorType& self, const TensorType& values,
                                std::string_view what, bool one_element_casts) {
  if (values.dtype == self.dtype) return ok_result();
  // index_put casts a one-element value (eager does too); the other writes never cast.
  if (one_element_casts && is_one_element(values)) return ok_result();
  return a.error(
      "{} has dtype {} but self has dtype {}; an index write needs equal dtypes{} "
      "(cast the values to {} first)",
      what, dtype_name(values.dtype), dtype_name(self.dtype),
      one_element_casts ? " unless the value has one element" : "", dtype_name(self.dtype));
}

Result<Outputs> index_put(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto indices, a.tensor_list("indices"));
  SPLICE_ASSIGN_OR_RETURN(Operand values, a.operand("values"));
  SPLICE_ASSIGN_OR_RETURN(Sizes indexed, indexed_sizes(a, *self, indices));
  if (values.tensor) {
    SPLICE_TRY(require_same_dtype(a, *self, *values.tensor, "values", true));
    SPLICE_TRY(require_expandable(a, values.tensor->sizes, indexed, "index_put's values"));
  }
  return same_as(*self);
}

Result<Outputs> index_copy(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* index, index_tensor(a, "index", false));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* source, a.tensor("source"));
  SPLICE_TRY(require_same_dtype(a, *self, *source, "source", false));
  Sizes expected = self->sizes;
  if (!expected.empty()) expected[dim] = numel(index->sizes);
  const std::string what = fmt::format(
      "index_copy: source has shape {}, expected {} (self {} with dim {} the index's "
      "length)",
      sizes_string(source->sizes), sizes_string(expected), sizes_string(self->sizes), dim);
  if (source->rank() != self->rank()) return a.error("{}", what);
  for (int64_t d = 0; d < self->rank(); ++d)
    SPLICE_TRY(a.require_equal(source->sizes[d], a.env().simplify(expected[d]), what));
  return same_as(*self);
}

Result<Outputs> scatter(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* index, a.tensor("index"));
  if (index->dtype != DType::kInt64 && index->dtype != DType::kInt32)
    return a.error("scatter(): expected dtype int32 or int64 for index, got {}",
                   dtype_name(index->dtype));
  if (a.has("src")) {
    SPLICE_ASSIGN_OR_RETURN(const TensorType* src, a.tensor("src"));
    if (src->dtype != self->dtype)
      return a.error("scatter(): expected self.dtype to be equal to src.dtype ({} vs {})",
                     dtype_name(self->dtype), dtype_name(src->dtype));
  }
  return same_as(*self);
}

Result<Outputs> index_add(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  SPLICE_TRY(index_tensor(a, "index", true));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* source, a.tensor("source"));
  if (source->dtype != self->dtype)
    return a.error("index_add(): self ({}) and source ({}) must have the same scalar type",
                   dtype_name(self->dtype), dtype_name(source->dtype));
  return same_as(*self);
}

// bucketize(self, boundaries, out_int32, right): self's shape (0-d for a Scalar self) in int64,
// or int32 with out_int32; boundaries must be 1-d (ATen's bucketize checks).
Result<Outputs> bucketize(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* boundaries, a.tensor("boundaries"));
  if (boundaries->rank() != 1)
    return a.error("boundaries tensor must be 1 dimension, but got dim({})", boundaries->rank());
  SPLICE_ASSIGN_OR_RETURN(Operand self, a.operand("self"));
  SPLICE_ASSIGN_OR_RETURN(bool out_int32, a.boolean("out_int32"));
  // ATen's kernel dispatches over the numeric types only.
  if (boundaries->dtype == DType::kBool ||
      (self.tensor != nullptr ? self.tensor->dtype == DType::kBool
                              : self.number == NumberKind::kBool))
    return a.error("\"bucketize\" not implemented for 'Bool'");
  return one(out_int32 ? DType::kInt32 : DType::kInt64,
             self.tensor != nullptr ? self.tensor->sizes : Sizes{});
}

constexpr RuleEntry kEntries[] = {
    {OpId::bucketize_Tensor, bucketize},
    {OpId::bucketize_Scalar, bucketize},
    {OpId::cat, cat},
    {OpId::diff, diff},
    {OpId::stack, stack},
    {OpId::index_Tensor, index},
    {OpId::_unsafe_index_Tensor, index},
    {OpId::index_select, index_select},
    {OpId::gather, gather},
    {OpId::embedding, embedding},
    {OpId::slice_scatter, slice_scatter},
    {OpId::select_scatter, select_scatter},
    {OpId::index_put, index_put},
    {OpId::index_copy, index_copy},
    {OpId::scatter_src, scatter},
    {OpId::scatter_value, scatter},
    {OpId::index_add, index_add},
};

}  // namespace

std::span<const RuleEntry> index_rules() { return kEntries; }

}  // namespace splice::ir::rules
