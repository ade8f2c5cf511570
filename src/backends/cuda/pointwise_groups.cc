// See pointwise_groups.h.
#include "backends/cuda/pointwise_groups.h"

#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/norm.h"
#include "backends/cuda/pointwise_expressions.h"
#include "backends/cuda/pointwise_launch.h"

namespace splice::cuda {

namespace {

constexpr std::string_view kGroup = "a pointwise group";

}  // namespace

std::vector<uint8_t> gpu_pointwise_classes() {
  std::vector<uint8_t> classes;
  for (ir::PointwiseFn fn : ir::all_pointwise_fns()) {
    uint8_t c = 0;
    const uint8_t listed = ir::pointwise_fn_info(fn).classes;
    const struct {
      uint8_t bit;
      DType dtype;
    } kClasses[] = {{ir::kComputeBool, DType::kBool},
                    {ir::kComputeInt, DType::kInt64},
                    {ir::kComputeFloat, DType::kFloat32}};
    for (const auto& k : kClasses)
      if ((listed & k.bit) != 0 && pointwise_expression(fn, k.dtype).has_value()) c |= k.bit;
    // Integer division records its ZeroDivisionError only in a single-op kernel.
    c &= static_cast<uint8_t>(~ir::pointwise_fn_info(fn).kernel_only);
    classes.push_back(c);
  }
  return classes;
}

Result<void> run_pointwise_group(CudaSession& session, const ir::PointwiseProgram& program,
                                 std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                                 const Shape& sizes) {
  if (shape_numel(sizes) == 0) return ok_result();
  std::vector<PointwiseOperand> in, out;
  in.reserve(inputs.size());
  out.reserve(outputs.size());
  for (const Tensor& t : inputs) {
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, glue::dev(kGroup, t));
    in.push_back({d, nullptr});
  }
  for (const Tensor& t : outputs) {
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, glue::dev(kGroup, t));
    out.push_back({d, nullptr});
  }
  SPLICE_ASSIGN_OR_RETURN(auto prepared, PreparedPointwise::prepare(program, {}));
  session.make_current();
  LaunchContext ctx = session.launch();
  // A group may hold a function that checks something on the device (gpu_pointwise_classes
  // keeps out those that do today): read its failure as a single op's launch would.
  const bool checked = prepared->checks();
  const bool recording = is_recording(session.stream());
  if (checked && recording) ctx.site = session.recording_site(kGroup);
  SPLICE_TRY(prepared->launch(in, out, ctx, &program.constants));
  if (checked && !recording) return session.take_device_failure(kGroup);
  return ok_result();
}

Result<void> run_rms_norm_group(CudaSession& session, const backend::RmsNormCall& call) {
  constexpr std::string_view op = "an RMSNorm group";
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor x, glue::dev(op, call.x));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor out, glue::dev(op, call.out));
  std::optional<DeviceTensor> residual, weight, sum;
  for (auto [from, to] : {std::pair{&call.residual, &residual}, std::pair{&call.weight, &weight},
                          std::pair{&call.sum, &sum}}) {
    if (!from->has_value()) continue;
    SPLICE_ASSIGN_OR_RETURN(*to, glue::dev(op, **from));
  }
  session.make_current();
  const LaunchContext ctx = session.launch();
  return fused_rms_norm(x, residual ? &*residual : nullptr, weight ? &*weight : nullptr,
                        sum ? &*sum : nullptr, out, call.stat, call.cast, call.eps, ctx.error_word,
                        ctx.stream);
}

}  // namespace splice::cuda
