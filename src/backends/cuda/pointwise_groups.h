#pragma once
// Pointwise groups on the GPU (Backend::run_pointwise; plan/fusion.h forms them): a group's
// PointwiseProgram is one generated kernel (pointwise_codegen.h, the same generator every single
// pointwise op goes through), reading its inputs broadcast to the iteration space and storing
// each output into its planned view, so its intermediates never reach memory.
//
// The planner forms groups of the functions and compute classes gpu_pointwise_classes() lists:
// every function the generator has an expression for, but integer division and remainder
// (whose division by zero is a device check the step would have to wait for).

#include <cstdint>
#include <span>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "ir/pointwise.h"

namespace splice::cuda {

// By ir::PointwiseFn: the compute classes a group may compute it in on the GPU.
std::vector<uint8_t> gpu_pointwise_classes();

Result<void> run_pointwise_group(CudaSession& session, const ir::PointwiseProgram& program,
                                 std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                                 const Shape& sizes);

// An RMSNorm group (Backend::run_rms_norm; plan/norm_fusion.h forms them): norm.h's
// fused_rms_norm on the session's stream.
Result<void> run_rms_norm_group(CudaSession& session, const backend::RmsNormCall& call);

// A GEMV-epilogue group (Backend::run_gemv_epilogue; plan/gemv_epilogue.h forms them): one
// gemv_epilogue.h kernel when the product's operands fit it, else the product (matmul.h) into
// a temporary and the epilogue as a pointwise group over its columns.
Result<void> run_gemv_epilogue_group(CudaSession& session, const backend::GemvEpilogueCall& call);

}  // namespace splice::cuda
