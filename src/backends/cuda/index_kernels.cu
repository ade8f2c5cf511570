// The index ops' kernels (index_kernels.h): advanced indexing (validate, read, winners,
// write, accumulate), gather/scatter along a dim, and nonzero. Every index is bounds-checked
// on the device; a failure goes to the error word and the element is skipped.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/dependent_launch.cuh"
#include "backends/cuda/error_word.cuh"
#include "backends/cuda/index_kernels.h"
#include "support/dtype.h"

namespace splice::cuda {

namespace {

constexpr unsigned kThreads = 256;

struct alignas(16) Unit16 {
  uint64_t a, b;
};

__device__ __forceinline__ int64_t load_index(const IndexOperand& ix, int64_t offset) {
  return ix.is_int32 ? static_cast<const int32_t*>(ix.data)[offset]
                     : static_cast<const int64_t*>(ix.data)[offset];
}

// The bshape coordinates of index position b.
__device__ __forceinline__ void bcoords(const AdvancedIndexParams& p, int64_t b, int64_t* c) {
#pragma unroll
  for (int j = kMaxDims - 1; j >= 0; --j) {
    if (j < p.brank) {
      c[j] = b % p.bsizes[j];
      b /= p.bsizes[j];
    }
  }
}

// Adds the indexed dims' contribution for bshape coordinates `bc` to self_off (and key);
// false after recording the failure when an index is out of range.
__device__ __forceinline__ bool add_indexed(const AdvancedIndexParams& p, const int64_t* bc,
                                            int64_t& self_off, int64_t& key) {
#pragma unroll
  for (int d = 0; d < kMaxDims; ++d) {
    if (d >= p.self_rank || p.index[d].data == nullptr) continue;
    int64_t off = 0;
#pragma unroll
    for (int j = 0; j < kMaxDims; ++j)
      if (j < p.brank) off += bc[j] * p.index[d].strides[j];
    int64_t idx = load_index(p.index[d], off);
    const int64_t size = p.self_sizes[d];
    const bool ok = p.wrap ? (idx >= -size && idx < size) : (idx >= 0 && idx < size);
    if (!ok) {
      record_failure(p.error_word, p.site, DeviceCheck::kIndexOutOfRange, idx, size, d);
      return false;
    }
    if (idx < 0) idx += size;
    self_off += idx * p.self_strides[d];
    key += idx * p.key_strides[d];
  }
  return true;
}

// Offsets of result element i: into self (through the indices), into other, the winner key
// and the index position b.
__device__ __forceinline__ bool resolve(const AdvancedIndexParams& p, int64_t i, int64_t& self_off,
                                        int64_t& other_off, int64_t& key, int64_t& b) {
  int64_t bc[kMaxDims] = {};
  self_off = 0;
  other_off = 0;
  key = 0;
#pragma unroll
  for (int r = kMaxDims - 1; r >= 0; --r) {
    if (r >= p.rank) continue;
    const int64_t c = i % p.sizes[r];
    i /= p.sizes[r];
    other_off += c * p.other_strides[r];
    const int32_t src = p.result_dim[r];
    if (src >= 0) {
      self_off += c * p.self_strides[src];
    } else {
      bc[-src - 1] = c;
    }
  }
  b = 0;
#pragma unroll
  for (int j = 0; j < kMaxDims; ++j)
    if (j < p.brank) b = b * p.bsizes[j] + bc[j];
  return add_indexed(p, bc, self_off, key);
}

__global__ void __launch_bounds__(kThreads) index_validate(const AdvancedIndexParams p) {
  dependent_start();
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < p.bnumel;
       b += step) {
    int64_t bc[kMaxDims] = {};
    bcoords(p, b, bc);
    int64_t self_off = 0, key = 0;
    add_indexed(p, bc, self_off, key);
  }
}

template <typename Unit>
__global__ void __launch_bounds__(kThreads) index_read(const AdvancedIndexParams p) {
  dependent_start();
  const Unit* self = static_cast<const Unit*>(p.self);
  Unit* out = static_cast<Unit*>(p.other);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel;
       i += step) {
    int64_t so, oo, key, b;
    if (resolve(p, i, so, oo, key, b)) out[oo] = self[so];
  }
}

