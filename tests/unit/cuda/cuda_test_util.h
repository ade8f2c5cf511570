#pragma once
// Helpers for the CUDA tests: seeded random CPU tensors in several layouts, device copies of
// them, poisoned device destinations (a view inside a larger buffer, so a write outside the
// view shows), and compact comparisons against the CPU backend's results (one line per
// failure with the mismatch count and the first few elements).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/registry.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/device_memory.h"
#include "backends/cuda/device_tensor.h"
#include "backends/cuda/error_word.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/tensor.h"

namespace splice::cuda::testing {

inline constexpr unsigned char kPoison = 0x5A;

enum class Layout {
  kContiguous,
  kStrided,     // every other element of the last dim, starting one element in
  kTransposed,  // the last two dims stored swapped
  kRows,        // rows of a wider tensor: the last dim dense, 4 elements in, rows 8 apart more
};

inline const char* layout_name(Layout l) {
  return l == Layout::kContiguous ? "contiguous"
         : l == Layout::kStrided  ? "strided"
         : l == Layout::kRows     ? "rows"
                                  : "transposed";
}

// A view of `sizes` over fresh zeroed storage, laid out as `layout`.
inline Tensor make_layout(DType dtype, const Shape& sizes, Layout layout) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (layout == Layout::kStrided && rank >= 1) {
    Shape storage = sizes;
    storage.back() = 2 * sizes.back() + 1;
    Tensor base = Tensor::empty(dtype, storage).value();
    Shape strides = contiguous_strides(storage);
    strides.back() = 2;
    return base.view_as(sizes, strides, 1);
  }
  if (layout == Layout::kRows && rank >= 1) {
    // A slice of each row of a wider tensor, as the rotary chain's half rows: aligned for
    // 4-element loads where the row length is a multiple of 4 (pointwise kernels' rows path).
    Shape storage = sizes;
    storage.back() = sizes.back() + 8;
    Tensor base = Tensor::empty(dtype, storage).value();
    return base.view_as(sizes, contiguous_strides(storage), 4);
  }
  if (layout == Layout::kTransposed && rank >= 2) {
    Shape storage = sizes;
    std::swap(storage[rank - 1], storage[rank - 2]);
    Tensor base = Tensor::empty(dtype, storage).value();
    Shape strides = contiguous_strides(storage);
    std::swap(strides[rank - 1], strides[rank - 2]);
    return base.view_as(sizes, strides, 0);
  }
  return Tensor::empty(dtype, sizes).value();
}

// Fills every element of t's view with random values of the given kind.
template <typename Values>
void fill_random(const Tensor& t, Values kind, std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const bool floating = is_floating(t.dtype());
  const int64_t rank = t.dim();
  Shape coord(rank, 0);
  const int64_t n = t.numel();
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) off += coord[d] * t.stride(d);
      double v;
      const double r = unit(rng);
      if (t.dtype() == DType::kBool) {
        v = r < 0.5 ? 0.0 : 1.0;
      } else if (floating) {
        const int mode = static_cast<int>(kind);  // 0 any, 1 nonzero, 2 small, 3 unit
        if (mode == 3) {
          v = unit(rng) * 1.98 - 0.99;
        } else if (mode == 2) {
          v = unit(rng) * 4.0 - 2.0;
        } else if (r < 0.02) {
          const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};
          v = specials[static_cast<int>(unit(rng) * 5) % 5];
          if (mode == 1 && v == 0.0) v = 1.0;
        } else if (r < 0.15) {
          v = std::floor(unit(rng) * 9.0) - 4.0;  // exact integers
          if (mode == 1 && v == 0.0) v = 3.0;
        } else if (r < 0.25) {
          v = std::floor(unit(rng) * 9.0) - 4.5;  // halves: rounding ties
        } else {
          v = unit(rng) * 8.0 - 4.0;
        }
      } else {
        const int mode = static_cast<int>(kind);
        if (mode == 2) {
          v = std::floor(unit(rng) * 4.0);
        } else {
          v = std::floor(unit(rng) * 19.0) - 9.0;
          if (mode == 1 && v == 0.0) v = 5.0;
        }
      }
      p[off] = cast_value<T>(v);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++coord[d] < t.size(d)) break;
        coord[d] = 0;
      }
    }
  });
}

