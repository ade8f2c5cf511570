#pragma once
// What the GPU kernel-library tests share: host tensors with seeded random values and strided
// layouts (transposed, sliced, broadcast), their round trip to the device (the whole storage,
// so a launcher sees the same view and a test can check bytes outside it), poisoned outputs,
// the CPU backend's kernel as the oracle, and comparisons that report every mismatch of a case
// in one line. A test collects its cases in a CaseLog and fails once per failing case, so one
// run on the GPU host reports everything.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/registry.h"
#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernel_scratch.h"
#include "support/dtype.h"
#include "tensor/half.h"
#include "tensor/tensor.h"

namespace splice::cuda::testing {

inline bool gpu_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Device allocations of one test, freed at its end; remembers each host storage's device twin.
class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena() {
    for (void* p : ptrs_) cudaFree(p);
  }

  void* alloc(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) return nullptr;
    ptrs_.push_back(p);
    return p;
  }

  // A device copy of t's whole storage and the view of it that t is (same strides, offset).
  DeviceTensor to_device(const Tensor& t) {
    DeviceTensor d;
    d.dtype = t.dtype();
    d.rank = static_cast<int>(t.dim());
    for (int i = 0; i < d.rank; ++i) {
      d.sizes[i] = t.size(i);
      d.strides[i] = t.stride(i);
    }
    const Storage* s = t.storage().get();
    auto it = twins_.find(s);
    char* base;
    if (it == twins_.end()) {
      base = static_cast<char*>(alloc(s->nbytes()));
      if (base && s->nbytes() > 0) cudaMemcpy(base, s->data(), s->nbytes(), cudaMemcpyHostToDevice);
      twins_[s] = base;
      // Held for the arena's life: a storage freed and another allocated at its address would
      // otherwise find this twin (of the old size and data) and not be uploaded.
      alive_.push_back(t.storage());
    } else {
      base = it->second;
    }
    d.data = base == nullptr ? nullptr : base + t.offset() * dtype_size(t.dtype());
    return d;
  }

  // Copies the device twin of t's storage back over t's whole storage.
  void to_host(const Tensor& t) {
    const Storage* s = t.storage().get();
    auto it = twins_.find(s);
    if (it == twins_.end() || it->second == nullptr) return;
    cudaMemcpy(t.storage()->data(), it->second, s->nbytes(), cudaMemcpyDeviceToHost);
  }

  // Scratch of `bytes` with zeroed counters, as a session's (kernel_scratch.h).
  KernelScratch scratch(size_t bytes) {
    auto* counters = static_cast<uint32_t*>(alloc(kScratchCounters * sizeof(uint32_t)));
    if (counters) cudaMemset(counters, 0, kScratchCounters * sizeof(uint32_t));
    return {alloc(bytes), bytes, counters, counters ? kScratchCounters : 0};
  }

 private:
  std::vector<void*> ptrs_;
  std::map<const Storage*, char*> twins_;
  std::vector<std::shared_ptr<const Storage>> alive_;
};

// ---- values ---------------------------------------------------------------------------------

inline int64_t element_offset(const Tensor& t, int64_t linear) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t size = t.size(d);
    off += (linear % size) * t.stride(d);
    linear /= size;
  }
  return off;
}

// Element `linear` (row-major over t's view) as a double; bool reads its byte (a value other
// than 0/1 shows as that byte, so a poisoned bool is visible).
inline double get_double(const Tensor& t, int64_t linear) {
  const std::byte* p = t.raw_data();
  const int64_t off = element_offset(t, linear);
  switch (t.dtype()) {
    case DType::kUInt8:
      return reinterpret_cast<const uint8_t*>(p)[off];
    case DType::kInt8:
      return reinterpret_cast<const int8_t*>(p)[off];
    case DType::kInt16:
      return reinterpret_cast<const int16_t*>(p)[off];
    case DType::kInt32:
      return reinterpret_cast<const int32_t*>(p)[off];
    case DType::kInt64:
      return static_cast<double>(reinterpret_cast<const int64_t*>(p)[off]);
    case DType::kFloat16:
      return static_cast<float>(reinterpret_cast<const Half*>(p)[off]);
    case DType::kFloat32:
      return reinterpret_cast<const float*>(p)[off];
    case DType::kFloat64:
      return reinterpret_cast<const double*>(p)[off];
    case DType::kBool:
      return reinterpret_cast<const uint8_t*>(p)[off];
    case DType::kBFloat16:
      return static_cast<float>(reinterpret_cast<const BFloat16*>(p)[off]);
  }
  return 0;
}

// Exact integer read (int64 values beyond 2^53 stay exact).
inline int64_t get_int(const Tensor& t, int64_t linear) {
  if (t.dtype() == DType::kInt64) return t.data<int64_t>()[element_offset(t, linear)];
  return static_cast<int64_t>(get_double(t, linear));
}

