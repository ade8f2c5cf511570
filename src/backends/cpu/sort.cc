// The sort family: sort, sort.stable and topk along one dim, per lane, lanes spread over the
// model's thread pool. Every lane is ordered with PyTorch's CPU comparator: NaN is larger than
// every number and ties with NaN, -0.0 ties with 0.0, descending puts the largest (NaN) first.
//
// sort and sort.stable are both a stable sort (equal elements keep the lower index first, in
// either direction): O(n log n) time and O(n) memory per lane. For sort.stable that is
// PyTorch's order; for an unstable sort PyTorch leaves the order of ties unspecified (its CPU
// kernel uses x86-simd-sort or std::sort, whose order changes with the machine), and splice
// gives the stable order.
//
// topk(self, k, dim, largest, sorted) follows ATen's CPU algorithm step for step, so ties and
// sorted=False come out in eager's order rather than in index order: a queue of (value, index)
// pairs in index order, then std::partial_sort of the first k when k * 64 <= n (O(n log k)),
// else std::nth_element at k - 1 followed, when sorted, by std::sort of the first k - 1. The
// permutation these standard algorithms produce depends only on the comparisons they make, so
// with eager's comparator it is eager's (with libstdc++, which PyTorch's Linux builds use). The
// values written are self's own elements (NaN payloads and -0.0 kept).
#include <algorithm>
#include <cmath>
#include <utility>

#include "backends/cpu/args.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/reduce_plan.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

// The type a lane is compared in: float for the 16-bit floats (exact), the element type
// otherwise.
template <typename T>
using sort_key_t = opmath_t<T>;

template <typename K>
bool is_nan_key(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// PyTorch's "a sorts before b": ascending puts NaN last, descending puts NaN first.
template <typename K>
bool before_ascending(K a, K b) {
  return (!is_nan_key(a) && is_nan_key(b)) || a < b;
}
template <typename K>
bool before_descending(K a, K b) {
  return (is_nan_key(a) && !is_nan_key(b)) || a > b;
}

// A lane's elements along dim: lane i starts at in_base[i] in self, values_base[i] in values
// and indices_base[i] in indices (the outputs may differ in layout: values can be a planned
// destination), each with its own stride along dim.
struct Lanes {
  std::vector<int64_t> in_base, values_base, indices_base;
  int64_t in_stride = 0, values_stride = 0, indices_stride = 0;
  int64_t in_length = 1;
};

// The lanes are numbered alike (row-major over the other dims) in self and in the outputs.
Lanes plan_sort_lanes(const Tensor& self, const Tensor& values, const Tensor& indices,
                      int64_t dim) {
  Lanes lanes;
  lanes.in_length = lane_size(self, dim);
  lanes.in_stride = lane_stride(self, dim);
  lanes.values_stride = lane_stride(values, dim);
  lanes.indices_stride = lane_stride(indices, dim);
  const int64_t count = self.dim() == 0 ? 1 : self.numel() / std::max<int64_t>(lanes.in_length, 1);
  for (auto* v : {&lanes.in_base, &lanes.values_base, &lanes.indices_base})
    v->resize(static_cast<size_t>(count));
  if (lanes.in_length == 0) return lanes;
  for_each_lane(self, dim, [&](int64_t i, int64_t base) { lanes.in_base[i] = base; });
  for_each_lane(values, dim, [&](int64_t i, int64_t base) { lanes.values_base[i] = base; });
  for_each_lane(indices, dim, [&](int64_t i, int64_t base) { lanes.indices_base[i] = base; });
  return lanes;
}

// Runs fn(lane) for every lane, lanes split across threads (each lane is sorted by one thread,
// so the result does not depend on the thread count).
template <typename F>
void for_each_lane_parallel(const Lanes& lanes, F&& fn) {
  const auto count = static_cast<int64_t>(lanes.in_base.size());
  const int64_t grain =
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(lanes.in_length, 1));
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t lane = begin; lane < end; ++lane) fn(lane);
  });
}

