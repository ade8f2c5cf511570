// Coalescing of strided iterations, the 32-bit index test, broadcasting of operands onto an
// output's shape, and contiguity of DeviceTensors.
#include "backends/cuda/indexing.h"

#include <limits>

namespace splice::cuda {

void coalesce(StridedIteration& it) {
  const size_t n = it.strides.size();
  if (it.numel() == 0) {
    it.rank = 1;
    it.sizes[0] = 0;
    for (auto& s : it.strides) s[0] = 0;
    return;
  }
  // Drop size-1 dims.
  int rank = 0;
  for (int d = 0; d < it.rank; ++d) {
    if (it.sizes[d] == 1) continue;
    it.sizes[rank] = it.sizes[d];
    for (size_t k = 0; k < n; ++k) it.strides[k][rank] = it.strides[k][d];
    ++rank;
  }
  // Merge from the innermost dim outwards.
  int out = rank - 1;  // the dim currently being grown (kept at the back)
  for (int d = rank - 2; d >= 0; --d) {
    bool mergeable = true;
    for (size_t k = 0; k < n && mergeable; ++k)
      mergeable = it.strides[k][d] == it.strides[k][out] * it.sizes[out];
    if (mergeable) {
      it.sizes[out] *= it.sizes[d];
    } else {
      --out;
      it.sizes[out] = it.sizes[d];
      for (size_t k = 0; k < n; ++k) it.strides[k][out] = it.strides[k][d];
    }
  }
  // Shift the kept dims [out, rank) to the front.
  const int kept = rank == 0 ? 0 : rank - out;
  for (int d = 0; d < kept; ++d) {
    it.sizes[d] = it.sizes[out + d];
    for (size_t k = 0; k < n; ++k) it.strides[k][d] = it.strides[k][out + d];
  }
  it.rank = kept;
}

bool fits_int32(const StridedIteration& it) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (it.numel() > kMax) return false;
  for (const auto& s : it.strides) {
    int64_t hi = 0, lo = 0;
    for (int d = 0; d < it.rank; ++d) {
      if (it.sizes[d] == 0) return true;
      const __int128 reach = static_cast<__int128>(it.sizes[d] - 1) * s[d];
      if (reach > kMax || reach < -kMax) return false;
      (reach > 0 ? hi : lo) += static_cast<int64_t>(reach);
      if (hi > kMax || lo < -kMax) return false;
    }
  }
  return true;
}

bool make_iteration(const DeviceTensor& out, std::span<const DeviceTensor> inputs,
                    StridedIteration& it) {
  it.rank = out.rank;
  it.strides.assign(1 + inputs.size(), {});
  for (int d = 0; d < out.rank; ++d) {
    it.sizes[d] = out.sizes[d];
    it.strides[0][d] = out.strides[d];
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const DeviceTensor& in = inputs[k];
    if (in.rank > out.rank) return false;
    const int lead = out.rank - in.rank;
    for (int d = 0; d < out.rank; ++d) {
      if (d < lead) {
        it.strides[k + 1][d] = 0;
        continue;
      }
      const int64_t size = in.sizes[d - lead];
      if (size == out.sizes[d]) {
        it.strides[k + 1][d] = size == 1 ? 0 : in.strides[d - lead];
      } else if (size == 1) {
        it.strides[k + 1][d] = 0;
      } else {
        return false;
      }
    }
  }
  return true;
}

bool is_contiguous(const DeviceTensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.sizes[d] == 0) return true;
    if (t.sizes[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

DeviceTensor contiguous_tensor(void* data, DType dtype, std::span<const int64_t> sizes) {
  DeviceTensor t;
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int>(sizes.size());
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.sizes[d] = sizes[d];
    t.strides[d] = stride;
    stride *= sizes[d];
  }
  return t;
}

}  // namespace splice::cuda
