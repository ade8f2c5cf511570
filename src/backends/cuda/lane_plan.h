#pragma once
// Host-side planning shared by the kernels that work lane by lane along one dim (softmax,
// cumsum): the lanes are every index of the other dims, each lane is `length` elements apart by
// the dim's stride. The other dims are merged where every operand allows, so most launches
// compute a lane's base offsets with one multiply. Plain C++ (unit-tested without a GPU).

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"

namespace splice::cuda {

struct LanePlan {
  int64_t lanes = 1;                  // product of the other dims
  int64_t length = 1;                 // size of the dim (1 for a 0-d tensor)
  std::vector<int64_t> elem_strides;  // per operand: stride along the dim
  // The other dims (outermost first, merged): sizes and, per operand, strides.
  std::vector<int64_t> lane_sizes;
  std::vector<std::vector<int64_t>> lane_strides;
  // Whether consecutive lanes are adjacent in operand 0 while its lanes are not contiguous:
  // then one thread per lane reads coalesced.
  bool lanes_contiguous = false;
};

// Lanes along `dim` of operands of one shape (operand 0 decides the access pattern). Checks
// that every operand has operand 0's shape and rank <= kMaxDims; wraps dim like PyTorch.
Result<LanePlan> plan_lanes(std::string_view op, std::span<const DeviceTensor* const> operands,
                            int64_t dim);

}  // namespace splice::cuda
