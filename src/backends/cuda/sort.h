#pragma once
// sort / sort.stable / topk along one dim on the GPU: every lane is sorted stably by CUB's radix
// sort of (key, position) pairs (a DeviceRadixSort per lane for one lane or up to 64 lanes of at
// least 16384 elements, as a batch of vocabulary rows; one segmented sort for other shapes),
// then the first k positions of each lane are written out with the elements they name.
// O(n log n)-class work (radix passes over the key bits) and O(n) scratch.
//
// The order is PyTorch's CPU comparator made a radix key: every NaN sorts above +inf and ties
// with every other NaN, -0.0 ties with 0.0, ties keep the lower index first in both directions
// (CUB's radix sorts are stable, descending included). That is eager's order for sort.stable;
// an unstable sort has no specified order of ties and gets the stable one. topk is the sorted
// lane's first k: for ties at the k boundary and inside the top k, eager's CPU topk (a heap
// select, backends/cpu/sort.cc) can order equal elements differently, and sorted=False gives
// the sorted order (docs/cuda.md, known differences).
//
// self, values and indices are strided views (rank <= 8); values and indices have self's shape
// with size k at dim (k <= the dim's size). Nothing is allocated and nothing waits on the host:
// the keys, positions and CUB's temporary storage live in `scratch`, which must hold
// sort_scratch_bytes(...) bytes, so a call can be captured in a CUDA graph.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernel_scratch.h"
#include "support/error.h"

namespace splice::cuda {

// The scratch sort_lanes needs for `lanes` lanes of `length` elements of `dtype` (a host-side
// query; nothing is launched). kBadInput when lanes * length exceeds CUB's 32-bit item count.
Result<size_t> sort_scratch_bytes(DType dtype, int64_t lanes, int64_t length);

Result<void> sort_lanes(const DeviceTensor& self, int64_t dim, bool descending, int64_t k,
                        const DeviceTensor& values, const DeviceTensor& indices,
                        KernelScratch scratch, cudaStream_t stream);

}  // namespace splice::cuda
