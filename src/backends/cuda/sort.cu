// Sort kernels (see sort.h): a load kernel turns each element into an unsigned radix key whose
// integer order is PyTorch's order and pairs it with its position in the lane; CUB sorts the
// pairs (stable); a gather kernel writes the first k positions of each lane and the elements
// they name (self's own bits, so NaN payloads and -0.0 come out as they went in).
//
// Keys, from the element's raw bits (an unsigned integer of the element's width):
//   bool, uint8       the value itself;
//   signed integers   the sign bit flipped (two's complement order becomes unsigned order);
//   floats            -0.0 made +0.0 (they tie), then negative numbers all bits flipped and
//                     the rest the sign bit set (IEEE order becomes unsigned order); every NaN
//                     the all-ones key, above +inf's, so NaNs tie with each other and sort last
//                     ascending and first descending, as PyTorch's comparator puts them.
// CUB's NVTX ranges off: NVTX's implementation includes <fcntl.h>, whose GNU `splice()`
// function clashes with namespace splice (and a range per sort adds nothing to a captured graph).
#define CCCL_DISABLE_NVTX

#include "backends/cuda/sort.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <limits>
#include <type_traits>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/lane_plan.h"

namespace splice::cuda {

namespace {

enum class KeyKind : uint8_t { kUnsigned, kSigned, kFloat };

KeyKind key_kind(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
      return KeyKind::kUnsigned;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return KeyKind::kFloat;
    default:
      return KeyKind::kSigned;
  }
}

// The bits of +inf in a float format of K's width (exponent all ones, mantissa 0).
template <typename K>
__device__ __forceinline__ K infinity_bits(bool bfloat16) {
  if constexpr (sizeof(K) == 2) {
    return bfloat16 ? K(0x7F80) : K(0x7C00);
  } else if constexpr (sizeof(K) == 4) {
    return K(0x7F800000u);
  } else if constexpr (sizeof(K) == 8) {
    return K(0x7FF0000000000000ull);
  } else {
    return std::numeric_limits<K>::max();  // no 8-bit float dtype
  }
}

template <typename K>
__device__ __forceinline__ K radix_key(K bits, KeyKind kind, bool bfloat16) {
  constexpr K kSign = K(K(1) << (sizeof(K) * 8 - 1));
  if (kind == KeyKind::kUnsigned) return bits;
  if (kind == KeyKind::kSigned) return K(bits ^ kSign);
  const K magnitude = K(bits & K(~kSign));
  if (magnitude > infinity_bits<K>(bfloat16)) return std::numeric_limits<K>::max();  // NaN
  if (magnitude == 0) return kSign;                                                  // +-0.0
  return (bits & kSign) != 0 ? K(~bits) : K(bits | kSign);
}

struct SortParams {
  const void* self;
  StridedOffsets<1> in_lanes;   // per lane: the base offset in self
  StridedOffsets<2> out_lanes;  // per lane: the base offsets in values and indices
  int64_t in_stride;
  int64_t values_stride;
  int64_t indices_stride;
  int64_t lanes;
  int64_t length;
  int64_t k;
  KeyKind kind;
  bool bfloat16;
};

// keys[lane * length + j] and positions[...] = the key of self's element j of the lane, and j.
template <typename K>
__global__ void load_keys_kernel(SortParams p, K* keys, int32_t* positions) {
  const K* self = static_cast<const K*>(p.self);
  const int64_t total = p.lanes * p.length;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t lane = i / p.length, j = i - lane * p.length;
    const int64_t base = p.in_lanes.get0(lane);
    keys[i] = radix_key<K>(self[base + j * p.in_stride], p.kind, p.bfloat16);
    positions[i] = static_cast<int32_t>(j);
  }
}

// offsets[i] = i * length for i in [0, lanes]: the segments' begin (offsets) and end
// (offsets + 1).
__global__ void segment_offsets_kernel(int32_t* offsets, int64_t lanes, int64_t length) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i <= lanes;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    offsets[i] = static_cast<int32_t>(i * length);
}

// The first k sorted positions of each lane, and self's elements at them.
template <typename K>
__global__ void gather_sorted_kernel(SortParams p, const int32_t* sorted_positions, void* values,
                                     int64_t* indices) {
  const K* self = static_cast<const K*>(p.self);
  K* out = static_cast<K*>(values);
  const int64_t total = p.lanes * p.k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t lane = i / p.k, j = i - lane * p.k;
    const int64_t position = sorted_positions[lane * p.length + j];
    int64_t base[2];
    p.out_lanes.get(lane, base);
    out[base[0] + j * p.values_stride] = self[p.in_lanes.get0(lane) + position * p.in_stride];
    indices[base[1] + j * p.indices_stride] = position;
  }
}

