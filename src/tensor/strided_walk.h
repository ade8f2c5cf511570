#pragma once
// for_each_offset: walks a shape, innermost dim fastest, and hands the callback one element
// offset per operand (each operand with its own strides, 0 on broadcast dims). The host
// loop every strided copy or conversion of host tensors is built on.

#include <array>
#include <cstdint>

#include "tensor/tensor.h"

namespace splice {

template <size_t N, typename F>
void for_each_offset(const Shape& shape, const std::array<const int64_t*, N>& strides, F&& fn) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (int64_t s : shape)
    if (s <= 0) return;
  std::array<int64_t, N> base{};
  if (rank == 0) {
    fn(base);
    return;
  }
  Shape index(rank, 0);
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  while (true) {
    std::array<int64_t, N> off = base;
    for (int64_t i = 0; i < inner; ++i) {
      fn(off);
      for (size_t k = 0; k < N; ++k) off[k] += inner_stride[k];
    }
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace splice
