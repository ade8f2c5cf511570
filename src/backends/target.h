#pragma once
// A backend's capabilities as plain data: what planning reads instead of calling a backend
// (so a plan can be made for a backend this machine cannot run). Built from the backend's
// kernel table (Backend::target()) or by hand in tests.

#include <span>
#include <string>
#include <vector>

#include "backends/kernel_abi.h"
#include "ir/pointwise.h"
#include "support/dtype_set.h"
#include "support/error.h"

namespace splice::backend {

// What planning needs of a backend: its name and each op's kernel capabilities.
struct Target {
  std::string name;            // "cpu", "cuda"
  std::vector<uint32_t> caps;  // KernelCaps by OpId
  std::vector<bool> kernels;   // by OpId: whether the backend has a kernel
  // By OpId: the dtypes its kernel runs (KernelEntry::dtypes); empty where it has none. A
  // Target made by hand without this table runs every dtype of the ops it supports.
  std::vector<DTypeSet> dtypes;
  // By ir::PointwiseFn: the compute classes (ir::PointwiseComputeClass bits) in which
  // Backend::run_pointwise runs the function. Empty: the backend runs no pointwise groups,
  // and the planner forms none for it.
  std::vector<uint8_t> pointwise_classes;
  // Whether Backend::run_rms_norm runs an RMSNorm chain (with the residual add before it) as
  // one kernel: the planner then forms RMSNorm groups (plan/norm_fusion.h) for this backend.
  bool fused_rms_norm = false;
  // Whether Backend::run_gemv_epilogue runs a GEMV product with the pointwise group that reads
  // it as one kernel: the planner then forms GEMV-epilogue groups (plan/gemv_epilogue.h).
  bool gemv_epilogue = false;
  int gemv_epilogue_max_operands = 0;  // its kernel's most operands (0: no limit)
  // Matrix products (plan/matmul_kernels.h): products of at most gemv_max_rows rows in
  // float16, bfloat16 or float32 run the backend's GEMV kernels, the rest its GEMM library
  // (gemm_library, "cublaslt"). 0: one kernel for every shape (the CPU); nothing is recorded.
  int64_t gemv_max_rows = 0;
  std::string gemm_library;
  // The most operands (inputs + outputs) and constants one pointwise group's kernel takes;
  // 0: no limit (the CPU's interpreter). The planner keeps every group within them.
  int pointwise_max_operands = 0;
  int pointwise_max_constants = 0;

  bool supports(ir::OpId op) const { return kernels.at(static_cast<size_t>(op)); }
  // Whether the backend's kernel for `op` runs `dtype` (false when it has no kernel).
  bool runs(ir::OpId op, DType dtype) const {
    const size_t i = static_cast<size_t>(op);
    return supports(op) && (i >= dtypes.size() || dtypes[i].contains(dtype));
  }
  // kUnsupportedOp naming the op (its ATen overload), the dtype, the backend and the dtypes
  // it does run, when the backend has no kernel for `op` on `dtype` tensors. `dtype` is the
  // node's dispatch dtype, the one a kernel switches on: its first tensor argument's
  // (`self`, `input`, `query`, the first tensor of a Tensor[] such as cat's), or, for an op
  // without tensor arguments (a factory such as zeros or arange), its first output's
  // (runtime/kernel_check.h finds it).
  Result<void> check_runs(ir::OpId op, DType dtype) const;
  bool has(ir::OpId op, KernelCaps c) const { return (caps.at(static_cast<size_t>(op)) & c) != 0; }
  // Whether run_pointwise runs `fn` computing in `compute`.
  bool runs_pointwise(ir::PointwiseFn fn, DType compute) const;
  // The target of a kernel table.
  static Target from_kernels(std::string name, std::span<const KernelEntry> kernels);
};

}  // namespace splice::backend
