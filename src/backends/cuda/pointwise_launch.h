#pragma once
// Launching a PointwiseProgram on the GPU: operands are DeviceTensors (inputs broadcast to the
// outputs' shape by numpy rules; outputs may be strided views of larger buffers, e.g. the slice
// a producer writes into), constants come from the program, and the kernel is generated,
// compiled with NVRTC and cached on first use (pointwise_codegen.h, nvrtc_compiler.h).
//
// An operand may start at a position read from device memory when the kernel runs (a KV-cache
// write at a moving position, replayable by a CUDA graph without recapture): its view is the
// view at position 0 and the kernel adds position * stride elements after checking
// 0 <= position <= dim_size - extent; a bad position records kPositionOutOfRange in the error
// word and the kernel writes nothing.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/launch_context.h"
#include "backends/cuda/pointwise_codegen.h"
#include "ir/pointwise.h"
#include "support/error.h"

namespace splice::cuda {

struct DevicePosition {
  const int64_t* position = nullptr;  // device memory, one int64, read when the kernel runs
  int64_t dim = 0;                    // the base's dim the position moves along (for errors)
  int64_t dim_size = 0;               // that dim's size in the base
  int64_t stride = 0;                 // elements per position step (the base's stride on dim)
  int64_t extent = 1;                 // entries the view covers along dim from the position
};

struct PointwiseOperand {
  DeviceTensor view;
  const DevicePosition* position = nullptr;  // null: the view starts where view.data says
};

// What one launch of a prepared program runs: which of its kernels, how many blocks of
// kPointwiseThreads, and the parameter block (PointwiseParamLayout). Pure host computation
// (checks of the operands against the program, broadcasting, coalescing, the choice between
// the contiguous, vectorised, rows and strided kernels), so tests can inspect it without a GPU.
inline constexpr unsigned kPointwiseThreads = 256;
struct PointwiseLaunchPlan {
  enum class Kernel { kContiguous, kStrided32, kStrided64, kRows4 };
  Kernel kernel = Kernel::kContiguous;
  bool vectorised = false;
  unsigned blocks = 0;  // 0: nothing to do (no elements)
  std::vector<uint64_t> params;
};
Result<PointwiseLaunchPlan> plan_pointwise_launch(
    const ir::PointwiseProgram& program, const PointwiseVariant& variant,
    std::span<const PointwiseOperand> inputs, std::span<const PointwiseOperand> outputs,
    const std::vector<ir::PointwiseConstant>& constants, const LaunchContext& ctx,
    int multiprocessors);

// The program's structure as a compact string: everything its generated source depends on
// (constant values excluded), for the caches of compiled kernels.
std::string pointwise_structure_key(const ir::PointwiseProgram& program,
                                    const PointwiseVariant& variant, int device);

// A program compiled for the current device, ready to launch many times (an executor keeps one
// per plan step). Holds the generated source (for dumps) and the loaded kernels.
class PreparedPointwise {
 public:
  // Cached per process by the program's structure (constant values excluded), variant and
  // device: a repeated prepare neither generates source nor compiles.
  static Result<std::shared_ptr<const PreparedPointwise>> prepare(
      const ir::PointwiseProgram& program, const PointwiseVariant& variant);

  const ir::PointwiseProgram& program() const { return program_; }
  const PointwiseVariant& variant() const { return variant_; }
  const std::string& source() const { return source_; }
  // Whether a kernel can record a failure (integer division, moving positions), so a launch
  // needs an error word.
  bool checks() const { return checks_; }

  // Runs the program over the outputs' shape; constants from `constants` when given (same
  // count and kinds as the program's), else those of the program it was first prepared from.
  Result<void> launch(std::span<const PointwiseOperand> inputs,
                      std::span<const PointwiseOperand> outputs, const LaunchContext& ctx,
                      const std::vector<ir::PointwiseConstant>* constants = nullptr) const;

 private:
  ir::PointwiseProgram program_;
  PointwiseVariant variant_;
  std::string source_;
  bool checks_ = false;
  const void* module_ = nullptr;  // const LoadedModule*
};

// Prepares every one of `programs` (as a group runs it: no device positions), on up to one
// thread per host core, distinct structures first: NVRTC takes ~0.3 s a program on one core,
// and a model's first call would otherwise compile its groups one after another. A program that
// fails to prepare is left to its launch, which reports the error where it happens.
void prepare_all(std::span<const ir::PointwiseProgram* const> programs);

// prepare + launch in one call (the module cache makes repeated calls cheap).
Result<void> launch_pointwise(const ir::PointwiseProgram& program,
                              std::span<const PointwiseOperand> inputs,
                              std::span<const PointwiseOperand> outputs, const LaunchContext& ctx);
// The same for operands without positions.
Result<void> launch_pointwise(const ir::PointwiseProgram& program,
                              std::span<const DeviceTensor> inputs,
                              std::span<const DeviceTensor> outputs, const LaunchContext& ctx);

}  // namespace splice::cuda