__global__ void __launch_bounds__(kThreads) index_winners(const AdvancedIndexParams p) {
  if (failed(p.error_word)) return;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < p.bnumel;
       b += step) {
    int64_t bc[kMaxDims] = {};
    bcoords(p, b, bc);
    int64_t self_off = 0, key = 0;
    if (add_indexed(p, bc, self_off, key)) atomicMax(p.winner + key, static_cast<int32_t>(b));
  }
}

template <typename Unit>
__global__ void __launch_bounds__(kThreads) index_write(const AdvancedIndexParams p) {
  dependent_start();
  if (failed(p.error_word)) return;
  Unit* self = static_cast<Unit*>(p.self);
  const Unit* values = static_cast<const Unit*>(p.other);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel;
       i += step) {
    int64_t so, oo, key, b;
    if (!resolve(p, i, so, oo, key, b)) continue;
    if (p.winner != nullptr && p.winner[key] != static_cast<int32_t>(b)) continue;
    self[so] = values[oo];
  }
}

// dst + alpha * x in the dtype's opmath, rounded once, never contracted into an FMA (the CPU
// computes a product and a sum).
template <typename T>
__device__ __forceinline__ T accumulate(T dst, T x, const AdvancedIndexParams& p) {
  if constexpr (std::is_same_v<T, bool>) {
    return dst || (p.alpha_int != 0 && x);
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(__fadd_rn(
        __half2float(dst), __fmul_rn(static_cast<float>(p.alpha_float), __half2float(x))));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(__fadd_rn(
        __bfloat162float(dst), __fmul_rn(static_cast<float>(p.alpha_float), __bfloat162float(x))));
  } else if constexpr (std::is_same_v<T, float>) {
    return __fadd_rn(dst, __fmul_rn(static_cast<float>(p.alpha_float), x));
  } else if constexpr (std::is_same_v<T, double>) {
    return __dadd_rn(dst, __dmul_rn(p.alpha_float, x));
  } else {
    const uint64_t sum =
        static_cast<uint64_t>(static_cast<int64_t>(dst)) +
        static_cast<uint64_t>(p.alpha_int) * static_cast<uint64_t>(static_cast<int64_t>(x));
    return static_cast<T>(sum);
  }
}

// One thread per element of the non-indexed result dims ("row" elements), walking every index
// position in order, so each destination sums in the CPU's order.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    index_accumulate(const AdvancedIndexParams p, int64_t rows) {
  if (failed(p.error_word)) return;
  T* self = static_cast<T*>(p.self);
  const T* values = static_cast<const T*>(p.other);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < rows;
       e += step) {
    // The row part of the offsets.
    int64_t row_self = 0, row_other = 0, rest = e;
#pragma unroll
    for (int r = kMaxDims - 1; r >= 0; --r) {
      if (r >= p.rank || p.result_dim[r] < 0) continue;
      const int64_t c = rest % p.sizes[r];
      rest /= p.sizes[r];
      row_self += c * p.self_strides[p.result_dim[r]];
      row_other += c * p.other_strides[r];
    }
    for (int64_t b = 0; b < p.bnumel; ++b) {
      int64_t bc[kMaxDims] = {};
      bcoords(p, b, bc);
      int64_t so = row_self, key = 0, oo = row_other;
#pragma unroll
      for (int r = 0; r < kMaxDims; ++r)
        if (r < p.rank && p.result_dim[r] < 0) oo += bc[-p.result_dim[r] - 1] * p.other_strides[r];
      if (!add_indexed(p, bc, so, key)) continue;
      self[so] = accumulate<T>(self[so], values[oo], p);
    }
  }
}

template <typename Unit>
cudaError_t read_as(const AdvancedIndexParams& p, unsigned blocks, cudaStream_t s) {
  return launch_dependent(index_read<Unit>, dim3(blocks), dim3(kThreads), 0, s, p);
}
template <typename Unit>
cudaError_t write_as(const AdvancedIndexParams& p, unsigned blocks, cudaStream_t s) {
  return launch_dependent(index_write<Unit>, dim3(blocks), dim3(kThreads), 0, s, p);
}

// ---- gather / scatter ----------------------------------------------------------------------

