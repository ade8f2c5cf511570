#pragma once
// softmax / log_softmax along one dim on the GPU, as the CPU backend's kernels (cpu/nn.cc) and
// PyTorch compute them: numerically stable (the lane maximum is subtracted before exp; one pass
// finds the maximum and the sum together), in float (double when the result is float64),
// rounded once into the output. A NaN in a lane, or a lane that is all -inf, makes
// the whole lane NaN, as in PyTorch.
//
// Forms: _softmax / _log_softmax(self, dim, half_to_float) — out has self's dtype, or float32
// for half_to_float with a 16-bit input; softmax.int / log_softmax.int(self, dim, dtype) — out
// has the dtype, and self is converted to it first (the glue passes out with that dtype).
// Any float input/output pair works: the input is rounded through out's dtype, then widened.
// Inputs and outputs may be any strided views (rank <= 8) of the same shape; a 0-d tensor is
// one lane of length 1. Lanes along the contiguous dim get a warp (length <= 1024) or a block
// each; lanes along a strided dim with contiguous neighbours get a thread each (coalesced).

#include <cuda_runtime_api.h>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"

namespace splice::cuda {

Result<void> softmax(const DeviceTensor& self, int64_t dim, bool log, const DeviceTensor& out,
                     cudaStream_t stream);

}  // namespace splice::cuda
