// See pointwise_groups.h.
#include "backends/cuda/pointwise_groups.h"

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/gemv_epilogue.h"
#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/matmul.h"
#include "backends/cuda/matmul_exec.h"
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
  if (checked) session.note_checks();
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

namespace {

constexpr std::string_view kGemvGroup = "a GEMV epilogue";

// The product of a GEMV-epilogue call as the kernel table would run it, with `out` (of the
// product's sizes) as its result.
Result<MatmulArgs> product_args(const backend::GemvEpilogueCall& call, DeviceTensor& c,
                                const DeviceTensor& out) {
  MatmulArgs m;
  m.kind = call.product_op == ir::OpId::linear ? MatmulKind::kLinear
           : call.product_op == ir::OpId::mm   ? MatmulKind::kMm
                                               : MatmulKind::kAddmm;
  SPLICE_ASSIGN_OR_RETURN(m.a, glue::dev(kGemvGroup, call.a));
  SPLICE_ASSIGN_OR_RETURN(m.b, glue::dev(kGemvGroup, call.b));
  if (call.c) {
    SPLICE_ASSIGN_OR_RETURN(c, glue::dev(kGemvGroup, *call.c));
    m.c = &c;
  }
  m.out = out;
  return m;
}

Shape product_sizes(const backend::GemvEpilogueCall& call) {
  Shape s(call.a.sizes().begin(), call.a.sizes().end() - 1);
  s.push_back(call.product_op == ir::OpId::linear ? call.b.size(0) : call.b.size(call.b.dim() - 1));
  return s;
}

// The product into a temporary, then the epilogue over its columns: for operands the kernel
// does not read (more rows than a GEMV, unaligned or strided weights). A norm prologue runs
// first, into a temporary of its own.
Result<void> run_apart(CudaSession& session, const backend::GemvEpilogueCall& given,
                       const Shape& sizes) {
  backend::GemvEpilogueCall call = given;
  if (call.norm) {
    SPLICE_ASSIGN_OR_RETURN(auto norm_storage,
                            allocate_device_storage(call.a.nbytes(), kCudaDevice));
    const Tensor normed(call.a.dtype(), call.a.sizes(), contiguous_strides(call.a.sizes()), 0,
                        norm_storage);
    backend::RmsNormCall n;
    n.x = call.a;
    n.weight = call.norm->weight;
    n.out = normed;
    n.stat = call.norm->stat;
    n.cast = call.norm->cast;
    n.eps = call.norm->eps;
    SPLICE_TRY(run_rms_norm_group(session, n));
    call.a = normed;
    call.norm.reset();
  }
  SPLICE_ASSIGN_OR_RETURN(
      auto storage,
      allocate_device_storage(
          static_cast<size_t>(shape_numel(sizes)) * dtype_size(call.product_dtype), kCudaDevice));
  const Tensor product(call.product_dtype, sizes, contiguous_strides(sizes), 0, storage);
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor out, glue::dev(kGemvGroup, product));
  DeviceTensor c;
  SPLICE_ASSIGN_OR_RETURN(MatmulArgs m, product_args(call, c, out));
  SPLICE_ASSIGN_OR_RETURN(size_t bytes, MatmulRunner::scratch_bytes(m));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, session.scratch(bytes));
  session.make_current();
  SPLICE_TRY(session.matmul().run(m, scratch, session.stream()));
  // The epilogue's space regroups the product's rows (row views): row-major rows of its width.
  const int64_t n = sizes.back();
  Shape strides(call.sizes.size(), 1);
  for (size_t d = call.sizes.size() - 1; d-- > 0;)
    strides[d] = (d + 2 == call.sizes.size() ? n : strides[d + 1] * call.sizes[d + 1]);
  std::vector<Tensor> inputs(call.inputs.begin(), call.inputs.end());
  for (size_t k = 0; k < inputs.size(); ++k)
    if (call.columns[k] >= 0) inputs[k] = product.view_as(call.sizes, strides, call.columns[k]);
  return run_pointwise_group(session, *call.program, inputs, call.outputs, call.sizes);
}

}  // namespace

