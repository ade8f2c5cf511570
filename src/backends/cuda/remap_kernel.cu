// The remap kernel (remap_kernel.h): one thread per output element in a grid-stride loop,
// coordinates from the linear index, each dim's source coordinate from its DimMap.
#include "backends/cuda/error_word.cuh"
#include "backends/cuda/remap_kernel.h"

namespace splice::cuda {

namespace {

template <typename Index>
__device__ __forceinline__ Index source_coord(const RemapDim& d, Index c, bool& use_fill) {
  const Index n = static_cast<Index>(d.src_size);
  const Index arg = static_cast<Index>(d.arg);
  switch (static_cast<DimMap>(d.map)) {
    case DimMap::kIdentity:
      return c;
    case DimMap::kFlip:
      return n - 1 - c;
    case DimMap::kRoll: {
      const Index s = c - arg;
      return s < 0 ? s + n : s;
    }
    case DimMap::kModulo:
      return c % n;
    case DimMap::kDivide:
      return c / arg;
    case DimMap::kPadConstant: {
      const Index s = c - arg;
      if (s < 0 || s >= n) use_fill = true;
      return s;
    }
    case DimMap::kPadReflect: {
      Index s = c - arg;
      if (s < 0) s = -s;
      if (s >= n) s = 2 * (n - 1) - s;
      return s;
    }
    case DimMap::kPadReplicate: {
      const Index s = c - arg;
      return s < 0 ? 0 : (s >= n ? n - 1 : s);
    }
    case DimMap::kPadCircular: {
      const Index s = (c - arg) % n;
      return s < 0 ? s + n : s;
    }
  }
  return c;
}

template <typename Unit, typename Index>
__global__ void __launch_bounds__(256) remap(const RemapParams p) {
  if (failed(p.error_word)) return;
  Unit* out = static_cast<Unit*>(p.out);
  const Unit* src = static_cast<const Unit*>(p.src);
  const Unit fill = static_cast<Unit>(p.fill);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel;
       i += step) {
    Index rest = static_cast<Index>(i);
    Index out_off = 0, src_off = 0, row = 0, col = 0;
    bool use_fill = false;
    const bool per_dim = p.flat == static_cast<int32_t>(FlatMap::kNone);
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < p.rank) {
        const RemapDim& dim = p.dims[d];
        const Index size = static_cast<Index>(dim.out_size);
        const Index c = rest % size;
        rest /= size;
        out_off += c * static_cast<Index>(dim.out_stride);
        if (per_dim)
          src_off += source_coord<Index>(dim, c, use_fill) * static_cast<Index>(dim.src_stride);
        if (d == p.rank - 1) col = c;
        if (d == p.rank - 2) row = c;
      }
    }
    if (!per_dim) {
      const Index n = static_cast<Index>(p.src_numel);
      const Index arg = static_cast<Index>(p.flat_arg);
      Index j;
      if (p.flat == static_cast<int32_t>(FlatMap::kRoll)) {
        j = static_cast<Index>(i) - arg;
        if (j < 0) j += n;
      } else {
        j = static_cast<Index>(i) / arg;
      }
#pragma unroll
      for (int d = kMaxDims - 1; d >= 0; --d) {
        if (d < p.src_rank) {
          const Index size = static_cast<Index>(p.dims[d].src_size);
          src_off += (j % size) * static_cast<Index>(p.dims[d].src_stride);
          j /= size;
        }
      }
    }
    if (p.tri != 0) {
      const int64_t k = static_cast<int64_t>(col) - static_cast<int64_t>(row);
      const bool keep = p.tri == 1 ? k <= p.diagonal : k >= p.diagonal;
      if (!keep) {
        out[out_off] = Unit(0);
        continue;
      }
    }
    out[out_off] = use_fill ? fill : src[src_off];
  }
}

template <typename Unit>
cudaError_t launch(const RemapParams& p, bool index32, unsigned blocks, cudaStream_t stream) {
  if (index32) {
    remap<Unit, int32_t><<<blocks, 256, 0, stream>>>(p);
  } else {
    remap<Unit, int64_t><<<blocks, 256, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_remap(const RemapParams& params, int element_size, bool index32, unsigned blocks,
                         cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return launch<uint8_t>(params, index32, blocks, stream);
    case 2:
      return launch<uint16_t>(params, index32, blocks, stream);
    case 4:
      return launch<uint32_t>(params, index32, blocks, stream);
    case 8:
      return launch<uint64_t>(params, index32, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace splice::cuda
