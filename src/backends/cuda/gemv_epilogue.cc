// The host half of gemv_epilogue.h: folding operands to (row, column) strides, the launch
// geometry, the kernel cache and the launch.
#include "backends/cuda/gemv_epilogue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include <bit>
#include <cstring>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/dependent_launch.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/kernel_scratch.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/cuda/pointwise_launch.h"

namespace splice::cuda {

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int tile_index(int row_tile) {
  int i = 0;
  while ((1 << i) < row_tile) ++i;
  return i;
}

}  // namespace

std::optional<RowOperand> fold_rows(const DeviceTensor& t) {
  RowOperand r;
  r.data = t.data;
  if (t.rank == 0) return r;
  r.col_stride = t.strides[t.rank - 1];
  // Leading dims of size > 1, outermost first: each stride must be the next one's times its
  // size (row-major over the folded rows), or all of them 0 (broadcast rows).
  int inner = -1;
  for (int d = t.rank - 2; d >= 0; --d) {
    if (t.sizes[d] == 1) continue;
    if (inner < 0) {
      r.row_stride = t.strides[d];
    } else if (t.strides[d] != t.strides[inner] * t.sizes[inner]) {
      return std::nullopt;
    }
    inner = d;
  }
  return r;
}

std::optional<GemvEpilogueLaunch> plan_gemv_epilogue(const GemvEpilogueArgs& a, int sm_count) {
  const GemvArgs& g = a.gemv;
  const int64_t vec = 16 / static_cast<int64_t>(dtype_size(g.dtype));
  const int ranges = static_cast<int>(a.columns.size());
  if (g.m < 1 || g.m > kGemvMaxRows || ranges < 1 || ranges > kMaxEpilogueRanges || a.width < 1)
    return std::nullopt;
  // The rows kernel's 16-byte loads: unit k strides, every row start 16-byte aligned.
  const bool rows_vec = g.w_ks == 1 && g.x_cs == 1 && g.k % vec == 0 &&
                        (g.n == 1 || g.w_ns % vec == 0) && (g.m == 1 || g.x_rs % vec == 0) &&
                        aligned16(g.w) && aligned16(g.x) && g.k > 0;
  if (!rows_vec) return std::nullopt;
  for (int64_t c : a.columns)
    if (c < 0 || c + a.width > g.n) return std::nullopt;
  if (a.norm_weight != nullptr && !aligned16(a.norm_weight)) return std::nullopt;
  GemvEpilogueLaunch l;
  while (l.row_tile < g.m) l.row_tile *= 2;
  // As plan_gemv: two blocks per multiprocessor; here a block's 8 warps cover every range's
  // row of each of its columns.
  const int64_t target = 2 * std::max(sm_count, 1);
  l.cols_per_block = 1;
  while (l.cols_per_block * 2 * ranges <= 8 && ceil_div(a.width, l.cols_per_block * 2) >= target)
    l.cols_per_block *= 2;
  l.tiles = ceil_div(a.width, l.cols_per_block);
  const int64_t lanes = 32 * (8 / (l.cols_per_block * ranges));
  const int64_t min_k = lanes * vec;
  l.splits = 1;
  if (l.tiles < target && l.tiles <= kGemvCounters)
    l.splits = std::clamp<int64_t>(std::min(ceil_div(target, l.tiles), g.k / min_k), 1, 64);
  l.k_per_split = ceil_div(ceil_div(g.k, l.splits), vec) * vec;
  l.splits = std::max<int64_t>(1, ceil_div(g.k, l.k_per_split));
  l.blocks = l.tiles;
  static const int per_sm = [] {
    const char* v = std::getenv("SPLICE_GEMV_EPILOGUE_BLOCKS_PER_SM");
    return v != nullptr ? std::atoi(v) : kGemvEpilogueBlocksPerSm;
  }();
  if (l.splits == 1 && per_sm > 0)
    l.blocks = std::min<int64_t>(l.tiles, int64_t{per_sm} * std::max(sm_count, 1));
  if (l.splits > 1)
    l.partial_bytes =
        scratch_round(static_cast<size_t>(l.splits * g.m * ranges * a.width) * sizeof(float));
  return l;
}

namespace {

struct EpilogueCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const PreparedGemvEpilogue>> entries;
};

EpilogueCache& epilogue_cache() {
  static EpilogueCache* c = new EpilogueCache();  // never destroyed, as the module cache
  return *c;
}

}  // namespace

