#pragma once
// Python indexing on tensor views, shared by every backend and the runtime: dims and select
// indices wrapped like PyTorch's, slice bounds as Python slices them, and the view of a base
// tensor that a slice or select write covers (metadata only: no element is touched). Errors
// start with `op`, the op whose arguments are being checked.

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "support/error.h"
#include "tensor/tensor.h"

namespace splice {

// dim normalised into [0, rank) (a 0-d tensor accepts -1 and 0 like PyTorch's wrap_scalar).
Result<int64_t> wrap_dim(std::string_view op, int64_t dim, int64_t rank);
// A select index in [-size, size) made non-negative (Python indexing); out of range is an
// error naming the index, dim and size.
Result<int64_t> wrap_index(std::string_view op, int64_t index, int64_t dim, int64_t size);
// Python slice bounds of [start, end) on a dim of `size`: None start = 0, None end = size,
// negatives add size, then clamp into [0, size]; end < start is an empty slice.
std::pair<int64_t, int64_t> slice_bounds(std::optional<int64_t> start, std::optional<int64_t> end,
                                         int64_t size);

// The view of `base` that slice_scatter(base, src, dim, start, end, step) writes, after
// checking that src (of `src_sizes`) has exactly its shape and step >= 1.
Result<Tensor> slice_write_view(std::string_view op, const Tensor& base, const Shape& src_sizes,
                                std::optional<int64_t> dim, std::optional<int64_t> start,
                                std::optional<int64_t> end, std::optional<int64_t> step);
// The view of `base` that select_scatter(base, src, dim, index) writes (dim dropped), after
// checking index and src's shape.
Result<Tensor> select_write_view(std::string_view op, const Tensor& base, const Shape& src_sizes,
                                 int64_t dim, int64_t index);

}  // namespace splice