__device__ __forceinline__ bool gather_offsets(const GatherScatterParams& p, const int64_t* c,
                                               int64_t& self_off, int64_t& other_off) {
  int64_t index_off = 0;
  self_off = 0;
  other_off = 0;
#pragma unroll
  for (int d = 0; d < kMaxDims; ++d) {
    if (d >= p.rank) continue;
    index_off += c[d] * p.index_strides[d];
    other_off += c[d] * p.other_strides[d];
    if (d != p.dim) self_off += c[d] * p.self_strides[d];
  }
  const int64_t idx = p.index[index_off];
  const int64_t size = p.self_sizes[p.dim];
  if (idx < 0 || idx >= size) {
    record_failure(p.error_word, p.site, DeviceCheck::kIndexOutOfRange, idx, size, p.dim);
    return false;
  }
  self_off += idx * p.self_strides[p.dim];
  return true;
}

__device__ __forceinline__ void coords_of(const GatherScatterParams& p, int64_t i, int64_t* c) {
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < p.rank) {
      c[d] = i % p.index_sizes[d];
      i /= p.index_sizes[d];
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) gather(const GatherScatterParams p) {
  const T* self = static_cast<const T*>(p.self);
  T* out = static_cast<T*>(p.other);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel;
       i += step) {
    int64_t c[kMaxDims] = {};
    coords_of(p, i, c);
    int64_t so, oo;
    if (gather_offsets(p, c, so, oo)) out[oo] = self[so];
  }
}

__global__ void __launch_bounds__(kThreads) scatter_validate(const GatherScatterParams p) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel;
       i += step) {
    int64_t c[kMaxDims] = {};
    coords_of(p, i, c);
    int64_t so, oo;
    gather_offsets(p, c, so, oo);
  }
}

// p.numel counts columns: index elements with the dim's coordinate 0.
template <typename T>
__global__ void __launch_bounds__(kThreads) scatter(const GatherScatterParams p) {
  if (failed(p.error_word)) return;
  T* self = static_cast<T*>(p.self);
  const T* src = static_cast<const T*>(p.other);
  const T value = *reinterpret_cast<const T*>(&p.value);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < p.numel;
       col += step) {
    int64_t c[kMaxDims] = {};
    int64_t rest = col;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d >= p.rank || d == p.dim) continue;
      c[d] = rest % p.index_sizes[d];
      rest /= p.index_sizes[d];
    }
    for (int64_t k = 0; k < p.index_sizes[p.dim]; ++k) {
      c[p.dim] = k;
      int64_t so, oo;
      if (gather_offsets(p, c, so, oo)) self[so] = p.use_value ? value : src[oo];
    }
  }
}

template <typename T>
cudaError_t gather_as(const GatherScatterParams& p, unsigned blocks, cudaStream_t s) {
  gather<T><<<blocks, kThreads, 0, s>>>(p);
  return cudaGetLastError();
}
template <typename T>
cudaError_t scatter_as(const GatherScatterParams& p, unsigned blocks, cudaStream_t s) {
  scatter<T><<<blocks, kThreads, 0, s>>>(p);
  return cudaGetLastError();
}

// ---- nonzero -------------------------------------------------------------------------------

__device__ __forceinline__ bool mask_at(const NonzeroParams& p, int64_t lin) {
  int64_t off = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < p.rank) {
      off += (lin % p.sizes[d]) * p.strides[d];
      lin /= p.sizes[d];
    }
  }
  return p.mask[off] != 0;
}

// Exclusive scan of one value per thread of the block (kThreads); returns the block's total.
__device__ __forceinline__ int64_t block_exclusive_scan(int64_t v, int64_t& exclusive) {
  __shared__ int64_t buf[kThreads];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (unsigned offset = 1; offset < kThreads; offset <<= 1) {
    const int64_t add = threadIdx.x >= offset ? buf[threadIdx.x - offset] : 0;
    __syncthreads();
    buf[threadIdx.x] += add;
    __syncthreads();
  }
  exclusive = buf[threadIdx.x] - v;
  const int64_t total = buf[kThreads - 1];
  __syncthreads();
  return total;
}

