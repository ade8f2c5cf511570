// Launches generated pointwise kernels: checks the operands against the program, builds the
// coalesced iteration space, picks the contiguous (vectorised when aligned) or strided (32- or
// 64-bit index math) kernel, fills the parameter block and launches through the driver API.
#include "backends/cuda/pointwise_launch.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/dependent_launch.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/indexing.h"
#include "backends/cuda/nvrtc_compiler.h"

namespace splice::cuda {

namespace {

bool program_checks(const ir::PointwiseProgram& p, const PointwiseVariant& v) {
  if (v.dynamic_count() > 0) return true;
  for (const ir::PointwiseNode& n : p.nodes) {
    // The kernel-only classes are those that report errors (integer division by zero).
    if ((ir::pointwise_fn_info(n.fn).kernel_only & ir::kComputeInt) != 0 && is_integral(n.compute))
      return true;
  }
  return false;
}

uint64_t constant_bits(const Scalar& s) {
  if (s.is_double()) return std::bit_cast<uint64_t>(s.to_double());
  return static_cast<uint64_t>(s.to_int());
}

std::string operand_label(size_t k, size_t inputs) {
  return k < inputs ? fmt::format("input {}", k) : fmt::format("output {}", k - inputs);
}

}  // namespace

std::string pointwise_structure_key(const ir::PointwiseProgram& p, const PointwiseVariant& v,
                                    int device) {
  std::string key = std::to_string(device) + "|";
  auto put = [&key](int64_t x) { key += std::to_string(x) + ","; };
  for (const auto& in : p.inputs) put(static_cast<int>(in.dtype));
  key += "|";
  for (const auto& c : p.constants) {
    put(static_cast<int>(c.value.kind()));
    put(static_cast<int>(c.dtype));
  }
  key += "|";
  for (const auto& n : p.nodes) {
    put(static_cast<int>(n.fn));
    put(static_cast<int>(n.result));
    put(static_cast<int>(n.compute));
    for (const auto& r : n.operands) {
      put(static_cast<int>(r.kind));
      put(r.index);
    }
    key += ";";
  }
  key += "|";
  for (const auto& o : p.outputs) put(o.node);
  key += "|";
  for (bool d : v.dynamic) key += d ? '1' : '0';
  return key;
}

namespace {

struct PreparedCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const PreparedPointwise>> entries;
};

PreparedCache& prepared_cache() {
  static PreparedCache* c = new PreparedCache();  // never destroyed, as the module cache
  return *c;
}

}  // namespace

Result<std::shared_ptr<const PreparedPointwise>> PreparedPointwise::prepare(
    const ir::PointwiseProgram& program, const PointwiseVariant& variant) {
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  const std::string key = pointwise_structure_key(program, variant, device.ordinal);
  PreparedCache& cache = prepared_cache();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.entries.find(key);
    if (it != cache.entries.end()) return it->second;
  }
  auto prepared = std::make_shared<PreparedPointwise>();
  prepared->program_ = program;
  prepared->variant_ = variant;
  SPLICE_ASSIGN_OR_RETURN(prepared->source_, generate_pointwise_source(program, variant));
  prepared->checks_ = program_checks(program, variant);
  // In PointwiseLaunchPlan::Kernel's order.
  static constexpr const char* kKernels[] = {kPointwiseContiguousKernel, kPointwiseStrided32Kernel,
                                             kPointwiseStrided64Kernel, kPointwiseRows4Kernel};
  SPLICE_ASSIGN_OR_RETURN(const LoadedModule* module, load_module(prepared->source_, kKernels));
  prepared->module_ = module;
  std::shared_ptr<const PreparedPointwise> result = std::move(prepared);
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.entries.emplace(key, result).first->second;
}

