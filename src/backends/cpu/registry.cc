// The CPU kernel table: merges each op family's entries once (each states its capabilities
// where it is registered), and answers lookups by target for tests and composite kernels.
#include "backends/cpu/registry.h"

#include <algorithm>

#include "backends/cpu/args.h"

namespace splice::cpu {

std::span<const KernelEntry> kernels() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> v;
    for (auto table : {view_kernels(),      copy_kernels(),
                       factory_kernels(),   binary_kernels(),
                       unary_kernels(),     compare_kernels(),
                       reduce_kernels(),    matmul_kernels(),
                       cat_kernels(),       scatter_kernels(),
                       index_kernels(),     nn_kernels(),
                       attention_kernels(), gather_scatter_kernels(),
                       minmax_kernels(),    extrema_kernels(),
                       repeat_kernels(),    pointwise_more_kernels(),
                       shape_op_kernels(),  defined_pointwise_kernels()}) {
      v.insert(v.end(), table.begin(), table.end());
    }
    // native_group_norm (composite_math.cc); the CompositeImplicit ops that file used to run
    // are decomposed before any backend (decompose_composites).
    for (auto table : {composite_math_kernels()}) v.insert(v.end(), table.begin(), table.end());
    const auto sorts = sort_kernels();  // sort, sort.stable, topk (sort.cc)
    v.insert(v.end(), sorts.begin(), sorts.end());
    std::sort(v.begin(), v.end(),
              [](const KernelEntry& a, const KernelEntry& b) { return a.op < b.op; });
    return v;
  }();
  return entries;
}

KernelFn find_kernel(std::string_view target) {
  const ir::OpSchema* op = ir::find_op(target);
  if (op == nullptr) return nullptr;
  const auto& v = kernels();
  auto it = std::lower_bound(v.begin(), v.end(), op->id,
                             [](const KernelEntry& e, ir::OpId id) { return e.op < id; });
  if (it == v.end() || it->op != op->id) return nullptr;
  return it->fn;
}

std::vector<std::string> kernel_targets() {
  std::vector<std::string> out;
  for (const KernelEntry& e : kernels()) out.emplace_back(ir::op_target(e.op));
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<Tensor>> call_kernel(KernelFn kernel, std::span<const KernelArg> args) {
  return kernel(KernelCall{}, args);
}

}  // namespace splice::cpu