inline void set_double(const Tensor& t, int64_t linear, double v) {
  std::byte* p = t.raw_data();
  const int64_t off = element_offset(t, linear);
  switch (t.dtype()) {
    case DType::kUInt8:
      reinterpret_cast<uint8_t*>(p)[off] = static_cast<uint8_t>(v);
      return;
    case DType::kInt8:
      reinterpret_cast<int8_t*>(p)[off] = static_cast<int8_t>(v);
      return;
    case DType::kInt16:
      reinterpret_cast<int16_t*>(p)[off] = static_cast<int16_t>(v);
      return;
    case DType::kInt32:
      reinterpret_cast<int32_t*>(p)[off] = static_cast<int32_t>(v);
      return;
    case DType::kInt64:
      reinterpret_cast<int64_t*>(p)[off] = static_cast<int64_t>(v);
      return;
    case DType::kFloat16:
      reinterpret_cast<Half*>(p)[off] = Half(static_cast<float>(v));
      return;
    case DType::kFloat32:
      reinterpret_cast<float*>(p)[off] = static_cast<float>(v);
      return;
    case DType::kFloat64:
      reinterpret_cast<double*>(p)[off] = v;
      return;
    case DType::kBool:
      reinterpret_cast<bool*>(p)[off] = v != 0;
      return;
    case DType::kBFloat16:
      reinterpret_cast<BFloat16*>(p)[off] = BFloat16(static_cast<float>(v));
      return;
  }
}

// Fresh random values over t's view: floats uniform in [lo, hi], integers uniform in
// [lo, hi] rounded, bool a coin flip. Never all zeros.
inline void fill_random(const Tensor& t, std::mt19937& gen, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    double v = dist(gen);
    if (t.dtype() == DType::kBool)
      v = v > (lo + hi) / 2 ? 1 : 0;
    else if (!is_floating(t.dtype()))
      v = std::round(v);
    set_double(t, i, v);
  }
}

// Strided layouts an operand can take; every test runs several.
enum class Layout {
  kContiguous,
  kTransposed,  // the last two dims swapped in memory (a .transpose(-1, -2) of a contiguous)
  kSliced,      // every other element of the last dim of a buffer twice as wide, offset 1
  kPermuted,    // dims reversed in memory
};

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kSliced:
      return "sliced";
    case Layout::kPermuted:
      return "permuted";
  }
  return "?";
}

// A tensor of `shape` in `layout` over a fresh storage (zero-filled).
inline Tensor make_tensor(DType dtype, const Shape& shape, Layout layout) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (layout == Layout::kTransposed && rank >= 2) {
    Shape mem = shape;
    std::swap(mem[rank - 1], mem[rank - 2]);
    const Tensor base = Tensor::empty(dtype, mem).value();
    Shape strides = base.strides();
    std::swap(strides[rank - 1], strides[rank - 2]);
    return base.view_as(shape, strides, 0);
  }
  if (layout == Layout::kSliced && rank >= 1) {
    Shape mem = shape;
    mem[rank - 1] = shape[rank - 1] * 2 + 1;
    const Tensor base = Tensor::empty(dtype, mem).value();
    Shape strides = base.strides();
    strides[rank - 1] = 2;
    return base.view_as(shape, strides, 1);
  }
  if (layout == Layout::kPermuted && rank >= 2) {
    const Shape mem(shape.rbegin(), shape.rend());
    const Tensor base = Tensor::empty(dtype, mem).value();
    const Shape strides(base.strides().rbegin(), base.strides().rend());
    return base.view_as(shape, strides, 0);
  }
  return Tensor::empty(dtype, shape).value();
}

inline Tensor random_tensor(DType dtype, const Shape& shape, Layout layout, std::mt19937& gen,
                            double lo = -1.0, double hi = 1.0) {
  Tensor t = make_tensor(dtype, shape, layout);
  fill_random(t, gen, lo, hi);
  return t;
}

// Fills t's whole storage with 0xFF bytes (NaN for floats, -1 for integers, byte 255 for bool).
inline void poison(const Tensor& t) {
  std::memset(t.storage()->data(), 0xFF, t.storage()->nbytes());
}

// An output buffer of `shape`: contiguous, or (strided) every other element of the last dim
// of a larger poisoned buffer, so a launcher writing outside its view is caught.
inline Tensor make_output(DType dtype, const Shape& shape, bool strided) {
  Tensor t = make_tensor(dtype, shape, strided ? Layout::kSliced : Layout::kContiguous);
  poison(t);
  return t;
}

// ---- comparison -----------------------------------------------------------------------------

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Per-dtype defaults for one rounding step (exact for integers and bool).
inline Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return {1e-3, 2e-3};
    case DType::kBFloat16:
      return {8e-3, 1.6e-2};
    case DType::kFloat32:
      return {1e-5, 1e-5};
    case DType::kFloat64:
      return {1e-12, 1e-12};
    default:
      return {0, 0};
  }
}

