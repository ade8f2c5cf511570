// Lane planning for one-dim kernels (see lane_plan.h): shape checks, dim wrapping, the stride
// along the dim, and the other dims merged for cheap lane offsets.
#include "backends/cuda/lane_plan.h"

#include "backends/cuda/reduce_plan.h"
#include "tensor/tensor.h"

namespace splice::cuda {

Result<LanePlan> plan_lanes(std::string_view op, std::span<const DeviceTensor* const> operands,
                            int64_t dim) {
  const DeviceTensor& first = *operands[0];
  const int rank = first.rank;
  SPLICE_CHECK_OR_RETURN(rank >= 0 && rank <= kMaxDims, ErrorKind::kShapeMismatch,
                         "{}: rank {} exceeds {}", op, rank, kMaxDims);
  const Shape shape(first.sizes.begin(), first.sizes.begin() + rank);
  for (size_t i = 1; i < operands.size(); ++i) {
    const DeviceTensor& t = *operands[i];
    const Shape other(t.sizes.begin(), t.sizes.begin() + std::max(0, std::min(t.rank, kMaxDims)));
    SPLICE_CHECK_OR_RETURN(t.rank == rank && other == shape, ErrorKind::kShapeMismatch,
                           "{}: operand {} has shape {}, expected {}", op, i, shape_string(other),
                           shape_string(shape));
  }
  const int64_t bound = std::max(rank, 1);
  SPLICE_CHECK_OR_RETURN(dim >= -bound && dim < bound, ErrorKind::kOutOfRange,
                         "{}: dim {} is out of range for a tensor of rank {}", op, dim, rank);
  if (dim < 0) dim += bound;
  LanePlan plan;
  plan.lane_strides.resize(operands.size());
  plan.elem_strides.assign(operands.size(), 0);
  if (rank == 0) return plan;
  plan.length = first.sizes[dim];
  for (size_t i = 0; i < operands.size(); ++i) plan.elem_strides[i] = operands[i]->strides[dim];
  for (int d = 0; d < rank; ++d) {
    if (d == dim) continue;
    plan.lanes *= first.sizes[d];
    plan.lane_sizes.push_back(first.sizes[d]);
    for (size_t i = 0; i < operands.size(); ++i)
      plan.lane_strides[i].push_back(operands[i]->strides[d]);
  }
  std::vector<std::vector<int64_t>*> strides;
  for (auto& s : plan.lane_strides) strides.push_back(&s);
  merge_dims(plan.lane_sizes, strides);
  const int64_t inner = plan.lane_sizes.empty() ? 0 : plan.lane_strides[0].back();
  plan.lanes_contiguous = plan.length > 1 && inner == 1 && plan.elem_strides[0] != 1;
  return plan;
}

}  // namespace splice::cuda