// sort(self, int dim=-1, bool descending=False) and
// sort.stable(self, *, bool? stable, int dim=-1, bool descending=False).
template <bool kStableOverload>
Result<Outputs> sort(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  constexpr size_t kDimArg = kStableOverload ? 2 : 1;
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dim_arg, a.opt_integer(kDimArg));
  SPLICE_ASSIGN_OR_RETURN(bool descending, a.boolean_or(kDimArg + 1, false));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim,
                          wrap_dim(op, dim_arg.value_or(-1), std::max<int64_t>(self.dim(), 1)));
  SPLICE_ASSIGN_OR_RETURN(Tensor values, new_tensor(op, self.dtype(), self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor indices, new_tensor(op, DType::kInt64, self.sizes()));
  if (self.numel() == 0) return Outputs{values, indices};
  const Lanes lanes = plan_sort_lanes(self, values, indices, dim);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* in = self.data<T>();
    T* out_values = values.data<T>();
    int64_t* out_indices = indices.data<int64_t>();
    const int64_t n = lanes.in_length;
    for_each_lane_parallel(lanes, [&](int64_t lane) {
      std::vector<std::pair<K, int64_t>> row(static_cast<size_t>(n));
      const T* src = in + lanes.in_base[lane];
      for (int64_t j = 0; j < n; ++j) row[j] = {to_opmath(src[j * lanes.in_stride]), j};
      if (descending) {
        std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) {
          return before_descending(x.first, y.first);
        });
      } else {
        std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) {
          return before_ascending(x.first, y.first);
        });
      }
      T* lane_values = out_values + lanes.values_base[lane];
      int64_t* lane_indices = out_indices + lanes.indices_base[lane];
      for (int64_t j = 0; j < n; ++j) {
        lane_values[j * lanes.values_stride] = src[row[j].second * lanes.in_stride];
        lane_indices[j * lanes.indices_stride] = row[j].second;
      }
    });
  });
  return Outputs{values, indices};
}

// ATen's topk on one lane: the first k entries of `queue` (pairs in index order on entry) are
// left holding the result, in eager's order.
template <typename K, typename Before>
void topk_lane(std::vector<std::pair<K, int64_t>>& queue, int64_t k, bool sorted, Before before) {
  auto cmp = [&](const std::pair<K, int64_t>& x, const std::pair<K, int64_t>& y) {
    return before(x.first, y.first);
  };
  const auto n = static_cast<int64_t>(queue.size());
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), cmp);
    return;
  }
  std::nth_element(queue.begin(), queue.begin() + (k - 1), queue.end(), cmp);
  // nth_element leaves element k - 1 in its sorted place, so only those before it are sorted.
  if (sorted) std::sort(queue.begin(), queue.begin() + (k - 1), cmp);
}

// topk(self, SymInt k, int dim=-1, bool largest=True, bool sorted=True).
Result<Outputs> topk(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t k, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dim_arg, a.opt_integer(2));
  SPLICE_ASSIGN_OR_RETURN(bool largest, a.boolean_or(3, true));
  SPLICE_ASSIGN_OR_RETURN(bool sorted, a.boolean_or(4, true));
  KCHECK(self.dtype() != DType::kBool, ErrorKind::kBadInput,
         "topk does not support bool dtypes on CPU");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim,
                          wrap_dim(op, dim_arg.value_or(-1), std::max<int64_t>(self.dim(), 1)));
  const int64_t n = lane_size(self, dim);
  KCHECK(k >= 0 && k <= n, ErrorKind::kOutOfRange,
         "selected index k out of range (k = {}, {} elements along dim {})", k, n, dim);
  Shape shape = self.sizes();
  if (!shape.empty()) shape[dim] = k;
  SPLICE_ASSIGN_OR_RETURN(Tensor values, new_tensor(op, self.dtype(), shape));
  SPLICE_ASSIGN_OR_RETURN(Tensor indices, new_tensor(op, DType::kInt64, shape));
  if (self.dim() == 0) {
    // A 0-d tensor is one element: eager returns it (and index 0) even for k = 0.
    dispatch_dtype(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      *values.data<T>() = *self.data<T>();
    });
    *indices.data<int64_t>() = 0;
    return Outputs{values, indices};
  }
  if (values.numel() == 0) return Outputs{values, indices};
  const Lanes lanes = plan_sort_lanes(self, values, indices, dim);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* in = self.data<T>();
    T* out_values = values.data<T>();
    int64_t* out_indices = indices.data<int64_t>();
    for_each_lane_parallel(lanes, [&](int64_t lane) {
      std::vector<std::pair<K, int64_t>> queue(static_cast<size_t>(n));
      const T* src = in + lanes.in_base[lane];
      for (int64_t j = 0; j < n; ++j) queue[j] = {to_opmath(src[j * lanes.in_stride]), j};
      if (largest)
        topk_lane(queue, k, sorted, before_descending<K>);
      else
        topk_lane(queue, k, sorted, before_ascending<K>);
      T* lane_values = out_values + lanes.values_base[lane];
      int64_t* lane_indices = out_indices + lanes.indices_base[lane];
      for (int64_t j = 0; j < k; ++j) {
        lane_values[j * lanes.values_stride] = src[queue[j].second * lanes.in_stride];
        lane_indices[j * lanes.indices_stride] = queue[j].second;
      }
    });
  });
  return Outputs{values, indices};
}

}  // namespace

std::span<const KernelEntry> sort_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::sort, sort<false>>(),
      entry<OpId::sort_stable, sort<true>>(),
      entry<OpId::topk, topk>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