// "" when got (any view) equals want elementwise within tol (NaN matches NaN, infinities must
// match exactly; integers and bool exactly), else one line: how many differ and the first few.
inline std::string compare(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (got.sizes() != want.sizes())
    return "shape " + shape_string(got.sizes()) + " != expected " + shape_string(want.sizes());
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + std::string(dtype_name(got.dtype())) + " != expected " +
           std::string(dtype_name(want.dtype()));
  const int64_t n = got.numel();
  const bool exact = !is_floating(got.dtype());
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    std::string gs, ws;
    if (exact) {
      const int64_t g = get_int(got, i), w = get_int(want, i);
      ok = g == w;
      gs = std::to_string(g);
      ws = std::to_string(w);
    } else {
      const double g = get_double(got, i), w = get_double(want, i);
      if (std::isnan(w) || std::isnan(g))
        ok = std::isnan(w) && std::isnan(g);
      else if (std::isinf(w) || std::isinf(g))
        ok = g == w;
      else
        ok = std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w);
      gs = std::to_string(g);
      ws = std::to_string(w);
    }
    if (!ok) {
      if (bad < 3) first += " [" + std::to_string(i) + "] got " + gs + " want " + ws + ";";
      ++bad;
    }
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(n) + " differ:" + first;
}

// "" when every storage byte of `t` outside its view still holds the 0xFF poison.
inline std::string check_outside_untouched(const Tensor& t) {
  const size_t es = static_cast<size_t>(dtype_size(t.dtype()));
  const size_t slots = t.storage()->nbytes() / es;
  std::vector<bool> inside(slots, false);
  for (int64_t i = 0; i < t.numel(); ++i) inside[t.offset() + element_offset(t, i)] = true;
  const auto* bytes = reinterpret_cast<const uint8_t*>(t.storage()->data());
  int64_t bad = 0;
  for (size_t s = 0; s < slots; ++s) {
    if (inside[s]) continue;
    for (size_t b = 0; b < es; ++b) bad += bytes[s * es + b] != 0xFF;
  }
  return bad == 0 ? "" : std::to_string(bad) + " bytes outside the output view were written";
}

// Collects each case's result; fails the test once per failing case, with its label.
class CaseLog {
 public:
  void record(const std::string& label, const std::string& problem) {
    ++cases_;
    if (problem.empty()) return;
    ++failed_;
    ADD_FAILURE() << label << ": " << problem;
  }
  // The summary line (printed by the test at its end).
  std::string summary() const {
    return std::to_string(cases_) + " cases, " + std::to_string(failed_) + " failed";
  }
  int failed() const { return failed_; }

 private:
  int cases_ = 0;
  int failed_ = 0;
};

// Runs the CPU backend's kernel for `target` and returns its outputs (empty on error, with the
// error in *error).
inline std::vector<Tensor> cpu_reference(std::string_view target,
                                         const std::vector<cpu::KernelArg>& args,
                                         std::string* error) {
  const cpu::KernelFn fn = cpu::find_kernel(target);
  if (fn == nullptr) {
    *error = "no CPU kernel for " + std::string(target);
    return {};
  }
  auto r = cpu::call_kernel(fn, args);
  if (!r.ok()) {
    *error = "CPU kernel failed: " + r.error().message();
    return {};
  }
  return *r;
}

// Synchronizes and reports a launch's Result and any asynchronous CUDA error ("" when fine).
template <typename R>
std::string launch_problem(const R& result) {
  if (!result.ok()) return "launcher error: " + result.error().message();
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return std::string("CUDA error after launch: ") + cudaGetErrorString(e);
  return "";
}

inline std::string dname(DType d) { return std::string(dtype_name(d)); }

// The whole check of one case against the CPU backend: runs `target` on the CPU with `args`,
// makes a poisoned output per CPU result (same shape and dtype; every other element of a wider
// buffer when strided_out), runs `launch` on their device views, and compares each output with
// its tolerance (tols[i], or the last one given) and that nothing outside the views changed.
// Only the first max_outputs CPU results are produced and checked.
// Returns "" or the problems found.
inline std::string check_against_cpu(
    DeviceArena& arena, std::string_view target, const std::vector<cpu::KernelArg>& args,
    const std::function<std::string(const std::vector<DeviceTensor>& outs)>& launch,
    bool strided_out, const std::vector<Tolerance>& tols, size_t max_outputs = SIZE_MAX) {
  std::string error;
  std::vector<Tensor> want = cpu_reference(target, args, &error);
  if (!error.empty()) return error;
  if (want.size() > max_outputs) want.resize(max_outputs);
  std::vector<Tensor> got;
  std::vector<DeviceTensor> outs;
  for (const Tensor& w : want) {
    got.push_back(make_output(w.dtype(), w.sizes(), strided_out && w.dim() > 0));
    outs.push_back(arena.to_device(got.back()));
    if (outs.back().data == nullptr) return "cudaMalloc failed";
  }
  const std::string problem = launch(outs);
  if (!problem.empty()) return problem;
  std::string all;
  for (size_t i = 0; i < want.size(); ++i) {
    arena.to_host(got[i]);
    const Tolerance tol =
        tols.empty() ? tolerance_for(want[i].dtype()) : tols[std::min(i, tols.size() - 1)];
    const std::string c = compare(got[i], want[i], tol);
    if (!c.empty()) all += " output " + std::to_string(i) + ": " + c;
    const std::string u = check_outside_untouched(got[i]);
    if (!u.empty()) all += " output " + std::to_string(i) + ": " + u;
  }
  return all;
}

}  // namespace splice::cuda::testing