Result<std::shared_ptr<const PreparedGemvEpilogue>> PreparedGemvEpilogue::prepare(
    const GemvEpilogueShape& shape) {
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  std::string key = fmt::format("{}|", static_cast<int>(shape.dtype));
  if (shape.norm)
    key += fmt::format("norm {} {}|", static_cast<int>(shape.norm->stat),
                       static_cast<int>(shape.norm->cast));
  for (bool r : shape.is_range) key += r ? '1' : '0';
  key += "|" + pointwise_structure_key(shape.program, {}, device.ordinal);
  EpilogueCache& cache = epilogue_cache();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.entries.find(key);
    if (it != cache.entries.end()) return it->second;
  }
  auto prepared = std::make_shared<PreparedGemvEpilogue>();
  SPLICE_ASSIGN_OR_RETURN(prepared->source_, generate_gemv_epilogue_source(shape));
  for (bool r : shape.is_range) prepared->ranges_ += r ? 1 : 0;
  static const char* const kKernels[] = {gemv_epilogue_kernel_name(1), gemv_epilogue_kernel_name(2),
                                         gemv_epilogue_kernel_name(4), gemv_epilogue_kernel_name(8),
                                         gemv_epilogue_kernel_name(16)};
  SPLICE_ASSIGN_OR_RETURN(const LoadedModule* module, load_module(prepared->source_, kKernels));
  prepared->kernels_ = module->kernels;
  std::shared_ptr<const PreparedGemvEpilogue> result = std::move(prepared);
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.entries.emplace(key, result).first->second;
}

std::vector<uint64_t> gemv_epilogue_params(const GemvEpilogueArgs& a, const GemvEpilogueLaunch& l,
                                           const std::vector<ir::PointwiseConstant>& constants,
                                           float* partials, unsigned* counters,
                                           int64_t* error_word) {
  const GemvArgs& g = a.gemv;
  const int operands = static_cast<int>(a.inputs.size() + a.outputs.size());
  // The Params struct of the generated source, slot by slot (8 bytes each; alpha and beta
  // share one).
  std::vector<uint64_t> p;
  auto put = [&p](auto v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(v));
    p.push_back(bits);
  };
  put(g.x);
  put(g.w);
  put(g.bias);
  put(partials);
  put(counters);
  for (int64_t v : {g.m, a.width, g.k, g.x_rs, g.w_ns, g.bias_s, l.k_per_split, l.splits,
                    static_cast<int64_t>(l.cols_per_block), l.tiles})
    put(v);
  for (int64_t c : a.columns) put(c);
  const int slots = std::max(operands, 1);
  std::vector<const RowOperand*> ops;
  for (const RowOperand& r : a.inputs) ops.push_back(&r);
  for (const RowOperand& r : a.outputs) ops.push_back(&r);
  for (int k = 0; k < slots; ++k) put(k < operands ? ops[k]->data : nullptr);
  for (int k = 0; k < slots; ++k) put(k < operands ? ops[k]->row_stride : int64_t{0});
  for (int k = 0; k < slots; ++k) put(k < operands ? ops[k]->col_stride : int64_t{0});
  put(error_word);
  const float ab[2] = {g.alpha, g.beta};
  uint64_t ab_bits = 0;
  std::memcpy(&ab_bits, ab, sizeof(ab));
  p.push_back(ab_bits);
  put(a.norm_weight);
  const float eps[2] = {a.norm_eps, 0.0f};
  uint64_t eps_bits = 0;
  std::memcpy(&eps_bits, eps, sizeof(eps));
  p.push_back(eps_bits);
  for (const ir::PointwiseConstant& c : constants)
    p.push_back(c.value.is_double() ? std::bit_cast<uint64_t>(c.value.to_double())
                                    : static_cast<uint64_t>(c.value.to_int()));
  if (constants.empty()) p.push_back(0);
  return p;
}

Result<void> PreparedGemvEpilogue::launch(const GemvEpilogueArgs& a, const GemvEpilogueLaunch& l,
                                          const std::vector<ir::PointwiseConstant>& constants,
                                          float* partials, unsigned* counters,
                                          const LaunchContext& ctx) const {
  const int operands = static_cast<int>(a.inputs.size() + a.outputs.size());
  SPLICE_CHECK_OR_RETURN(
      static_cast<int>(a.columns.size()) == ranges_ && operands <= kMaxEpilogueOperands,
      ErrorKind::kInternal, "a GEMV epilogue launched with {} ranges for {}", a.columns.size(),
      ranges_);
  SPLICE_CHECK_OR_RETURN(l.partial_bytes == 0 || partials != nullptr, ErrorKind::kInternal,
                         "a split GEMV epilogue without scratch");
  std::vector<uint64_t> p =
      gemv_epilogue_params(a, l, constants, partials, counters, ctx.error_word);
  void* args[] = {p.data()};
  return launch_module_kernel(kernels_[tile_index(l.row_tile)], static_cast<unsigned>(l.blocks),
                              static_cast<unsigned>(l.splits), kGemvThreads, ctx.stream, args);
}

}  // namespace splice::cuda
