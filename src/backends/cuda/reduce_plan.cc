// Host-side planning of reduction launches (see reduce_plan.h): PyTorch's dim-list rules, the
// output shape check, the kernel's walk order over kept and reduced dims, and the block shape
// and split count. Plain C++ so that every decision is unit-tested on a machine without a GPU.
#include "backends/cuda/reduce_plan.h"

#include <algorithm>
#include <numeric>

#include "tensor/tensor.h"

namespace splice::cuda {

namespace {

int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

Shape to_shape(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

}  // namespace

Result<std::vector<bool>> reduced_dims(std::string_view op, int64_t rank,
                                       const std::optional<std::vector<int64_t>>& dims,
                                       bool empty_means_all) {
  std::vector<bool> reduced(static_cast<size_t>(rank), !dims || (dims->empty() && empty_means_all));
  if (!dims) return reduced;
  for (int64_t d : *dims) {
    const int64_t bound = std::max<int64_t>(rank, 1);  // a 0-d tensor accepts -1 and 0
    SPLICE_CHECK_OR_RETURN(d >= -bound && d < bound, ErrorKind::kOutOfRange,
                           "{}: dim {} is out of range for a tensor of rank {}", op, d, rank);
    if (rank == 0) continue;
    const int64_t w = d < 0 ? d + rank : d;
    SPLICE_CHECK_OR_RETURN(!reduced[w], ErrorKind::kBadInput, "{}: dim {} appears twice", op, w);
    reduced[w] = true;
  }
  return reduced;
}

std::vector<int64_t> reduced_shape(std::span<const int64_t> sizes, const std::vector<bool>& reduced,
                                   bool keepdim) {
  std::vector<int64_t> shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!reduced[d])
      shape.push_back(sizes[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

void merge_dims(Shape& sizes, std::vector<std::vector<int64_t>*> strides) {
  std::vector<int64_t> merged = sizes;
  merge_dims(merged, std::move(strides));
  sizes = merged;
}

void merge_dims(std::vector<int64_t>& sizes, std::vector<std::vector<int64_t>*> strides) {
  std::vector<int64_t> new_sizes;
  std::vector<std::vector<int64_t>> new_strides(strides.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !new_sizes.empty();
    for (size_t i = 0; merge && i < strides.size(); ++i)
      merge = new_strides[i].back() == (*strides[i])[d] * sizes[d];
    if (merge) {
      new_sizes.back() *= sizes[d];
      for (size_t i = 0; i < strides.size(); ++i) new_strides[i].back() = (*strides[i])[d];
    } else {
      new_sizes.push_back(sizes[d]);
      for (size_t i = 0; i < strides.size(); ++i) new_strides[i].push_back((*strides[i])[d]);
    }
  }
  sizes = std::move(new_sizes);
  for (size_t i = 0; i < strides.size(); ++i) *strides[i] = std::move(new_strides[i]);
}

Result<ReduceLayout> plan_reduce_layout(std::string_view op, const DeviceTensor& in,
                                        const std::vector<bool>& reduced, bool keepdim,
                                        std::span<const DeviceTensor* const> outputs,
                                        bool keep_reduced_order) {
  SPLICE_CHECK_OR_RETURN(in.rank >= 0 && in.rank <= kMaxDims, ErrorKind::kShapeMismatch,
                         "{}: input rank {} exceeds {}", op, in.rank, kMaxDims);
  SPLICE_CHECK_OR_RETURN(static_cast<int64_t>(reduced.size()) == in.rank, ErrorKind::kInternal,
                         "{}: {} reduced-dim flags for a rank-{} input", op, reduced.size(),
                         in.rank);
  SPLICE_CHECK_OR_RETURN(outputs.size() >= 1 && outputs.size() <= kMaxReduceOutputs,
                         ErrorKind::kInternal, "{}: {} outputs", op, outputs.size());
  const Shape in_shape = to_shape(in);
  const Shape expected = reduced_shape(in_shape, reduced, keepdim);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Shape got = to_shape(*outputs[i]);
    SPLICE_CHECK_OR_RETURN(got == expected, ErrorKind::kShapeMismatch,
                           "{}: output {} has shape {}, expected {} (input {}, keepdim={})", op, i,
                           shape_string(got), shape_string(expected), shape_string(in_shape),
                           keepdim);
  }
  ReduceLayout layout;
  struct Dim {
    int64_t size, in_stride, out_stride[kMaxReduceOutputs];
  };
  std::vector<Dim> kept, red;
  int out_dim = 0;
  for (int d = 0; d < in.rank; ++d) {
    Dim dim{in.sizes[d], in.strides[d], {0, 0}};
    if (reduced[d]) {
      layout.count *= in.sizes[d];
      red.push_back(dim);
      if (keepdim) ++out_dim;
      continue;
    }
    layout.num_outputs *= in.sizes[d];
    for (size_t i = 0; i < outputs.size(); ++i) dim.out_stride[i] = outputs[i]->strides[out_dim];
    ++out_dim;
    kept.push_back(dim);
  }
  const auto by_stride = [](const Dim& a, const Dim& b) { return a.in_stride > b.in_stride; };
  std::stable_sort(kept.begin(), kept.end(), by_stride);
  if (!keep_reduced_order) std::stable_sort(red.begin(), red.end(), by_stride);
  for (const Dim& d : kept) {
    layout.kept_sizes.push_back(d.size);
    layout.kept_in_strides.push_back(d.in_stride);
    for (int i = 0; i < kMaxReduceOutputs; ++i)
      layout.kept_out_strides[i].push_back(d.out_stride[i]);
  }
  for (const Dim& d : red) {
    layout.red_sizes.push_back(d.size);
    layout.red_in_strides.push_back(d.in_stride);
  }
  merge_dims(layout.kept_sizes,
             {&layout.kept_in_strides, &layout.kept_out_strides[0], &layout.kept_out_strides[1]});
  merge_dims(layout.red_sizes, {&layout.red_in_strides});
  if (layout.count == 0) {  // nothing is read: no reduced dims to walk
    layout.red_sizes.clear();
    layout.red_in_strides.clear();
  }
  return layout;
}

ReduceSchedule plan_reduce_schedule(const ReduceLayout& layout, int sm_count, size_t acc_bytes,
                                    size_t scratch_bytes) {
  ReduceSchedule s;
  const int64_t outputs = std::max<int64_t>(layout.num_outputs, 1);
  const int64_t count = layout.count;
  const int64_t target_blocks = 4 * static_cast<int64_t>(std::max(sm_count, 1));
  constexpr int64_t kMinPerThread = 16;  // elements each thread should read before splitting
  const int64_t red_stride = layout.red_in_strides.empty() ? 0 : layout.red_in_strides.back();
  const int64_t kept_stride =
      layout.kept_in_strides.empty() ? INT64_MAX : layout.kept_in_strides.back();
  const bool along_outputs = count > 1 && kept_stride < red_stride;
  int64_t bx, by, step;
  if (!along_outputs) {
    s.mode = ReduceSchedule::Mode::kAlongReduction;
    bx = std::min<int64_t>(pow2_ceil(std::max<int64_t>(count, 1)), 32);
    by = std::max<int64_t>(1, std::min<int64_t>(256 / bx, pow2_ceil(outputs)));
    // Too few outputs to fill the GPU: more threads per output (up to 512 per block).
    while (bx < 512 && ceil_div(outputs, by) < target_blocks && count >= bx * 2 * kMinPerThread) {
      bx *= 2;
      if (bx * by > 512) by /= 2;
    }
    // Whole warps only (the warp shuffles use a full mask): spare rows get no output.
    if (bx * by < 32) by = 32 / bx;
    s.outputs_per_block = by;
    step = bx;
  } else {
    s.mode = ReduceSchedule::Mode::kAlongOutputs;
    bx = std::min<int64_t>(pow2_ceil(outputs), 32);
    by = std::max<int64_t>(1, std::min<int64_t>(256 / bx, pow2_ceil(count)));
    if (bx * by < 32) by = 32 / bx;  // whole warps only
    s.outputs_per_block = bx;
    step = by;
  }
  s.block_x = static_cast<int>(bx);
  s.block_y = static_cast<int>(by);
  s.output_blocks = ceil_div(outputs, s.outputs_per_block);
  int64_t splits = 1;
  if (s.output_blocks < target_blocks && count > step * kMinPerThread) {
    splits =
        std::min(ceil_div(target_blocks, s.output_blocks), ceil_div(count, step * kMinPerThread));
    splits = std::min<int64_t>(splits, 65535);
    const size_t per_split = static_cast<size_t>(outputs) * acc_bytes;
    const int64_t fit = per_split == 0 ? 0 : static_cast<int64_t>(scratch_bytes / per_split);
    splits = std::min(splits, fit);
    if (splits < 2) splits = 1;
  }
  s.split_chunk = ceil_div(std::max<int64_t>(count, 1), splits);
  s.splits = splits == 1 ? 1 : ceil_div(count, s.split_chunk);
  s.grid_x = std::min<int64_t>(s.output_blocks, int64_t{1} << 30);
  return s;
}

}  // namespace splice::cuda
