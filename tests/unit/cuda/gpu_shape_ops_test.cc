// Shape ops and copies on the GPU against the CPU kernels, in every dtype, from contiguous,
// strided and transposed inputs into poisoned strided destinations: flip, roll, repeat,
// repeat_interleave, tril/triu, constant_pad_nd and pad in every mode, cat, stack, fill,
// copy_cast with broadcasting, slice_scatter/select_scatter (copying and in place) and the
// slice write at a position read on the device.
#include <gtest/gtest.h>

#include <functional>

#include "backends/cuda/copy_ops.h"
#include "backends/cuda/shape_ops.h"
#include "cuda_test_util.h"

namespace splice::cuda::testing {
namespace {

class GpuShapeOps : public GpuTest {
 protected:
  // Runs `target` on the CPU with `args` (tensor args given as CPU tensors), and `launch` on
  // the GPU with device copies of those tensors into a destination of the CPU result's shape;
  // reports differences into `log` under `name`.
  using Launch = std::function<Result<void>(
      const DeviceTensor& out, const std::vector<DeviceTensor>& tensors, const LaunchContext& ctx)>;
  void compare(FailureLog& log, const std::string& name, const char* target,
               std::vector<cpu::KernelArg> args, const Launch& launch, Layout out_layout) {
    log.ran();
    std::vector<DeviceCopy> copies;
    std::vector<DeviceTensor> tensors;
    for (const auto& a : args) {
      if (const Tensor* t = std::get_if<Tensor>(&a)) {
        copies.push_back(upload(*t));
        tensors.push_back(copies.back().view);
      } else if (const auto* list = std::get_if<std::vector<Tensor>>(&a)) {
        for (const Tensor& t : *list) {
          copies.push_back(upload(t));
          tensors.push_back(copies.back().view);
        }
      }
    }
    auto expected = cpu_reference(target, args);
    LaunchContext ctx;
    ctx.error_word = error_word_.device();
    if (!expected.ok()) {
      // An output of the first tensor's shape and dtype (the ops that fail here keep self's).
      Destination dummy = tensors.empty()
                              ? make_destination(DType::kFloat32, {1}, Layout::kContiguous)
                              : make_destination(tensors[0].dtype,
                                                 Shape(tensors[0].sizes.begin(),
                                                       tensors[0].sizes.begin() + tensors[0].rank),
                                                 Layout::kContiguous);
      auto r = launch(dummy.view, tensors, ctx);
      if (r.ok() || r.error().message() != expected.error().message())
        log.add(name + ": CPU fails with '" + expected.error().message() + "', CUDA says '" +
                (r.ok() ? std::string("ok") : r.error().message()) + "'");
      return;
    }
    const Tensor& want = (*expected)[0];
    Destination out = make_destination(want.dtype(), want.sizes(), out_layout);
    auto r = launch(out.view, tensors, ctx);
    if (!r.ok()) {
      log.add(name + ": " + r.error().message());
      return;
    }
    if (auto f = take_failure()) {
      log.add(name + ": device check failed: " + failure_error(*f, "").message());
      return;
    }
    const std::string diff = check_destination(out, want, true);
    if (!diff.empty()) log.add(name + ": " + diff);
  }

  Tensor random(DType dtype, const Shape& shape, Layout layout) {
    Tensor t = make_layout(dtype, shape, layout);
    fill_random(t, 0, rng_);
    return t;
  }