void prepare_all(std::span<const ir::PointwiseProgram* const> programs) {
  auto device = current_device_info();
  if (!device.ok()) return;  // the launches report it
  std::vector<const ir::PointwiseProgram*> distinct;
  std::unordered_set<std::string> seen;
  for (const ir::PointwiseProgram* p : programs)
    if (p != nullptr && seen.insert(pointwise_structure_key(*p, {}, device->ordinal)).second)
      distinct.push_back(p);
  std::atomic<size_t> next{0};
  const auto work = [&] {
    // The module loads need the device's context current on this thread.
    if (cudaSetDevice(device->ordinal) != cudaSuccess) return;
    for (size_t i = next++; i < distinct.size(); i = next++)
      (void)PreparedPointwise::prepare(*distinct[i], {});
  };
  const size_t threads =
      std::min<size_t>(distinct.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

Result<PointwiseLaunchPlan> plan_pointwise_launch(const ir::PointwiseProgram& p,
                                                  const PointwiseVariant& variant,
                                                  std::span<const PointwiseOperand> inputs,
                                                  std::span<const PointwiseOperand> outputs,
                                                  const std::vector<ir::PointwiseConstant>& consts,
                                                  const LaunchContext& ctx, int multiprocessors) {
  const size_t nin = p.inputs.size(), nout = p.outputs.size();
  SPLICE_CHECK_OR_RETURN(inputs.size() == nin && outputs.size() == nout, ErrorKind::kInternal,
                         "pointwise launch got {} inputs and {} outputs for a program of {} and {}",
                         inputs.size(), outputs.size(), nin, nout);
  SPLICE_CHECK_OR_RETURN(consts.size() == p.constants.size(), ErrorKind::kInternal,
                         "pointwise launch got {} constants for a program of {}", consts.size(),
                         p.constants.size());
  for (size_t k = 0; k < consts.size(); ++k) {
    SPLICE_CHECK_OR_RETURN(consts[k].value.kind() == p.constants[k].value.kind() &&
                               consts[k].dtype == p.constants[k].dtype,
                           ErrorKind::kInternal,
                           "pointwise launch constant {} changes its kind or dtype", k);
  }
  SPLICE_CHECK_OR_RETURN(!program_checks(p, variant) || ctx.error_word != nullptr,
                         ErrorKind::kInternal,
                         "a pointwise kernel that checks values needs an error word");
  SPLICE_CHECK_OR_RETURN(!outputs.empty(), ErrorKind::kInternal,
                         "pointwise launch without outputs");
  std::vector<const PointwiseOperand*> ops;
  for (const auto& in : inputs) ops.push_back(&in);
  for (const auto& out : outputs) ops.push_back(&out);
  for (size_t k = 0; k < ops.size(); ++k) {
    const DType want = k < nin ? p.inputs[k].dtype : p.outputs[k - nin].dtype;
    SPLICE_CHECK_OR_RETURN(ops[k]->view.dtype == want, ErrorKind::kInternal,
                           "pointwise {} is {} but the program expects {}", operand_label(k, nin),
                           dtype_name(ops[k]->view.dtype), dtype_name(want));
    SPLICE_CHECK_OR_RETURN((ops[k]->position != nullptr) == variant.is_dynamic(k),
                           ErrorKind::kInternal,
                           "pointwise {} {} a device position but the kernel was prepared {} one",
                           operand_label(k, nin), ops[k]->position ? "has" : "lacks",
                           variant.is_dynamic(k) ? "with" : "without");
    SPLICE_CHECK_OR_RETURN(ops[k]->view.rank >= 0 && ops[k]->view.rank <= kMaxDims,
                           ErrorKind::kUnsupportedOp, "pointwise {} has {} dims (at most {})",
                           operand_label(k, nin), ops[k]->view.rank, kMaxDims);
  }
  // The iteration space: outputs[0]'s shape; other outputs equal; inputs broadcast.
  const DeviceTensor& shape = outputs[0].view;
  StridedIteration it;
  it.rank = shape.rank;
  for (int d = 0; d < shape.rank; ++d) it.sizes[d] = shape.sizes[d];
  it.strides.assign(ops.size(), {});
  for (size_t k = 0; k < ops.size(); ++k) {
    const DeviceTensor& v = ops[k]->view;
    if (k >= nin) {
      bool same = v.rank == shape.rank;
      for (int d = 0; same && d < v.rank; ++d) same = v.sizes[d] == shape.sizes[d];
      SPLICE_CHECK_OR_RETURN(same, ErrorKind::kShapeMismatch,
                             "pointwise {} does not have output 0's shape", operand_label(k, nin));
      for (int d = 0; d < v.rank; ++d) it.strides[k][d] = v.strides[d];
      continue;
    }
    SPLICE_CHECK_OR_RETURN(v.rank <= shape.rank, ErrorKind::kShapeMismatch,
                           "pointwise input {} has rank {} above the output's {}", k, v.rank,
                           shape.rank);
    const int lead = shape.rank - v.rank;
    for (int d = 0; d < shape.rank; ++d) {
      if (d < lead) continue;
      const int64_t size = v.sizes[d - lead];
      SPLICE_CHECK_OR_RETURN(size == shape.sizes[d] || size == 1, ErrorKind::kShapeMismatch,
                             "pointwise input {} of size {} at dim {} does not broadcast to {}", k,
                             size, d - lead, shape.sizes[d]);
      it.strides[k][d] = size == shape.sizes[d] && size != 1 ? v.strides[d - lead] : 0;
    }
  }
  PointwiseLaunchPlan plan;
  const int64_t numel = it.numel();
  if (numel == 0) return plan;
  coalesce(it);

  // Contiguous when every output is dense and every input dense or a single element.
  bool contiguous = it.rank <= 1;
  for (size_t k = 0; contiguous && k < ops.size() && it.rank == 1; ++k) {
    const int64_t s = it.strides[k][0];
    contiguous = s == 1 || (s == 0 && k < nin);
  }
  // Four elements at a time, with 4-element loads and stores of each operand that is not
  // broadcast: its start aligned for them, wherever its position puts it.
  auto aligned4 = [&](size_t k) {
    const size_t esize = static_cast<size_t>(dtype_size(ops[k]->view.dtype));
    return reinterpret_cast<uintptr_t>(ops[k]->view.data) % (4 * esize) == 0 &&
           (ops[k]->position == nullptr || ops[k]->position->stride % 4 == 0);
  };
  bool vec = contiguous && numel >= 4;
  for (size_t k = 0; vec && k < ops.size(); ++k)
    vec = (it.rank == 1 && it.strides[k][0] == 0) || aligned4(k);
  // Rows: the innermost dim dense (an input's may be broadcast), of a multiple of 4, and every
  // row of a dense operand starting aligned (its outer strides multiples of 4).
  bool rows = !contiguous && it.rank >= 2 && it.sizes[it.rank - 1] % 4 == 0 && fits_int32(it);
  for (size_t k = 0; rows && k < ops.size(); ++k) {
    const int64_t inner = it.strides[k][it.rank - 1];
    if (inner == 0 && k < nin) continue;
    rows = inner == 1 && aligned4(k);
    for (int d = 0; rows && d + 1 < it.rank; ++d) rows = it.strides[k][d] % 4 == 0;
  }
  PointwiseParamLayout layout;
  layout.operands = static_cast<int>(ops.size());
  layout.constants = static_cast<int>(consts.size());
  layout.dynamic = variant.dynamic_count();
  std::vector<uint64_t>& params = plan.params;
  params.assign(layout.slots(), 0);
  params[layout.numel()] = static_cast<uint64_t>(numel);
  params[layout.rank()] = static_cast<uint64_t>(contiguous ? std::min(it.rank, 1) : it.rank);
  for (int d = 0; d < it.rank; ++d) {
    params[layout.sizes() + d] = static_cast<uint64_t>(it.sizes[d]);
    // Only the 32-bit kernel reads these, and there every size fits 31 bits.
    if (it.sizes[d] > 0 && it.sizes[d] <= INT32_MAX)
      params[layout.divs() + d] = divisor_of(static_cast<uint32_t>(it.sizes[d]));
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    params[layout.ptr() + k] = reinterpret_cast<uintptr_t>(ops[k]->view.data);
    for (int d = 0; d < it.rank; ++d)
      params[layout.strides() + k * 8 + d] = static_cast<uint64_t>(it.strides[k][d]);
  }
  params[layout.err()] = reinterpret_cast<uintptr_t>(ctx.error_word);
  params[layout.site()] = static_cast<uint64_t>(ctx.site);
  for (size_t k = 0; k < consts.size(); ++k)
    params[layout.consts() + k] = constant_bits(consts[k].value);
  for (size_t k = 0, j = 0; k < ops.size(); ++k) {
    const DevicePosition* pos = ops[k]->position;
    if (pos == nullptr) continue;
    const int base = layout.dyn() + static_cast<int>(j) * 5;
    params[base + 0] = reinterpret_cast<uintptr_t>(pos->position);
    params[base + 1] = static_cast<uint64_t>(pos->stride);
    params[base + 2] = static_cast<uint64_t>(pos->dim_size);
    params[base + 3] = static_cast<uint64_t>(pos->extent);
    params[base + 4] = static_cast<uint64_t>(pos->dim);
    ++j;
  }
  params[layout.vec()] = vec ? 1 : 0;
  plan.vectorised = vec || rows;
  plan.kernel = contiguous       ? PointwiseLaunchPlan::Kernel::kContiguous
                : rows           ? PointwiseLaunchPlan::Kernel::kRows4
                : fits_int32(it) ? PointwiseLaunchPlan::Kernel::kStrided32
                                 : PointwiseLaunchPlan::Kernel::kStrided64;
  const int64_t work = vec || rows ? (numel + 3) / 4 : numel;
  plan.blocks = static_cast<unsigned>(std::clamp<int64_t>(
      (work + kPointwiseThreads - 1) / kPointwiseThreads, 1, int64_t{multiprocessors} * 16));
  return plan;
}

Result<void> PreparedPointwise::launch(std::span<const PointwiseOperand> inputs,
                                       std::span<const PointwiseOperand> outputs,
                                       const LaunchContext& ctx,
                                       const std::vector<ir::PointwiseConstant>* constants) const {
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  SPLICE_ASSIGN_OR_RETURN(PointwiseLaunchPlan plan,
                          plan_pointwise_launch(program_, variant_, inputs, outputs,
                                                constants ? *constants : program_.constants, ctx,
                                                device.multiprocessors));
  if (plan.blocks == 0) return ok_result();
  const auto* module = static_cast<const LoadedModule*>(module_);
  void* args[] = {plan.params.data()};
  return launch_module_kernel(module->kernels[static_cast<int>(plan.kernel)], plan.blocks, 1,
                              kPointwiseThreads, ctx.stream, args);
}

Result<void> launch_pointwise(const ir::PointwiseProgram& program,
                              std::span<const PointwiseOperand> inputs,
                              std::span<const PointwiseOperand> outputs, const LaunchContext& ctx) {
  PointwiseVariant variant;
  for (const auto& in : inputs) variant.dynamic.push_back(in.position != nullptr);
  for (const auto& out : outputs) variant.dynamic.push_back(out.position != nullptr);
  if (variant.dynamic_count() == 0) variant.dynamic.clear();
  SPLICE_ASSIGN_OR_RETURN(auto prepared, PreparedPointwise::prepare(program, variant));
  return prepared->launch(inputs, outputs, ctx, &program.constants);
}

Result<void> launch_pointwise(const ir::PointwiseProgram& program,
                              std::span<const DeviceTensor> inputs,
                              std::span<const DeviceTensor> outputs, const LaunchContext& ctx) {
  std::vector<PointwiseOperand> in, out;
  for (const auto& t : inputs) in.push_back({t, nullptr});
  for (const auto& t : outputs) out.push_back({t, nullptr});
  return launch_pointwise(program, in, out, ctx);
}

}  // namespace splice::cuda
