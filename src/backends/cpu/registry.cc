// The target → kernel table: merges each op family's entries once, sorted by target, and
// answers find_kernel by binary search. No mutable global state besides the thread count.
#include "backends/cpu/registry.h"

#include <algorithm>
#include <atomic>

#include "backends/cpu/args.h"

// OpenBLAS's own thread count (libopenblas; not in the cblas header).
extern "C" void openblas_set_num_threads(int);

namespace splice::cpu {

namespace {

const std::vector<KernelEntry>& all_entries() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> v;
    for (auto table :
         {view_kernels(), copy_kernels(), factory_kernels(), binary_kernels(), unary_kernels(),
          compare_kernels(), reduce_kernels(), matmul_kernels(), cat_kernels(), scatter_kernels(),
          index_kernels(), nn_kernels(), attention_kernels(), gather_scatter_kernels(),
          minmax_kernels(), extrema_kernels(), repeat_kernels(), pointwise_more_kernels(),
          shape_op_kernels()}) {
      v.insert(v.end(), table.begin(), table.end());
    }
    // diagonal and native_group_norm (composite.cc, composite_math.cc); the CompositeImplicit
    // ops those files used to run are decomposed before any backend (decompose_composites).
    for (auto table : {composite_kernels(), composite_math_kernels()})
      v.insert(v.end(), table.begin(), table.end());
    std::sort(v.begin(), v.end(),
              [](const KernelEntry& a, const KernelEntry& b) { return a.target < b.target; });
    return v;
  }();
  return entries;
}

std::atomic<int> g_num_threads{1};

}  // namespace

KernelFn find_kernel(std::string_view target) {
  const auto& v = all_entries();
  auto it = std::lower_bound(v.begin(), v.end(), target,
                             [](const KernelEntry& e, std::string_view t) { return e.target < t; });
  if (it == v.end() || it->target != target) return nullptr;
  return it->fn;
}

std::vector<std::string> kernel_targets() {
  std::vector<std::string> out;
  for (const KernelEntry& e : all_entries()) out.emplace_back(e.target);
  return out;
}

bool writes_strided_destination(std::string_view target) {
  // Checked by hand: each allocates its output with new_tensor/output_or_new before any
  // scratch tensor and writes every element through the output's strides.
  static constexpr std::string_view kTargets[] = {
      "aten._to_copy.default", "aten.abs.default",     "aten.add.Scalar",
      "aten.add.Tensor",       "aten.clone.default",   "aten.copy.default",
      "aten.cos.default",      "aten.div.Scalar",      "aten.div.Tensor",
      "aten.exp.default",      "aten.gelu.default",    "aten.lift_fresh_copy.default",
      "aten.mul.Scalar",       "aten.mul.Tensor",      "aten.neg.default",
      "aten.pow.Tensor_Scalar", "aten.reciprocal.default", "aten.relu.default",
      "aten.rsqrt.default",    "aten.rsub.Scalar",     "aten.sigmoid.default",
      "aten.silu.default",     "aten.sin.default",     "aten.sqrt.default",
      "aten.sub.Scalar",       "aten.sub.Tensor",      "aten.tanh.default",
      "aten.where.self",
  };
  return std::find(std::begin(kTargets), std::end(kTargets), target) != std::end(kTargets);
}

bool writes_in_place(std::string_view target) {
  return target == "aten.slice_scatter.default" || target == "aten.select_scatter.default" ||
         target == "aten.index_put.default" || target == "aten.index_copy.default";
}

void set_num_threads(int n) {
  const int threads = n < 1 ? 1 : n;
  g_num_threads.store(threads);
  openblas_set_num_threads(threads);  // matmul's BLAS calls use the same budget
}
int num_threads() { return g_num_threads.load(); }

}  // namespace splice::cpu