  std::mt19937 rng_{99};
};

constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kStrided, Layout::kTransposed};

TEST_F(GpuShapeOps, FlipRollRepeatTriPad) {
  FailureLog log;
  const Shape shapes[] = {{3, 5, 7}, {1, 1, 1}, {2, 0, 3}, {70001, 1, 3}, {4, 129, 131}};
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      for (size_t li = 0; li < std::size(kLayouts); ++li) {
        const Layout in = kLayouts[li], out = kLayouts[(li + 2) % 3];
        const std::string tag =
            fmt::format("{}{} {}", dtype_name(dtype), shape_string(shape), layout_name(in));
        const Tensor x = random(dtype, shape, in);
        for (const Shape& dims : {Shape{0}, Shape{-1, 1}, Shape{}, Shape{0, 0}}) {
          compare(
              log, "flip " + shape_string(dims) + " " + tag, "aten.flip.default", {x, dims},
              [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                return flip(o, t[0], dims, ctx);
              },
              out);
        }
        for (auto [shifts, dims] :
             {std::pair{Shape{2}, Shape{}}, std::pair{Shape{-7}, Shape{}},
              std::pair{Shape{1, -2}, Shape{0, 2}}, std::pair{Shape{3, 4}, Shape{1, 1}},
              std::pair{Shape{1}, Shape{0, 1}}}) {
          compare(
              log, "roll " + shape_string(shifts) + shape_string(dims) + " " + tag,
              "aten.roll.default", {x, shifts, dims},
              [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                return roll(o, t[0], shifts, dims, ctx);
              },
              out);
        }
        if (x.numel() < 100000) {
          for (const Shape& reps : {Shape{2, 1, 3}, Shape{2, 1, 1, 2}, Shape{1, 0, 1}, Shape{2}}) {
            compare(
                log, "repeat " + shape_string(reps) + " " + tag, "aten.repeat.default", {x, reps},
                [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                  return repeat(o, t[0], reps, ctx);
                },
                out);
          }
        }
        for (auto [reps, dim] : {std::pair{int64_t{3}, std::optional<int64_t>{}},
                                 std::pair{int64_t{2}, std::optional<int64_t>{1}},
                                 std::pair{int64_t{0}, std::optional<int64_t>{-1}},
                                 std::pair{int64_t{-1}, std::optional<int64_t>{0}}}) {
          cpu::KernelArg dim_arg = dim ? cpu::KernelArg(*dim) : cpu::KernelArg(std::monostate{});
          compare(
              log, fmt::format("repeat_interleave {} {} {}", reps, dim.value_or(99), tag),
              "aten.repeat_interleave.self_int", {x, reps, dim_arg, std::monostate{}},
              [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                return repeat_interleave(o, t[0], reps, dim, ctx);
              },
              out);
        }
        for (int64_t diag : {-1, 0, 2}) {
          for (bool lower : {true, false}) {
            compare(
                log, fmt::format("{} {} {}", lower ? "tril" : "triu", diag, tag),
                lower ? "aten.tril.default" : "aten.triu.default", {x, diag},
                [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                  return tril_triu(o, t[0], diag, lower, ctx);
                },
                out);
          }
        }
        for (const Shape& pads :
             {Shape{1, 2}, Shape{-1, 2, 0, 1}, Shape{2, 2, 1, 1, 1, 0}, Shape{0, -3}, Shape{1}}) {
          const Scalar value(2.5);
          compare(
              log, "constant_pad_nd " + shape_string(pads) + " " + tag,
              "aten.constant_pad_nd.default", {x, pads, 2.5},
              [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                return pad("aten.constant_pad_nd.default", o, t[0], pads, PadMode::kConstant, value,
                           ctx);
              },
              out);
        }
        // aten.pad reaches no backend (decompose_shape_ops: constant_pad_nd, or index_selects
        // for the other modes), so it has no CPU kernel to compare with; constant_pad_nd above
        // is the pad every backend runs.
      }
    }
  }
  log.report("shape ops");
}

TEST_F(GpuShapeOps, CatStackCopyFill) {
  FailureLog log;
  for (DType a : kAllDTypes) {
    for (DType b : {DType::kFloat32, DType::kInt8, DType::kBool, DType::kBFloat16}) {
      for (Layout in : kLayouts) {
        const std::string tag =
            fmt::format("{}+{} {}", dtype_name(a), dtype_name(b), layout_name(in));
        const Tensor x = random(a, {3, 4, 5}, in), y = random(b, {3, 2, 5}, in),
                     z = random(a, {3, 0, 5}, in), e = Tensor::empty(b, {0}).value();
        std::vector<Tensor> parts = {x, y, z, e, x};
        compare(
            log, "cat dim 1 " + tag, "aten.cat.default", {parts, int64_t{1}},
            [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
              return cat(o, t, 1, ctx);
            },
            Layout::kStrided);
        std::vector<Tensor> bad = {x, random(b, {3, 4, 6}, in)};
        compare(
            log, "cat mismatch " + tag, "aten.cat.default", {bad, int64_t{1}},
            [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
              return cat(o, t, 1, ctx);
            },
            Layout::kContiguous);
        const Tensor w = random(b, {3, 4, 5}, in);
        for (int64_t dim : {0, 2, 3, -1}) {
          std::vector<Tensor> same = {x, w, x};
          compare(
              log, fmt::format("stack {} {}", dim, tag), "aten.stack.default", {same, dim},
              [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
                return stack(o, t, dim, ctx);
              },
              Layout::kTransposed);
        }
        const Tensor row = random(b, {5}, in);
        compare(
            log, "copy broadcast " + tag, "aten.copy.default", {x, row, false},
            [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
              return copy_cast(o, t[1], ctx);
            },
            Layout::kStrided);
        for (Scalar v : {Scalar(int64_t{0}), Scalar(int64_t{300}), Scalar(-1.5), Scalar(true)}) {
          const Shape size = {70001, 2};
          cpu::KernelArg value = v.is_bool()  ? cpu::KernelArg(v.to_bool())
                                 : v.is_int() ? cpu::KernelArg(v.to_int())
                                              : cpu::KernelArg(v.to_double());
          compare(
              log, fmt::format("full {} {}", v.to_double(), tag), "aten.full.default",
              {size, value, a, std::monostate{}, std::monostate{}, std::monostate{}},
              [&](const DeviceTensor& o, const auto&, const auto& ctx) { return fill(o, v, ctx); },
              in);
        }
      }
    }
  }
  log.report("cat/stack/copy/fill");
}