// A device copy of a CPU tensor's whole storage with a DeviceTensor of the same view.
struct DeviceCopy {
  DeviceBuffer buffer;
  DeviceTensor view;
};

inline DeviceTensor device_view(void* base, const Tensor& like) {
  DeviceTensor d;
  d.data = static_cast<char*>(base) + like.offset() * dtype_size(like.dtype());
  d.dtype = like.dtype();
  d.rank = static_cast<int>(like.dim());
  for (int i = 0; i < d.rank; ++i) {
    d.sizes[i] = like.size(i);
    d.strides[i] = like.stride(i);
  }
  return d;
}

inline DeviceCopy upload(const Tensor& t) {
  DeviceCopy c;
  const size_t bytes = std::max<size_t>(t.storage()->nbytes(), 16);
  auto buf = DeviceBuffer::allocate(bytes, "test input");
  EXPECT_TRUE(buf.ok()) << buf.error().message();
  if (!buf.ok()) return c;
  c.buffer = std::move(*buf);
  EXPECT_EQ(cudaMemcpy(c.buffer.data(), t.storage()->data(), t.storage()->nbytes(),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  c.view = device_view(c.buffer.data(), t);
  return c;
}

// A poisoned device buffer with a view of `sizes` inside it (laid out as `layout`), and the
// host tensor describing the same layout (for download and checks).
struct Destination {
  DeviceBuffer buffer;
  DeviceTensor view;
  Tensor host_layout;  // same storage size, sizes, strides and offset as the device view
};

inline Destination make_destination(DType dtype, const Shape& sizes, Layout layout) {
  Destination d;
  d.host_layout = make_layout(dtype, sizes, layout);
  const size_t bytes = std::max<size_t>(d.host_layout.storage()->nbytes(), 16);
  auto buf = DeviceBuffer::allocate(bytes, "test destination");
  EXPECT_TRUE(buf.ok()) << buf.error().message();
  if (!buf.ok()) return d;
  d.buffer = std::move(*buf);
  EXPECT_EQ(cudaMemset(d.buffer.data(), kPoison, bytes), cudaSuccess);
  d.view = device_view(d.buffer.data(), d.host_layout);
  return d;
}

// Whether two element values agree: bitwise (NaN matches any NaN) when exact, else within the
// tolerance of the dtype's math functions.
inline bool close(double got, double want, DType dtype, bool exact) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (got == want) return std::signbit(got) == std::signbit(want) || !is_floating(dtype) || !exact;
  if (exact || !is_floating(dtype)) return false;
  if (std::isinf(got) || std::isinf(want)) return false;
  double rtol = 1e-5, atol = 1e-6;
  if (dtype == DType::kFloat64) rtol = 1e-12, atol = 1e-13;
  if (dtype == DType::kFloat16) rtol = 2e-3, atol = 1e-4;
  if (dtype == DType::kBFloat16) rtol = 1.6e-2, atol = 1e-3;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// "" when the destination holds `expected` in its view and poison elsewhere; else a summary.
inline std::string check_destination(const Destination& d, const Tensor& expected, bool exact) {
  const size_t bytes = d.host_layout.storage()->nbytes();
  std::vector<unsigned char> raw(std::max<size_t>(bytes, 16));
  if (cudaMemcpy(raw.data(), d.buffer.data(), raw.size(), cudaMemcpyDeviceToHost) != cudaSuccess)
    return "copying the destination back failed";
  if (expected.sizes() != d.host_layout.sizes()) {
    return "shape " + shape_string(d.host_layout.sizes()) + " vs expected " +
           shape_string(expected.sizes());
  }
  // Which bytes the view covers.
  const size_t esize = dtype_size(expected.dtype());
  std::vector<bool> covered(raw.size(), false);
  const Tensor got = d.host_layout;
  if (bytes > 0) std::memcpy(got.storage()->data(), raw.data(), bytes);
  const Tensor want = expected.contiguous_copy().value();
  int64_t mismatches = 0;
  std::string examples;
  const int64_t rank = got.dim(), n = got.numel();
  Shape coord(rank, 0);
  dispatch_dtype(expected.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = got.offset();
      for (int64_t k = 0; k < rank; ++k) off += coord[k] * got.stride(k);
      for (size_t b = 0; b < esize; ++b) covered[off * esize + b] = true;
      const double g = cast_value<double>(reinterpret_cast<const T*>(raw.data())[off]);
      const double w = cast_value<double>(want.data<T>()[i]);
      if (!close(g, w, expected.dtype(), exact)) {
        if (++mismatches <= 3) examples += fmt::format(" [{}] got {} want {};", i, g, w);
      }
      for (int64_t k = rank - 1; k >= 0; --k) {
        if (++coord[k] < got.size(k)) break;
        coord[k] = 0;
      }
    }
  });
  int64_t stray = 0;
  for (size_t b = 0; b < bytes; ++b) stray += !covered[b] && raw[b] != kPoison;
  if (mismatches == 0 && stray == 0) return "";
  return fmt::format(
      "{} of {} elements differ{}{}", mismatches, n, examples,
      stray ? fmt::format(" and {} bytes outside the view were written", stray) : "");
}

