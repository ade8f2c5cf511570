#pragma once
// Strided iteration and broadcasting shared by the kernels: for_each_offset walks a shape and
// hands the callback one element offset per operand (each operand with its own strides, 0 on
// broadcast dims), innermost dim fastest. binary_loop/unary_loop take a flat, multi-threaded
// path when every operand is contiguous with the output's sizes, and a row-wise one
// (for_each_row) when every innermost dim is dense or broadcast.

#include <array>
#include <cstdint>
#include <string_view>

#include "backends/cpu/parallel.h"
#include "support/error.h"
#include "tensor/strided_walk.h"
#include "tensor/tensor.h"

namespace splice::cpu {

// The broadcast of two shapes (numpy rules), or kShapeMismatch naming op and both shapes.
Result<Shape> broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);
// t's strides aligned to `shape` (which t broadcasts to): 0 on new or size-1-expanded dims.
Shape broadcast_strides(const Tensor& t, const Shape& shape);
// t viewed with `shape` through broadcast_strides (no copy).
Tensor broadcast_to(const Tensor& t, const Shape& shape);

}  // namespace splice::cpu

namespace splice::cpu {

// Whether a has out's sizes and both are contiguous, so element i of each is at offset i.
inline bool same_contiguous(const Tensor& out, const Tensor& a) {
  return a.sizes() == out.sizes() && a.is_contiguous() && out.is_contiguous();
}

// Row-wise iteration for strided operands whose innermost dim is dense (stride 1) or
// broadcast (stride 0), e.g. a slice x[..., :h] times a broadcast cos: calls
// row(offsets, length) for each innermost row, rows split across threads, so the row loop is
// a plain loop the compiler vectorises. Returns false (doing nothing) when the operands do not
// have that form; the caller then walks element by element.
template <size_t N, typename RowFn>
bool for_each_row(const Shape& shape, const std::array<const int64_t*, N>& strides, RowFn&& row) {
  const size_t rank = shape.size();
  if (rank == 0) return false;
  for (size_t k = 0; k < N; ++k)
    if (strides[k][rank - 1] != 0 && strides[k][rank - 1] != 1) return false;
  if (strides[0][rank - 1] != 1) return false;  // the output's row must be dense
  const int64_t inner = shape[rank - 1];
  if (inner <= 0) return true;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= shape[d];
  if (rows <= 0) return true;
  parallel_for(rows, std::max<int64_t>(kParallelGrain / inner, 1), [&](int64_t begin, int64_t end) {
    // The chunk's first row by division, then an odometer over the outer dims: rows are
    // often short (a 32-wide half of a head), so per-row divisions would dominate.
    Shape index(rank - 1, 0);
    std::array<int64_t, N> off{};
    int64_t rest = begin;
    for (size_t d = rank - 1; d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
      for (size_t k = 0; k < N; ++k) off[k] += index[d] * strides[k][d];
    }
    for (int64_t r = begin; r < end; ++r) {
      row(off, inner);
      for (size_t d = rank - 1; d-- > 0;) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
        if (++index[d] < shape[d]) break;
        for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * shape[d];
        index[d] = 0;
      }
    }
  });
  return true;
}

// out[i] = fn(a[i], b[i]) over out's shape, with a and b broadcast to it; element types are
// the template arguments (callers have already converted the operands' dtypes).
template <typename TO, typename TA, typename TB, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, F&& fn) {
  if (same_contiguous(out, a) && same_contiguous(out, b)) {
    // Flat fast path, split across threads when big (fn must be safe to call concurrently).
    TO* po = out.data<TO>();
    const TA* pa = a.data<TA>();
    const TB* pb = b.data<TB>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = fn(pa[i], pb[i]);
    });
    return;
  }
  const Shape sa = broadcast_strides(a, out.sizes());
  const Shape sb = broadcast_strides(b, out.sizes());
  TO* po = out.data<TO>();
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  const std::array<const int64_t*, 3> strides = {out.strides().data(), sa.data(), sb.data()};
  const bool rows =
      for_each_row<3>(out.sizes(), strides, [&](const std::array<int64_t, 3>& o, int64_t n) {
        TO* ro = po + o[0];
        const TA* ra = pa + o[1];
        const TB* rb = pb + o[2];
        const int64_t ia = sa.back(), ib = sb.back();
        if (ia == 1 && ib == 1) {
          for (int64_t i = 0; i < n; ++i) ro[i] = fn(ra[i], rb[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) ro[i] = fn(ra[i * ia], rb[i * ib]);
        }
      });
  if (rows) return;
  for_each_offset<3>(out.sizes(), {out.strides().data(), sa.data(), sb.data()},
                     [&](const std::array<int64_t, 3>& o) { po[o[0]] = fn(pa[o[1]], pb[o[2]]); });
}

// out[i] = fn(a[i]) with a broadcast to out's shape.
template <typename TO, typename TA, typename F>
void unary_loop(const Tensor& out, const Tensor& a, F&& fn) {
  if (same_contiguous(out, a)) {
    TO* po = out.data<TO>();
    const TA* pa = a.data<TA>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = fn(pa[i]);
    });
    return;
  }
  const Shape sa = broadcast_strides(a, out.sizes());
  TO* po = out.data<TO>();
  const TA* pa = a.data<TA>();
  const std::array<const int64_t*, 2> strides = {out.strides().data(), sa.data()};
  const bool rows =
      for_each_row<2>(out.sizes(), strides, [&](const std::array<int64_t, 2>& o, int64_t n) {
        TO* ro = po + o[0];
        const TA* ra = pa + o[1];
        if (sa.back() == 1) {
          for (int64_t i = 0; i < n; ++i) ro[i] = fn(ra[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) ro[i] = fn(ra[0]);
        }
      });
  if (rows) return;
  for_each_offset<2>(out.sizes(), {out.strides().data(), sa.data()},
                     [&](const std::array<int64_t, 2>& o) { po[o[0]] = fn(pa[o[1]]); });
}

// Calls fn(coord) for each coordinate of shape in row-major order.
template <typename F>
void for_each_coord(const Shape& shape, F&& fn) {
  for (int64_t s : shape)
    if (s <= 0) return;
  Shape coord(shape.size(), 0);
  while (true) {
    fn(coord);
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace splice::cpu