Result<void> run_gemv_epilogue_group(CudaSession& session, const backend::GemvEpilogueCall& call) {
  SPLICE_CHECK_OR_RETURN(call.program != nullptr && call.columns.size() == call.inputs.size(),
                         ErrorKind::kInternal, "a GEMV epilogue call without its program");
  if (shape_numel(call.sizes) == 0) return ok_result();
  const Shape sizes = product_sizes(call);
  DeviceTensor out;  // never stored: its shape describes the product
  out.dtype = call.product_dtype;
  out.rank = static_cast<int>(sizes.size());
  const Shape strides = contiguous_strides(sizes);
  for (int d = 0; d < out.rank; ++d) {
    out.sizes[d] = sizes[d];
    out.strides[d] = strides[d];
  }
  DeviceTensor c;
  SPLICE_ASSIGN_OR_RETURN(MatmulArgs m, product_args(call, c, out));
  SPLICE_ASSIGN_OR_RETURN(MatmulExec exec, describe_matmul(matmul_kind_name(m.kind), m));
  const GemvChoice choice = choose_gemv(exec);
  if (!choice.use || !session.matmul().gemv_enabled() || exec.dtype != call.product_dtype)
    return run_apart(session, call, sizes);
  GemvEpilogueArgs args;
  args.gemv = choice.args;
  args.width = call.sizes.back();
  GemvEpilogueShape shape;
  shape.program = *call.program;
  shape.dtype = call.product_dtype;
  if (call.norm) {
    // The kernel reads the norm's weight as 16-byte vectors of x's dtype.
    if (call.a.dtype() != call.product_dtype) return run_apart(session, call, sizes);
    if (call.norm->weight) {
      SPLICE_ASSIGN_OR_RETURN(DeviceTensor w, glue::dev(kGemvGroup, *call.norm->weight));
      if (w.dtype != call.product_dtype || w.rank < 1 || w.sizes[w.rank - 1] != choice.args.k ||
          (w.sizes[w.rank - 1] > 1 && w.strides[w.rank - 1] != 1))
        return run_apart(session, call, sizes);
      args.norm_weight = w.data;
    }
    args.norm_eps = static_cast<float>(call.norm->eps);
    shape.norm = GemvNormPrologue{call.norm->stat, call.norm->cast};
  }
  for (size_t k = 0; k < call.inputs.size(); ++k) {
    shape.is_range.push_back(call.columns[k] >= 0);
    if (call.columns[k] >= 0) {
      args.columns.push_back(call.columns[k]);
      continue;
    }
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, glue::dev(kGemvGroup, call.inputs[k]));
    auto folded = fold_rows(d);
    if (!folded) return run_apart(session, call, sizes);
    args.inputs.push_back(*folded);
  }
  for (const Tensor& t : call.outputs) {
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor d, glue::dev(kGemvGroup, t));
    auto folded = fold_rows(d);
    if (!folded) return run_apart(session, call, sizes);
    args.outputs.push_back(*folded);
  }
  SPLICE_ASSIGN_OR_RETURN(int sm_count, current_sm_count());
  const auto launch = plan_gemv_epilogue(args, sm_count);
  if (!launch) return run_apart(session, call, sizes);
  SPLICE_ASSIGN_OR_RETURN(auto prepared, PreparedGemvEpilogue::prepare(shape));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, session.scratch(launch->partial_bytes));
  session.make_current();
  float* partials = launch->partial_bytes ? static_cast<float*>(scratch.data) : nullptr;
  SPLICE_TRY(prepared->launch(args, *launch, call.program->constants, partials,
                              session.matmul().gemv_counters(), session.launch()));
  session.matmul().count_gemv_launch();
  return ok_result();
}

}  // namespace splice::cuda