// A test that needs a device: skips without one, holds an error word.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
    auto w = ErrorWord::create();
    ASSERT_TRUE(w.ok()) << w.error().message();
    error_word_ = std::move(*w);
  }
  // The recorded failure, if any, after waiting for the stream; clears the word.
  std::optional<DeviceCheckFailure> take_failure() {
    auto r = error_word_.read(nullptr);
    EXPECT_TRUE(r.ok()) << r.error().message();
    EXPECT_TRUE(error_word_.clear(nullptr).ok());
    return r.ok() ? *r : std::nullopt;
  }
  ErrorWord error_word_;
};

// Collects failures of many sub-cases and reports them at the end of a test: one line each,
// at most `limit` lines, then the count.
class FailureLog {
 public:
  void add(std::string line) {
    ++count_;
    if (lines_.size() < 60) lines_.push_back(std::move(line));
  }
  void ran() { ++runs_; }
  void report(const char* what) const {
    if (count_ == 0) return;
    std::string text;
    for (const auto& l : lines_) text += "  " + l + "\n";
    ADD_FAILURE() << what << ": " << count_ << " of " << runs_ << " runs failed\n"
                  << text << (count_ > static_cast<int64_t>(lines_.size()) ? "  ...\n" : "");
  }

 private:
  std::vector<std::string> lines_;
  int64_t count_ = 0;
  int64_t runs_ = 0;
};

// Lowerings of targets no backend receives (decomposed before backends, or not in the op table:
// the Scalar_Tensor forms) have no CPU kernel to compare with; they stay for fusion.
inline bool reaches_no_backend(std::string_view target) {
  if (ir::find_op(target) == nullptr) return true;
  for (std::string_view t : passes::decomposed_targets())
    if (t == target) return true;
  return false;
}

// The CPU backend's result for `target`, the reference of every GPU test; an error, never a
// null call, when the CPU has no kernel for it (a composite decomposed before any backend).
inline Result<std::vector<Tensor>> cpu_reference(std::string_view target,
                                                 std::span<const cpu::KernelArg> args) {
  cpu::KernelFn kernel = cpu::find_kernel(target);
  if (kernel == nullptr)
    return Error(ErrorKind::kUnsupportedOp, "no CPU kernel for " + std::string(target));
  return cpu::call_kernel(kernel, args);
}

}  // namespace splice::cuda::testing