__global__ void __launch_bounds__(kThreads) nonzero_count(const NonzeroParams p) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kNonzeroTile + threadIdx.x * 4;
  int64_t n = 0;
  for (int j = 0; j < 4; ++j)
    if (base + j < p.numel && mask_at(p, base + j)) ++n;
  int64_t exclusive;
  const int64_t total = block_exclusive_scan(n, exclusive);
  if (threadIdx.x == 0) p.counts[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kThreads) nonzero_scan(const NonzeroParams p) {
  int64_t carry = 0;
  for (int64_t start = 0; start < p.tiles; start += kThreads) {
    const int64_t i = start + threadIdx.x;
    const int64_t v = i < p.tiles ? p.counts[i] : 0;
    int64_t exclusive;
    const int64_t total = block_exclusive_scan(v, exclusive);
    if (i < p.tiles) p.counts[i] = carry + exclusive;
    carry += total;
  }
  if (threadIdx.x == 0) p.counts[p.tiles] = carry;
}

__global__ void __launch_bounds__(kThreads) nonzero_write(const NonzeroParams p) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kNonzeroTile + threadIdx.x * 4;
  bool flags[4];
  int64_t n = 0;
  for (int j = 0; j < 4; ++j) {
    flags[j] = base + j < p.numel && mask_at(p, base + j);
    n += flags[j] ? 1 : 0;
  }
  int64_t exclusive;
  block_exclusive_scan(n, exclusive);
  int64_t pos = p.counts[blockIdx.x] + exclusive;
  for (int j = 0; j < 4; ++j) {
    if (!flags[j]) continue;
    int64_t lin = base + j;
    for (int d = p.rank - 1; d >= 0; --d) {
      p.coords[pos * p.rank + d] = lin % p.sizes[d];
      lin /= p.sizes[d];
    }
    ++pos;
  }
}

// ---- repeat_interleave by a tensor ----------------------------------------------------------

__global__ void __launch_bounds__(kThreads) repeat_scan(const RepeatScanParams p) {
  // The first negative count in index order is the one reported (as the CPU's loop does).
  __shared__ unsigned long long first_negative;
  if (threadIdx.x == 0) first_negative = ~0ull;
  __syncthreads();
  int64_t carry = 0;
  for (int64_t start = 0; start < p.count; start += kThreads) {
    const int64_t i = start + threadIdx.x;
    int64_t v = 0;
    if (i < p.count) {
      v = p.is_int32 ? static_cast<const int32_t*>(p.repeats)[i * p.stride]
                     : static_cast<const int64_t*>(p.repeats)[i * p.stride];
      if (v < 0) {
        atomicMin(&first_negative, static_cast<unsigned long long>(i));
        v = 0;
      }
    }
    int64_t exclusive;
    const int64_t total = block_exclusive_scan(v, exclusive);
    if (i < p.count) p.cumsum[i] = carry + exclusive + v;
    carry += total;
  }
  __syncthreads();
  if (threadIdx.x == 0 && first_negative != ~0ull) {
    const int64_t i = static_cast<int64_t>(first_negative);
    const int64_t v = p.is_int32 ? static_cast<const int32_t*>(p.repeats)[i * p.stride]
                                 : static_cast<const int64_t*>(p.repeats)[i * p.stride];
    record_failure(p.error_word, p.site, DeviceCheck::kNegativeRepeat, v, 0, i);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) repeat_gather(const RepeatGatherParams p) {
  if (failed(p.error_word)) return;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < p.numel;
       e += step) {
    int64_t rest = e, out_off = 0, src_off = 0, k = 0;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d >= p.rank) continue;
      const int64_t c = rest % p.out_sizes[d];
      rest /= p.out_sizes[d];
      out_off += c * p.out_strides[d];
      if (d == p.dim) {
        k = c;
      } else {
        src_off += c * p.src_strides[d];
      }
    }
    int64_t i;
    if (p.cumsum == nullptr) {
      i = k / p.each;
    } else {
      int64_t lo = 0, hi = p.count;  // first i with cumsum[i] > k
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (p.cumsum[mid] > k)
          hi = mid;
        else
          lo = mid + 1;
      }
      i = lo;
    }
    if (p.src == nullptr) {
      if (p.index_int32)
        static_cast<int32_t*>(p.out)[out_off] = static_cast<int32_t>(i);
      else
        static_cast<int64_t*>(p.out)[out_off] = i;
    } else {
      static_cast<T*>(p.out)[out_off] =
          static_cast<const T*>(p.src)[src_off + i * p.src_strides[p.dim]];
    }
  }
}

}  // namespace

