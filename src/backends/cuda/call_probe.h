#pragma once
// The CUDA backend's CallProbe (backends/backend.h): a call's latency from two CUDA events
// recorded on the session's stream around it, and the kernels, memory copies and memsets that
// ran on that stream during the call, counted with CUPTI (cupti_counter.h). Without libcupti
// the probe still times calls and reports why it counted nothing.

#include <memory>

#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"

namespace splice::cuda {

Result<std::unique_ptr<backend::CallProbe>> make_call_probe(CudaSession& session);

}  // namespace splice::cuda
