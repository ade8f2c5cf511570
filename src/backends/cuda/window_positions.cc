// See window_positions.h.
#include "backends/cuda/window_positions.h"

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/call_recording.h"
#include "backends/cuda/copy_ops.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/position_kernel.h"

namespace splice::cuda {

namespace {

// The session's launch context, with a site naming `context` while the stream is recorded.
LaunchContext checked_launch(CudaSession& session, std::string_view context) {
  session.note_checks();
  LaunchContext ctx = session.launch();
  if (is_recording(session.stream())) ctx.site = session.recording_site(context);
  return ctx;
}

}  // namespace

Result<Tensor> bind_positions(CudaSession& session, const Tensor& source,
                              std::span<const int64_t> offsets, const SymRange& range,
                              std::string_view context) {
  SPLICE_CHECK_OR_RETURN(source.numel() == 1 && !source.is_host(), ErrorKind::kInternal,
                         "{}: a position is read from one element on the device", context);
  SPLICE_CHECK_OR_RETURN(!offsets.empty() && offsets.size() <= kMaxPositionOffsets && range.max,
                         ErrorKind::kInternal, "{}: {} position offsets, range {}", context,
                         offsets.size(), range.to_string());
  PositionParams p;
  switch (source.dtype()) {
    case DType::kUInt8:
      p.is_unsigned = 1;
      [[fallthrough]];
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      p.source_bytes = static_cast<int32_t>(dtype_size(source.dtype()));
      break;
    default:
      return make_error(ErrorKind::kInternal, "{}: a position read from a {} tensor", context,
                        dtype_name(source.dtype()));
  }
  session.make_current();
  const Shape sizes{static_cast<int64_t>(offsets.size())};
  SPLICE_ASSIGN_OR_RETURN(auto storage,
                          allocate_device_storage(offsets.size() * sizeof(int64_t), kCudaDevice));
  Tensor out(DType::kInt64, sizes, contiguous_strides(sizes), 0, std::move(storage));
  p.source = source.device_data();
  p.min = range.min;
  p.max = *range.max;
  p.count = static_cast<int32_t>(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) p.offsets[i] = offsets[i];
  p.out = reinterpret_cast<int64_t*>(out.device_data());
  const LaunchContext ctx = checked_launch(session, context);
  p.error_word = ctx.error_word;
  p.site = ctx.site;
  SPLICE_CUDA_CHECK(launch_bind_positions(p, session.stream()));
  return out;
}

Result<void> copy_at_position(CudaSession& session, const Tensor& dst, const Tensor& src,
                              const backend::WindowPosition& at, std::string_view context) {
  const Tensor& window = at.in_dst ? dst : src;
  SPLICE_CHECK_OR_RETURN(at.positions != nullptr && at.slot >= 0 &&
                             at.slot < at.positions->numel() && at.dim >= 0 &&
                             at.dim < window.dim() && at.positions->dtype() == DType::kInt64,
                         ErrorKind::kInternal, "{}: a window position that names nothing", context);
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, glue::dev(context, dst));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, glue::dev(context, src));
  DevicePosition pos;
  pos.position = reinterpret_cast<const int64_t*>(at.positions->device_data()) + at.slot;
  pos.dim = at.dim;
  pos.dim_size = at.dim_size;
  pos.stride = window.stride(at.dim);
  pos.extent = window.size(at.dim);
  session.make_current();
  const LaunchContext ctx = checked_launch(session, context);
  const PointwiseOperand dst_op{d, at.in_dst ? &pos : nullptr};
  const PointwiseOperand src_op{s, at.in_dst ? nullptr : &pos};
  auto r = copy_at_position(dst_op, src_op, ctx);
  if (!r.ok()) return r.error().with_context(std::string(context));
  return ok_result();
}

}  // namespace splice::cuda
