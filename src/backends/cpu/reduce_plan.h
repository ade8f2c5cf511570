#pragma once
// Shared by the reduction files: which dims a reduction folds (ReducePlan) and a walker over
// the 1-D lanes of a tensor along one dim (for max.dim/argmax/cumsum).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "backends/cpu/iter.h"
#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::cpu {

struct ReducePlan {
  Shape out_shape;
  Shape acc_strides;          // per input dim: 0 on reduced dims, else the contiguous output stride
  int64_t count = 1;          // elements reduced into each output
  std::vector<bool> reduced;  // per input dim
};

// dims: nullopt = every dim; an empty list is every dim when empty_means_all (sum, mean, amax,
// var) and no dim otherwise (PyTorch's any/all treat dim=[] as a no-op reduction). Repeated
// dims are an error.
Result<ReducePlan> plan_reduce(std::string_view op, const Tensor& self,
                               const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                               bool empty_means_all = true);

// When `in` is contiguous and the plan reduces exactly its trailing dims (a mean over the
// last dim, an any over a row): the number of output elements, output i reducing the
// plan.count consecutive input elements from i * plan.count; else nullopt.
inline std::optional<int64_t> trailing_rows(const Tensor& in, const ReducePlan& plan) {
  if (!in.is_contiguous() || plan.count <= 0) return std::nullopt;
  bool inside = false;  // past the first reduced dim
  for (bool r : plan.reduced) {
    if (inside && !r) return std::nullopt;
    inside = inside || r;
  }
  return in.numel() / plan.count;
}

// Calls fn(out_index, base) for each lane of `self` along `dim` (an already wrapped dim; any
// dim of a 0-d tensor is one lane of length 1): out_index counts lanes in row-major order of
// the other dims, base is the element offset of the lane's first element. Lane i's element j
// is at base + j * lane_stride(self, dim).
template <typename F>
void for_each_lane(const Tensor& self, int64_t dim, F&& fn) {
  Shape sizes = self.sizes(), strides = self.strides();
  if (!sizes.empty()) {
    sizes.erase(sizes.begin() + dim);
    strides.erase(strides.begin() + dim);
  }
  const Shape out_strides = contiguous_strides(sizes);
  for_each_offset<2>(sizes, {strides.data(), out_strides.data()},
                     [&](const std::array<int64_t, 2>& o) { fn(o[1], o[0]); });
}
inline int64_t lane_size(const Tensor& self, int64_t dim) {
  return self.dim() == 0 ? 1 : self.size(dim);
}
inline int64_t lane_stride(const Tensor& self, int64_t dim) {
  return self.dim() == 0 ? 0 : self.stride(dim);
}

}  // namespace splice::cpu
