// Strided copy (by element size, with broadcast sources) and in-place scale: the helpers of
// the matmul family (see strided_copy.h). Grid-stride loops over dst's elements; offsets from
// the merged iteration space.
#include "backends/cuda/strided_copy.h"

#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_dtype.cuh"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/reduce_plan.h"
#include "tensor/tensor.h"

namespace splice::cuda {

namespace {

template <typename Word>
__global__ void copy_kernel(Word* dst, const Word* src, StridedOffsets<2> it, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    it.get(i, off);
    dst[off[0]] = src[off[1]];
  }
}

template <typename T>
__global__ void scale_kernel(T* dst, StridedOffsets<1> it, int64_t n, double beta) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t off = it.get0(i);
    if (beta == 0.0) {
      dst[off] = convert<T>(0);
    } else if constexpr (is_device_float_v<T>) {
      using M = opmath_t<T>;
      dst[off] = convert<T>(static_cast<M>(beta) * convert<M>(dst[off]));
    } else if constexpr (!std::is_same_v<T, bool>) {
      const uint64_t b = static_cast<uint64_t>(static_cast<int64_t>(beta));
      dst[off] = static_cast<T>(b * static_cast<uint64_t>(static_cast<int64_t>(dst[off])));
    }
  }
}

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>((n + 255) / 256, 1), 65535));
}

Shape shape_of(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

}  // namespace

Result<void> strided_copy(const DeviceTensor& dst, const DeviceTensor& src, cudaStream_t stream) {
  SPLICE_CHECK_OR_RETURN(
      dst.rank >= 0 && dst.rank <= kMaxDims && src.rank == dst.rank && src.dtype == dst.dtype,
      ErrorKind::kInternal, "strided_copy: src {} {} does not fit dst {} {}", dtype_name(src.dtype),
      shape_string(shape_of(src)), dtype_name(dst.dtype), shape_string(shape_of(dst)));
  Shape sizes = shape_of(dst);
  std::vector<int64_t> sd(dst.strides.begin(), dst.strides.begin() + dst.rank);
  std::vector<int64_t> ss(src.strides.begin(), src.strides.begin() + src.rank);
  for (int d = 0; d < dst.rank; ++d) {
    SPLICE_CHECK_OR_RETURN(src.sizes[d] == dst.sizes[d] || src.sizes[d] == 1, ErrorKind::kInternal,
                           "strided_copy: src {} does not broadcast to {}",
                           shape_string(shape_of(src)), shape_string(sizes));
    if (src.sizes[d] == 1) ss[d] = 0;
  }
  const int64_t n = shape_numel(sizes);
  if (n == 0) return ok_result();
  merge_dims(sizes, {&sd, &ss});
  StridedOffsets<2> it;
  it.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < it.rank; ++d) {
    it.sizes[d] = sizes[d];
    it.strides[0][d] = sd[d];
    it.strides[1][d] = ss[d];
  }
  switch (dtype_size(dst.dtype)) {
    case 1:
      copy_kernel<<<blocks_for(n), 256, 0, stream>>>(static_cast<uint8_t*>(dst.data),
                                                     static_cast<const uint8_t*>(src.data), it, n);
      break;
    case 2:
      copy_kernel<<<blocks_for(n), 256, 0, stream>>>(static_cast<uint16_t*>(dst.data),
                                                     static_cast<const uint16_t*>(src.data), it, n);
      break;
    case 4:
      copy_kernel<<<blocks_for(n), 256, 0, stream>>>(static_cast<uint32_t*>(dst.data),
                                                     static_cast<const uint32_t*>(src.data), it, n);
      break;
    default:
      copy_kernel<<<blocks_for(n), 256, 0, stream>>>(static_cast<uint64_t*>(dst.data),
                                                     static_cast<const uint64_t*>(src.data), it, n);
      break;
  }
  SPLICE_CUDA_CHECK(cudaGetLastError());
  return ok_result();
}

Result<void> scale_in_place(const DeviceTensor& dst, double beta, cudaStream_t stream) {
  SPLICE_CHECK_OR_RETURN(dst.rank >= 0 && dst.rank <= kMaxDims, ErrorKind::kInternal,
                         "scale_in_place: rank {}", dst.rank);
  Shape sizes = shape_of(dst);
  const int64_t n = shape_numel(sizes);
  if (n == 0 || beta == 1.0) return ok_result();
  std::vector<int64_t> sd(dst.strides.begin(), dst.strides.begin() + dst.rank);
  merge_dims(sizes, {&sd});
  StridedOffsets<1> it;
  it.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < it.rank; ++d) {
    it.sizes[d] = sizes[d];
    it.strides[0][d] = sd[d];
  }
  return dispatch_device_dtype(dst.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    scale_kernel<T><<<blocks_for(n), 256, 0, stream>>>(static_cast<T*>(dst.data), it, n, beta);
    SPLICE_CUDA_CHECK(cudaGetLastError());
    return ok_result();
  });
}

}  // namespace splice::cuda