cudaError_t launch_repeat_scan(const RepeatScanParams& p, cudaStream_t stream) {
  repeat_scan<<<1, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_repeat_gather(const RepeatGatherParams& p, int element_size, unsigned blocks,
                                 cudaStream_t stream) {
  switch (element_size) {
    case 1:
      repeat_gather<uint8_t><<<blocks, kThreads, 0, stream>>>(p);
      break;
    case 2:
      repeat_gather<uint16_t><<<blocks, kThreads, 0, stream>>>(p);
      break;
    case 4:
      repeat_gather<uint32_t><<<blocks, kThreads, 0, stream>>>(p);
      break;
    case 8:
      repeat_gather<uint64_t><<<blocks, kThreads, 0, stream>>>(p);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_index_validate(const AdvancedIndexParams& p, unsigned blocks,
                                  cudaStream_t stream) {
  return launch_dependent(index_validate, dim3(blocks), dim3(kThreads), 0, stream, p);
}

cudaError_t launch_index_read(const AdvancedIndexParams& p, int unit_size, unsigned blocks,
                              cudaStream_t stream) {
  switch (unit_size) {
    case 1:
      return read_as<uint8_t>(p, blocks, stream);
    case 2:
      return read_as<uint16_t>(p, blocks, stream);
    case 4:
      return read_as<uint32_t>(p, blocks, stream);
    case 8:
      return read_as<uint64_t>(p, blocks, stream);
    case 16:
      return read_as<Unit16>(p, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_index_winners(const AdvancedIndexParams& p, unsigned blocks,
                                 cudaStream_t stream) {
  index_winners<<<blocks, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_index_write(const AdvancedIndexParams& p, int unit_size, unsigned blocks,
                               cudaStream_t stream) {
  switch (unit_size) {
    case 1:
      return write_as<uint8_t>(p, blocks, stream);
    case 2:
      return write_as<uint16_t>(p, blocks, stream);
    case 4:
      return write_as<uint32_t>(p, blocks, stream);
    case 8:
      return write_as<uint64_t>(p, blocks, stream);
    case 16:
      return write_as<Unit16>(p, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_index_accumulate(const AdvancedIndexParams& p, unsigned blocks,
                                    cudaStream_t stream) {
  int64_t rows = 1;
  for (int r = 0; r < p.rank; ++r)
    if (p.result_dim[r] >= 0) rows *= p.sizes[r];
  switch (static_cast<DType>(p.dtype)) {
    case DType::kUInt8:
      index_accumulate<uint8_t><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kInt8:
      index_accumulate<int8_t><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kInt16:
      index_accumulate<int16_t><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kInt32:
      index_accumulate<int32_t><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kInt64:
      index_accumulate<int64_t><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kFloat16:
      index_accumulate<__half><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kFloat32:
      index_accumulate<float><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kFloat64:
      index_accumulate<double><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kBool:
      index_accumulate<bool><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    case DType::kBFloat16:
      index_accumulate<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(p, rows);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_gather(const GatherScatterParams& p, int element_size, unsigned blocks,
                          cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return gather_as<uint8_t>(p, blocks, stream);
    case 2:
      return gather_as<uint16_t>(p, blocks, stream);
    case 4:
      return gather_as<uint32_t>(p, blocks, stream);
    case 8:
      return gather_as<uint64_t>(p, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_scatter_validate(const GatherScatterParams& p, unsigned blocks,
                                    cudaStream_t stream) {
  scatter_validate<<<blocks, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_scatter(const GatherScatterParams& p, int element_size, unsigned blocks,
                           cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return scatter_as<uint8_t>(p, blocks, stream);
    case 2:
      return scatter_as<uint16_t>(p, blocks, stream);
    case 4:
      return scatter_as<uint32_t>(p, blocks, stream);
    case 8:
      return scatter_as<uint64_t>(p, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_nonzero_count(const NonzeroParams& p, cudaStream_t stream) {
  nonzero_count<<<static_cast<unsigned>(p.tiles), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_nonzero_scan(const NonzeroParams& p, cudaStream_t stream) {
  nonzero_scan<<<1, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_nonzero_write(const NonzeroParams& p, cudaStream_t stream) {
  nonzero_write<<<static_cast<unsigned>(p.tiles), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace splice::cuda