// Where each array lives in the scratch block (every region 256-byte aligned).
struct ScratchLayout {
  size_t keys_in = 0, keys_out = 0, positions_in = 0, positions_out = 0, offsets = 0, cub = 0;
  size_t cub_bytes = 0;
  size_t total = 0;
};

// Whether the lanes are sorted one DeviceRadixSort each (one lane, or a few long ones: a batch
// of vocabulary rows) rather than by one segmented sort, which gives each lane one block.
bool sorts_lane_by_lane(int64_t lanes, int64_t length) {
  constexpr int64_t kMaxLanes = 64, kMinLength = 16384;
  return lanes == 1 || (lanes <= kMaxLanes && length >= kMinLength);
}

// CUB's temporary storage for this sort (a host-side size query: nothing is launched).
template <typename K>
Result<size_t> cub_temp_bytes(int64_t lanes, int64_t length, int end_bit) {
  size_t bytes = 0;
  const int items = static_cast<int>(lanes * length);
  if (sorts_lane_by_lane(lanes, length)) {
    SPLICE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
        static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
        static_cast<int>(length), 0, end_bit));
  } else {
    SPLICE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
        nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
        static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr), items,
        static_cast<int>(lanes), static_cast<const int32_t*>(nullptr),
        static_cast<const int32_t*>(nullptr), 0, end_bit));
  }
  return bytes;
}

// The key bits that can differ: one for bool (0 or 1), all of them otherwise.
int key_end_bit(DType dtype) { return dtype == DType::kBool ? 1 : 8 * dtype_size(dtype); }

// Calls f(K{}) with the unsigned integer type of dtype's width.
template <typename F>
decltype(auto) dispatch_key_type(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

Result<ScratchLayout> layout_for(DType dtype, int64_t lanes, int64_t length) {
  SPLICE_CHECK_OR_RETURN(
      lanes * length <= std::numeric_limits<int32_t>::max(), ErrorKind::kBadInput,
      "sort: {} lanes of {} elements exceed the CUDA sort's 2^31 - 1 elements", lanes, length);
  const auto items = static_cast<size_t>(lanes * length);
  ScratchLayout s;
  size_t at = 0;
  auto take = [&](size_t bytes) {
    const size_t start = at;
    at += scratch_round(bytes);
    return start;
  };
  s.keys_in = take(items * dtype_size(dtype));
  s.keys_out = take(items * dtype_size(dtype));
  s.positions_in = take(items * sizeof(int32_t));
  s.positions_out = take(items * sizeof(int32_t));
  s.offsets = take(static_cast<size_t>(lanes + 1) * sizeof(int32_t));
  SPLICE_ASSIGN_OR_RETURN(s.cub_bytes, dispatch_key_type(dtype, [&](auto key) {
                            return cub_temp_bytes<decltype(key)>(lanes, length, key_end_bit(dtype));
                          }));
  s.cub = take(s.cub_bytes);
  s.total = at;
  return s;
}

template <int N>
void copy_lane_dims(const LanePlan& plan, StridedOffsets<N>& lanes) {
  lanes.rank = static_cast<int>(plan.lane_sizes.size());
  for (int d = 0; d < lanes.rank; ++d) {
    lanes.sizes[d] = plan.lane_sizes[d];
    for (int i = 0; i < N; ++i) lanes.strides[i][d] = plan.lane_strides[i][d];
  }
}

}  // namespace

Result<size_t> sort_scratch_bytes(DType dtype, int64_t lanes, int64_t length) {
  if (lanes <= 0 || length <= 0) return size_t{0};
  SPLICE_ASSIGN_OR_RETURN(ScratchLayout layout, layout_for(dtype, lanes, length));
  return layout.total;
}

