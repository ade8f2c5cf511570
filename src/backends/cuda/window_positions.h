#pragma once
// The CUDA backend's positions read on the device (CallRecorder::bind_positions and
// CallRecorder::copy_at_position; runtime/device_positions.h): a tiny kernel turns a position
// symbol's input into its positions (position_kernel.h), and the generated copy kernel moves a
// window that starts at one of them (copy_ops.h's copy_at_position). Both are checked launches:
// while a call is being recorded their failures are read when it ends, named by `context`;
// otherwise the session reads them at its next synchronize.

#include <span>
#include <string_view>

#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"

namespace splice::cuda {

Result<Tensor> bind_positions(CudaSession& session, const Tensor& source,
                              std::span<const int64_t> offsets, const SymRange& range,
                              std::string_view context);

Result<void> copy_at_position(CudaSession& session, const Tensor& dst, const Tensor& src,
                              const backend::WindowPosition& at, std::string_view context);

}  // namespace splice::cuda