TEST_F(GpuShapeOps, SliceAndSelectWrites) {
  FailureLog log;
  for (DType dtype : kAllDTypes) {
    for (Layout in : kLayouts) {
      const std::string tag = fmt::format("{} {}", dtype_name(dtype), layout_name(in));
      const Tensor self = random(dtype, {6, 9}, in);
      struct Slice {
        int64_t dim;
        std::optional<int64_t> start, end;
        int64_t step;
        Shape src;
      };
      for (const Slice& s : {Slice{1, 2, 7, 2, {6, 3}}, Slice{0, -4, std::nullopt, 1, {4, 9}},
                             Slice{1, std::nullopt, -1, 3, {6, 3}}, Slice{0, 7, 9, 1, {0, 9}},
                             Slice{1, 0, 9, 1, {6, 8}}}) {
        const Tensor src = random(DType::kFloat32, s.src, Layout::kStrided);
        const cpu::KernelArg start = s.start ? cpu::KernelArg(*s.start) : std::monostate{};
        const cpu::KernelArg end = s.end ? cpu::KernelArg(*s.end) : std::monostate{};
        const std::string name = fmt::format("slice_scatter dim {} [{}:{}:{}] {}", s.dim,
                                             s.start.value_or(0), s.end.value_or(99), s.step, tag);
        compare(
            log, name, "aten.slice_scatter.default", {self, src, s.dim, start, end, s.step},
            [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
              return slice_scatter(o, t[0], t[1], s.dim, s.start, s.end, s.step, ctx);
            },
            Layout::kTransposed);
        // In place: the output is self itself; only the slice changes.
        compare(
            log, name + " in place", "aten.slice_scatter.default",
            {self, src, s.dim, start, end, s.step},
            [&](const DeviceTensor& o, const auto& t, const auto& ctx) -> Result<void> {
              SPLICE_TRY(copy_cast(o, t[0], ctx));
              return slice_scatter(o, o, t[1], s.dim, s.start, s.end, s.step, ctx);
            },
            in);
      }
      for (auto [dim, index] : {std::pair{0, 2}, std::pair{1, -1}, std::pair{1, 9}}) {
        const Tensor src = random(DType::kInt32, {dim == 0 ? 9 : 6}, Layout::kContiguous);
        compare(
            log, fmt::format("select_scatter {} {} {}", dim, index, tag),
            "aten.select_scatter.default", {self, src, int64_t{dim}, int64_t{index}},
            [&](const DeviceTensor& o, const auto& t, const auto& ctx) {
              return select_scatter(o, t[0], t[1], dim, index, ctx);
            },
            Layout::kStrided);
      }
    }
  }
  log.report("slice writes");
}

TEST_F(GpuShapeOps, SliceWriteAtADevicePosition) {
  // A KV cache [2, 16, 4] updated at [:, p:p+3, :] for several positions p read on the device.
  Tensor cache = random(DType::kFloat16, {2, 16, 4}, Layout::kContiguous);
  Tensor update = random(DType::kFloat32, {2, 3, 4}, Layout::kStrided);
  DeviceCopy dcache = upload(cache), dupdate = upload(update);
  auto pos = DeviceBuffer::allocate(8, "position");
  ASSERT_TRUE(pos.ok());
  LaunchContext ctx;
  ctx.error_word = error_word_.device();
  Tensor want = cache.contiguous_copy().value();
  for (int64_t p : {0, 7, 13}) {
    ASSERT_EQ(cudaMemcpy(pos->data(), &p, 8, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(
        slice_write_at_position(dcache.view, dupdate.view, 1, pos->as<int64_t>(), ctx).ok());
    ASSERT_FALSE(take_failure().has_value());
    auto r =
        cpu_reference("aten.slice_scatter.default",
                      std::vector<cpu::KernelArg>{want, update, int64_t{1}, p, p + 3, int64_t{1}});
    ASSERT_TRUE(r.ok());
    want = (*r)[0];
  }
  std::vector<uint16_t> got(2 * 16 * 4);
  ASSERT_EQ(cudaMemcpy(got.data(), dcache.buffer.data(), got.size() * 2, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want.data<Half>()[i].bits) << i;
  // p = 14 would write rows 14..16 of 16: refused, nothing written.
  const int64_t bad = 14;
  ASSERT_EQ(cudaMemcpy(pos->data(), &bad, 8, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE(slice_write_at_position(dcache.view, dupdate.view, 1, pos->as<int64_t>(), ctx).ok());
  auto failure = take_failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure_error(*failure, "").message(),
            "position 14 (covering 3 entries) is out of range for dim 1 of size 16");
  std::vector<uint16_t> after(got.size());
  ASSERT_EQ(
      cudaMemcpy(after.data(), dcache.buffer.data(), after.size() * 2, cudaMemcpyDeviceToHost),
      cudaSuccess);
  EXPECT_EQ(after, got);
}

}  // namespace
}  // namespace splice::cuda::testing
