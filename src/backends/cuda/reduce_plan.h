#pragma once
// Host-side planning of a reduction kernel launch (plain C++, no CUDA needed, unit-tested
// without a GPU): which input dims are reduced (PyTorch's dim-list rules), the output shape
// check, the layout the kernel walks (kept and reduced dims with size-1 dims dropped,
// reordered by stride so the fastest-moving dim is innermost, adjacent contiguous dims merged)
// and the schedule (threads along the reduction or along the outputs, block shape, how many
// blocks split each reduction).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"
#include "tensor/shape.h"

namespace splice::cuda {

// Which dims of a rank-`rank` tensor a reduction folds. dims nullopt: every dim; an empty
// list: every dim when empty_means_all (sum, mean, amax, var, norm) and none otherwise (any,
// all). Dims wrap like PyTorch's (a 0-d tensor accepts -1 and 0); a repeated dim is an error.
Result<std::vector<bool>> reduced_dims(std::string_view op, int64_t rank,
                                       const std::optional<std::vector<int64_t>>& dims,
                                       bool empty_means_all);

// The output shape of reducing `sizes` over `reduced` (kept as size 1 with keepdim).
std::vector<int64_t> reduced_shape(std::span<const int64_t> sizes, const std::vector<bool>& reduced,
                                   bool keepdim);

// Up to two outputs of the same shape (values and indices, var and mean).
inline constexpr int kMaxReduceOutputs = 2;

struct ReduceLayout {
  // Kept dims (each output element), outermost first: size, input stride, output strides.
  std::vector<int64_t> kept_sizes, kept_in_strides;
  std::vector<int64_t> kept_out_strides[kMaxReduceOutputs];
  // Reduced dims, outermost first: size, input stride.
  std::vector<int64_t> red_sizes, red_in_strides;
  int64_t num_outputs = 1;  // product of kept sizes
  int64_t count = 1;        // elements reduced into each output (product of reduced sizes)
};

// Checks that each output has the reduction's shape (reduced_shape with keepdim) and builds
// the layout. keep_reduced_order: the reduced dims stay in logical order (the kernel's linear
// reduction index is then the row-major index over them, as argmax reports); otherwise they
// are sorted by stride so the innermost has the smallest.
Result<ReduceLayout> plan_reduce_layout(std::string_view op, const DeviceTensor& in,
                                        const std::vector<bool>& reduced, bool keepdim,
                                        std::span<const DeviceTensor* const> outputs,
                                        bool keep_reduced_order);

struct ReduceSchedule {
  // kAlongReduction: threadIdx.x walks the reduction (reduced dim is the fast one in memory);
  // kAlongOutputs: threadIdx.x walks consecutive outputs and threadIdx.y the reduction.
  enum class Mode { kAlongReduction, kAlongOutputs } mode = Mode::kAlongReduction;
  int block_x = 1, block_y = 1;
  int64_t outputs_per_block = 1;
  int64_t output_blocks = 1;  // ceil(num_outputs / outputs_per_block)
  int64_t grid_x = 1;         // blocks along outputs (loops when output_blocks is larger)
  int64_t splits = 1;         // blocks along each reduction (grid y); > 1 needs scratch
  int64_t split_chunk = 0;    // reduction elements per split
};

// The launch shape for `layout` on a GPU with `sm_count` multiprocessors, given the
// accumulator size and the scratch available for split partials ([outputs][splits] of
// accumulators): split only when the outputs alone cannot fill the GPU.
ReduceSchedule plan_reduce_schedule(const ReduceLayout& layout, int sm_count, size_t acc_bytes,
                                    size_t scratch_bytes);

// Drops size-1 dims and merges adjacent dims whose strides make them one dim in every operand:
// sizes and each strides vector (outermost first) are rewritten in place.
void merge_dims(std::vector<int64_t>& sizes, std::vector<std::vector<int64_t>*> strides);
// The same for a tensor's Shape.
void merge_dims(Shape& sizes, std::vector<std::vector<int64_t>*> strides);

}  // namespace splice::cuda