Result<void> sort_lanes(const DeviceTensor& self, int64_t dim, bool descending, int64_t k,
                        const DeviceTensor& values, const DeviceTensor& indices,
                        KernelScratch scratch, cudaStream_t stream) {
  constexpr std::string_view op = "sort";
  SPLICE_CHECK_OR_RETURN(values.dtype == self.dtype && indices.dtype == DType::kInt64,
                         ErrorKind::kInternal, "sort: outputs of the wrong dtype");
  const DeviceTensor* inputs[] = {&self};
  SPLICE_ASSIGN_OR_RETURN(LanePlan in_plan, plan_lanes(op, inputs, dim));
  const DeviceTensor* outputs[] = {&values, &indices};
  SPLICE_ASSIGN_OR_RETURN(LanePlan out_plan, plan_lanes(op, outputs, dim));
  SPLICE_CHECK_OR_RETURN(
      out_plan.lanes == in_plan.lanes && k >= 0 && k <= in_plan.length && out_plan.length == k,
      ErrorKind::kInternal, "sort: outputs of {} lanes of {} for {} lanes of {}", out_plan.lanes,
      out_plan.length, in_plan.lanes, in_plan.length);
  const int64_t lanes = in_plan.lanes, length = in_plan.length;
  if (lanes == 0 || length == 0 || k == 0) return ok_result();
  SPLICE_ASSIGN_OR_RETURN(ScratchLayout layout, layout_for(self.dtype, lanes, length));
  SPLICE_CHECK_OR_RETURN(scratch.data != nullptr && scratch.bytes >= layout.total,
                         ErrorKind::kInternal, "sort: needs {} bytes of scratch, got {}",
                         layout.total, scratch.bytes);
  char* base = static_cast<char*>(scratch.data);
  auto* positions_in = reinterpret_cast<int32_t*>(base + layout.positions_in);
  auto* positions_out = reinterpret_cast<int32_t*>(base + layout.positions_out);
  auto* offsets = reinterpret_cast<int32_t*>(base + layout.offsets);
  // The type CUB's size query was made with (cub_temp_bytes), so the storage asked for fits.
  const int32_t* segment_offsets = offsets;

  SortParams p{};
  p.self = self.data;
  copy_lane_dims(in_plan, p.in_lanes);
  copy_lane_dims(out_plan, p.out_lanes);
  p.in_stride = in_plan.elem_strides[0];
  p.values_stride = out_plan.elem_strides[0];
  p.indices_stride = out_plan.elem_strides[1];
  p.lanes = lanes;
  p.length = length;
  p.k = k;
  p.kind = key_kind(self.dtype);
  p.bfloat16 = self.dtype == DType::kBFloat16;
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  constexpr unsigned kThreads = 256;
  const int end_bit = key_end_bit(self.dtype);
  const int items = static_cast<int>(lanes * length);

  return dispatch_key_type(self.dtype, [&](auto key) -> Result<void> {
    using K = decltype(key);
    K* keys_in = reinterpret_cast<K*>(base + layout.keys_in);
    K* keys_out = reinterpret_cast<K*>(base + layout.keys_out);
    load_keys_kernel<K><<<grid_blocks(lanes * length, kThreads, device), kThreads, 0, stream>>>(
        p, keys_in, positions_in);
    SPLICE_CUDA_CHECK(cudaGetLastError());
    size_t cub_bytes = layout.cub_bytes;
    void* cub_temp = base + layout.cub;
    if (sorts_lane_by_lane(lanes, length)) {
      // One sort per lane, in stream order, each reusing CUB's storage.
      const int n = static_cast<int>(length);
      for (int64_t lane = 0; lane < lanes; ++lane) {
        const int64_t at = lane * length;
        if (descending) {
          SPLICE_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
              cub_temp, cub_bytes, keys_in + at, keys_out + at, positions_in + at,
              positions_out + at, n, 0, end_bit, stream));
        } else {
          SPLICE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
              cub_temp, cub_bytes, keys_in + at, keys_out + at, positions_in + at,
              positions_out + at, n, 0, end_bit, stream));
        }
      }
    } else {
      segment_offsets_kernel<<<grid_blocks(lanes + 1, kThreads, device), kThreads, 0, stream>>>(
          offsets, lanes, length);
      SPLICE_CUDA_CHECK(cudaGetLastError());
      const int segments = static_cast<int>(lanes);
      if (descending) {
        SPLICE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
            cub_temp, cub_bytes, keys_in, keys_out, positions_in, positions_out, items, segments,
            segment_offsets, segment_offsets + 1, 0, end_bit, stream));
      } else {
        SPLICE_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
            cub_temp, cub_bytes, keys_in, keys_out, positions_in, positions_out, items, segments,
            segment_offsets, segment_offsets + 1, 0, end_bit, stream));
      }
    }
    gather_sorted_kernel<K><<<grid_blocks(lanes * k, kThreads, device), kThreads, 0, stream>>>(
        p, positions_out, values.data, static_cast<int64_t*>(indices.data));
    SPLICE_CUDA_CHECK(cudaGetLastError());
    return ok_result();
  });
}

}  // namespace splice::cuda
