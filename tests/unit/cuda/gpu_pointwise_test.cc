// Generated pointwise kernels on the GPU against the CPU kernels: every case of
// pointwise_cases.h in every dtype, over empty, single-element, odd, > 2^16-element and
// > 65535-row shapes, with contiguous, strided and transposed inputs and outputs written into
// a view of a poisoned buffer (every element must be written, nothing outside the view).
// Also: multi-output programs, positions read on the device, in-place updates, integer
// division by zero, the compile cache under threads, and no allocation per launch.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "backends/cuda/nvrtc_compiler.h"
#include "backends/cuda/pointwise_launch.h"
#include "pointwise_case_args.h"

namespace splice::cuda::testing {
namespace {

using ir::PointwiseFn;
using ir::PointwiseProgram;
using ir::PointwiseRef;

class GpuPointwise : public GpuTest {};

struct Dims {
  int64_t n, m;
};
// {6, 36}: rows of a multiple of 4, which the rows kernel takes between the rows and
// contiguous layouts.
constexpr Dims kDims[] = {{3, 5}, {1, 1}, {0, 4}, {6, 36}, {129, 1031}, {70001, 3}};
constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kStrided, Layout::kTransposed,
                               Layout::kRows};

// Compiles every lowered program in parallel first (NVRTC is the slow part).
void warm_cache(const std::vector<PointwiseProgram>& programs) {
  std::vector<const PointwiseProgram*> all;
  for (const PointwiseProgram& p : programs) all.push_back(&p);
  prepare_all(all);
}

TEST_F(GpuPointwise, EveryCaseMatchesTheCpuKernels) {
  const auto cases = pointwise_cases();
  {
    std::vector<PointwiseProgram> programs;
    for (const PointwiseCase& c : cases)
      for (DType dtype : kAllDTypes)
        if (auto p = lower_pointwise_op(c.target, op_args(c, dtype)); p.ok())
          programs.push_back(p->program);
    warm_cache(programs);
  }
  FailureLog log;
  std::mt19937 rng(2024);
  for (const PointwiseCase& c : cases) {
    // Composites decomposed before any backend have no CPU kernel to compare with; the
    // no-GPU lowering test covers them.
    if (reaches_no_backend(c.target)) continue;
    for (DType dtype : kAllDTypes) {
      auto lowered = lower_pointwise_op(c.target, op_args(c, dtype));
      if (!lowered.ok()) continue;  // the no-GPU test checks these against the CPU's errors
      for (const Dims& dims : kDims) {
        // Big shapes in one layout pair only (they cost CPU time, not coverage).
        const size_t layouts = dims.n * dims.m > 100000 ? 1 : std::size(kLayouts);
        for (size_t li = 0; li < layouts; ++li) {
          const Layout in_layout = dims.n * dims.m > 100000 ? Layout::kTransposed : kLayouts[li];
          const Layout out_layout = kLayouts[(li + 1) % std::size(kLayouts)];
          log.ran();
          const std::string where =
              fmt::format("{} N={} M={} in {} out {}", case_name(c, dtype), dims.n, dims.m,
                          layout_name(in_layout), layout_name(out_layout));
          std::vector<std::optional<Tensor>> tensors;
          auto args = cpu_args(c, dtype, dims.n, dims.m, in_layout, rng, tensors);
          auto expected = cpu_reference(c.target, args);
          if (!expected.ok()) {
            // fill.Tensor's value may not fit the dtype: the CPU reads it and refuses, the CUDA
            // fill does not check (docs/cuda.md).
            if (c.target != "aten.fill.Tensor")
              log.add(where + ": CPU failed: " + expected.error().message());
            continue;
          }
          const Tensor& want = (*expected)[0];
          std::vector<DeviceCopy> copies;
          std::vector<DeviceTensor> inputs;
          for (int arg : lowered->inputs) {
            copies.push_back(upload(*tensors[arg]));
            inputs.push_back(copies.back().view);
          }
          Destination out = make_destination(want.dtype(), want.sizes(), out_layout);
          const DeviceTensor outputs[] = {out.view};
          LaunchContext ctx;
          ctx.error_word = error_word_.device();
          auto r = launch_pointwise(lowered->program, inputs, outputs, ctx);
          if (!r.ok()) {
            log.add(where + ": launch failed: " + r.error().message());
            continue;
          }
          if (auto f = take_failure()) {
            log.add(where + ": device check failed: " + failure_error(*f, "").message());
            continue;
          }
          const std::string diff = check_destination(out, want, c.exact);
          if (!diff.empty()) log.add(where + ": " + diff);
        }
      }
    }
  }
  log.report("pointwise cases");
}

// The rotary pair in one program with two outputs writing the two halves of one buffer:
// out[..., :h] = x1*cos - x2*sin, out[..., h:] = x2*cos + x1*sin, each node rounded as eager.
TEST_F(GpuPointwise, RotaryHalvesInOneLaunch) {
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const int64_t t = 67, h = 32;
    std::mt19937 rng(7);
    Tensor x = Tensor::empty(dtype, {t, 2 * h}).value(), cs = Tensor::empty(dtype, {t, h}).value(),
           sn = Tensor::empty(dtype, {t, h}).value();
    for (const Tensor* p : {&x, &cs, &sn}) fill_random(*p, 0, rng);
    const Tensor x1 = x.view_as({t, h}, {2 * h, 1}, 0), x2 = x.view_as({t, h}, {2 * h, 1}, h);
    auto run = [](const char* target, std::vector<cpu::KernelArg> a) {
      return (*cpu_reference(target, a))[0];
    };
    const Tensor lo = run("aten.sub.Tensor", {run("aten.mul.Tensor", {x1, cs}),
                                              run("aten.mul.Tensor", {x2, sn}), int64_t{1}});
    const Tensor hi = run("aten.add.Tensor", {run("aten.mul.Tensor", {x2, cs}),
                                              run("aten.mul.Tensor", {x1, sn}), int64_t{1}});
    PointwiseProgram p;
    const PointwiseRef a = p.add_input(dtype), b = p.add_input(dtype), c = p.add_input(dtype),
                       s = p.add_input(dtype);
    auto node = [&](PointwiseFn fn, PointwiseRef l, PointwiseRef r) {
      return p.add_node(fn, {l, r}, dtype, ir::opmath_dtype(dtype));
    };
    p.add_output(
        node(PointwiseFn::kSub, node(PointwiseFn::kMul, a, c), node(PointwiseFn::kMul, b, s)));
    p.add_output(
        node(PointwiseFn::kAdd, node(PointwiseFn::kMul, b, c), node(PointwiseFn::kMul, a, s)));
    DeviceCopy dx = upload(x), dc = upload(cs), ds = upload(sn);
    DeviceTensor dx1 = dx.view, dx2 = dx.view;
    dx1.sizes[1] = dx2.sizes[1] = h;
    dx2.data = static_cast<char*>(dx.view.data) + h * dtype_size(dtype);
    Destination res = make_destination(dtype, {t, 2 * h}, Layout::kContiguous);
    DeviceTensor r1 = res.view, r2 = res.view;
    r1.sizes[1] = r2.sizes[1] = h;
    r2.data = static_cast<char*>(res.view.data) + h * dtype_size(dtype);
    const DeviceTensor ins[] = {dx1, dx2, dc.view, ds.view};
    const DeviceTensor outs[] = {r1, r2};
    ASSERT_TRUE(launch_pointwise(p, ins, outs, {}).ok());
    // Expected: the two halves side by side.
    Tensor want = Tensor::empty(dtype, {t, 2 * h}).value();
    copy_cast_into(want.view_as({t, h}, {2 * h, 1}, 0), lo);
    copy_cast_into(want.view_as({t, h}, {2 * h, 1}, h), hi);
    EXPECT_EQ(check_destination(res, want, true), "") << dtype_name(dtype);
  }
}

// Broadcast operands in the 4-element kernels: a 0-d tensor in the contiguous kernel (read at
// its one element, not past it), a row repeated over rows and a value per row in the rows
// kernel (output rows in a wider tensor).
TEST_F(GpuPointwise, BroadcastOperandsReachEveryGroupOfFour) {
  PointwiseProgram p;
  const PointwiseRef a = p.add_input(DType::kFloat32), b = p.add_input(DType::kFloat32);
  p.add_output(p.add_node(PointwiseFn::kMul, {a, b}, DType::kFloat32, DType::kFloat32));
  std::mt19937 rng(11);
  const Shape shape = {5, 8};
  Tensor x = Tensor::empty(DType::kFloat32, shape).value();
  fill_random(x, 0, rng);
  for (const Shape& bshape : {Shape{}, Shape{8}, Shape{5, 1}}) {
    for (Layout out_layout : {Layout::kContiguous, Layout::kRows}) {
      Tensor y = Tensor::empty(DType::kFloat32, bshape).value();
      fill_random(y, 0, rng);
      const std::vector<cpu::KernelArg> args = {x, y};
      const Tensor want = (*cpu_reference("aten.mul.Tensor", args))[0];
      DeviceCopy dx = upload(x), dy = upload(y);
      Destination out = make_destination(DType::kFloat32, shape, out_layout);
      const DeviceTensor ins[] = {dx.view, dy.view};
      const DeviceTensor outs[] = {out.view};
      ASSERT_TRUE(launch_pointwise(p, ins, outs, {}).ok());
      EXPECT_EQ(check_destination(out, want, true), "")
          << shape_string(bshape) << " into " << layout_name(out_layout);
    }
  }
}

// A KV-cache-style write: out = x * 2 stored at cache[:, pos:pos+2, :] with pos read from the
// device when the kernel runs; a position past the end records an error and writes nothing.
TEST_F(GpuPointwise, DevicePositionMovesTheDestination) {
  const int64_t heads = 3, len = 10, dim = 8, step = 2;
  PointwiseProgram p;
  const PointwiseRef x = p.add_input(DType::kFloat32);
  p.add_output(p.add_node(PointwiseFn::kMul, {x, p.add_constant(Scalar(2.0), DType::kFloat32)},
                          DType::kFloat32, DType::kFloat32));
  Tensor src = Tensor::empty(DType::kFloat32, {heads, step, dim}).value();
  std::mt19937 rng(3);
  fill_random(src, 0, rng);
  DeviceCopy dsrc = upload(src);
  Destination cache = make_destination(DType::kFloat32, {heads, len, dim}, Layout::kContiguous);
  auto pos_buf = DeviceBuffer::allocate(sizeof(int64_t), "position");
  ASSERT_TRUE(pos_buf.ok());
  DevicePosition pos;
  pos.position = pos_buf->as<int64_t>();
  pos.dim = 1;
  pos.dim_size = len;
  pos.stride = dim;
  pos.extent = step;
  DeviceTensor window = cache.view;  // the view at position 0
  window.sizes[1] = step;
  auto prepared = PreparedPointwise::prepare(p, PointwiseVariant{{false, true}});
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  const int64_t compiles = nvrtc_compile_count();
  Tensor want = Tensor::empty(DType::kFloat32, {heads, len, dim}).value();
  std::vector<float> host(heads * len * dim);
  for (int64_t position : {int64_t{0}, int64_t{5}, int64_t{8}}) {
    ASSERT_EQ(cudaMemcpy(pos_buf->data(), &position, sizeof(position), cudaMemcpyHostToDevice),
              cudaSuccess);
    const PointwiseOperand ins[] = {{dsrc.view, nullptr}};
    const PointwiseOperand outs[] = {{window, &pos}};
    LaunchContext ctx;
    ctx.error_word = error_word_.device();
    ASSERT_TRUE((*prepared)->launch(ins, outs, ctx).ok());
    EXPECT_FALSE(take_failure().has_value());
    for (int64_t hh = 0; hh < heads; ++hh)
      for (int64_t s = 0; s < step; ++s)
        for (int64_t d = 0; d < dim; ++d)
          want.data<float>()[(hh * len + position + s) * dim + d] =
              2.0f * src.data<float>()[(hh * step + s) * dim + d];
  }
  EXPECT_EQ(nvrtc_compile_count(), compiles);  // a new position is data, not a new kernel
  // Positions 0, 5 and 8 are written; every other row must still hold the poison.
  std::vector<unsigned char> raw(heads * len * dim * 4);
  ASSERT_EQ(cudaMemcpy(raw.data(), cache.buffer.data(), raw.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int64_t hh = 0; hh < heads; ++hh) {
    for (int64_t s = 0; s < len; ++s) {
      const bool written = s < 2 || (s >= 5 && s < 7) || s >= 8;
      for (int64_t d = 0; d < dim; ++d) {
        const int64_t i = (hh * len + s) * dim + d;
        float got;
        std::memcpy(&got, raw.data() + i * 4, 4);
        if (written) {
          EXPECT_EQ(got, want.data<float>()[i]) << hh << "," << s << "," << d;
        } else {
          EXPECT_EQ(raw[i * 4], kPoison) << "row " << s << " was written";
        }
      }
    }
  }
  // Position 9 would cover rows 9..10 of 10: refused on the device.
  const int64_t bad = 9;
  ASSERT_EQ(cudaMemcpy(pos_buf->data(), &bad, sizeof(bad), cudaMemcpyHostToDevice), cudaSuccess);
  const std::vector<unsigned char> before = raw;
  const PointwiseOperand ins[] = {{dsrc.view, nullptr}};
  const PointwiseOperand outs[] = {{window, &pos}};
  LaunchContext ctx;
  ctx.error_word = error_word_.device();
  ctx.site = 42;
  ASSERT_TRUE((*prepared)->launch(ins, outs, ctx).ok());
  auto failure = take_failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->site, 42);
  EXPECT_EQ(failure_error(*failure, "node cache_write").message(),
            "node cache_write: position 9 (covering 2 entries) is out of range for dim 1 of "
            "size 10");
  ASSERT_EQ(cudaMemcpy(raw.data(), cache.buffer.data(), raw.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(raw, before) << "a refused position wrote something";
}

TEST_F(GpuPointwise, InPlaceUpdateOfAStridedView) {
  // x[:, 1::2] += y, written through the same view it reads.
  Tensor base = Tensor::empty(DType::kInt32, {5, 9}).value();
  std::mt19937 rng(11);
  fill_random(base, 0, rng);
  Tensor y = Tensor::empty(DType::kInt32, {4}).value();
  fill_random(y, 0, rng);
  DeviceCopy dbase = upload(base), dy = upload(y);
  DeviceTensor view = dbase.view;
  view.sizes[1] = 4;
  view.strides[1] = 2;
  view.data = static_cast<char*>(dbase.view.data) + 4;
  auto lowered =
      lower_pointwise_op("aten.add.Tensor", std::vector<OpArg>{OpArg::tensor(DType::kInt32, 2),
                                                               OpArg::tensor(DType::kInt32, 1),
                                                               OpArg::number(Scalar(int64_t{1}))});
  ASSERT_TRUE(lowered.ok());
  const DeviceTensor ins[] = {view, dy.view};
  const DeviceTensor outs[] = {view};
  ASSERT_TRUE(launch_pointwise(lowered->program, ins, outs, {}).ok());
  std::vector<int32_t> got(45);
  ASSERT_EQ(cudaMemcpy(got.data(), dbase.buffer.data(), 180, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t k = 0; k < 9; ++k) {
      int32_t want = base.data<int32_t>()[r * 9 + k];
      if (k % 2 == 1) want += y.data<int32_t>()[k / 2];
      EXPECT_EQ(got[r * 9 + k], want) << r << "," << k;
    }
}

TEST_F(GpuPointwise, IntegerDivisionByZeroFailsLikeTheCpu) {
  Tensor a = Tensor::empty(DType::kInt64, {6}).value(),
         b = Tensor::empty(DType::kInt64, {6}).value();
  for (int i = 0; i < 6; ++i) {
    a.data<int64_t>()[i] = i + 1;
    b.data<int64_t>()[i] = i == 4 ? 0 : 2;
  }
  auto on_cpu = cpu_reference("aten.remainder.Tensor", std::vector<cpu::KernelArg>{a, b});
  ASSERT_FALSE(on_cpu.ok());
  auto lowered = lower_pointwise_op(
      "aten.remainder.Tensor",
      std::vector<OpArg>{OpArg::tensor(DType::kInt64, 1), OpArg::tensor(DType::kInt64, 1)});
  ASSERT_TRUE(lowered.ok());
  DeviceCopy da = upload(a), db = upload(b);
  Destination out = make_destination(DType::kInt64, {6}, Layout::kContiguous);
  const DeviceTensor ins[] = {da.view, db.view};
  const DeviceTensor outs[] = {out.view};
  LaunchContext no_word;
  auto refused = launch_pointwise(lowered->program, ins, outs, no_word);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("needs an error word"), std::string::npos);
  LaunchContext ctx;
  ctx.error_word = error_word_.device();
  ASSERT_TRUE(launch_pointwise(lowered->program, ins, outs, ctx).ok());
  auto failure = take_failure();
  ASSERT_TRUE(failure.has_value());
  const Error e = failure_error(*failure, "aten.remainder.Tensor");
  EXPECT_EQ(e.message(), on_cpu.error().message());
  EXPECT_EQ(e.kind(), on_cpu.error().kind());
}

TEST_F(GpuPointwise, CacheCompilesOnceAcrossThreadsAndLaunchesAllocateNothing) {
  PointwiseProgram p;
  const PointwiseRef x = p.add_input(DType::kFloat64);
  // A program no other test builds: its first use compiles.
  p.add_output(p.add_node(PointwiseFn::kHardswish,
                          {p.add_node(PointwiseFn::kExp2, {x}, DType::kFloat64, DType::kFloat64)},
                          DType::kFloat64, DType::kFloat64));
  const int64_t before = nvrtc_compile_count();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      if (cudaSetDevice(0) == cudaSuccess && PreparedPointwise::prepare(p, {}).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(nvrtc_compile_count(), before + 1);
  Tensor in = Tensor::empty(DType::kFloat64, {1000}).value();
  DeviceCopy din = upload(in);
  Destination out = make_destination(DType::kFloat64, {1000}, Layout::kContiguous);
  const DeviceTensor ins[] = {din.view};
  const DeviceTensor outs[] = {out.view};
  const int64_t mallocs = cuda_malloc_count();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(launch_pointwise(p, ins, outs, {}).ok());
  EXPECT_EQ(cuda_malloc_count(), mallocs);
  EXPECT_EQ(nvrtc_compile_count(), before + 1);
}

// prepare_all compiles each distinct structure once (a program repeated, as a decoder's layers
// repeat their groups, costs nothing more), and a launch after it compiles nothing.
TEST_F(GpuPointwise, PrepareAllCompilesEachDistinctProgramOnce) {
  // Programs no other test builds: their first use compiles.
  const auto chain = [](PointwiseFn a, PointwiseFn b) {
    PointwiseProgram p;
    const PointwiseRef x = p.add_input(DType::kFloat64);
    p.add_output(p.add_node(b, {p.add_node(a, {x}, DType::kFloat64, DType::kFloat64)},
                            DType::kFloat64, DType::kFloat64));
    return p;
  };
  const PointwiseProgram first = chain(PointwiseFn::kExpm1, PointwiseFn::kHardsigmoid);
  const PointwiseProgram again = chain(PointwiseFn::kExpm1, PointwiseFn::kHardsigmoid);
  const PointwiseProgram second = chain(PointwiseFn::kLog1p, PointwiseFn::kHardsigmoid);
  const int64_t before = nvrtc_compile_count();
  const PointwiseProgram* all[] = {&first, &again, &second};
  prepare_all(all);
  EXPECT_EQ(nvrtc_compile_count(), before + 2);
  Tensor in = Tensor::empty(DType::kFloat64, {100}).value();
  DeviceCopy din = upload(in);
  Destination out = make_destination(DType::kFloat64, {100}, Layout::kContiguous);
  const DeviceTensor ins[] = {din.view};
  const DeviceTensor outs[] = {out.view};
  for (const PointwiseProgram* p : all) ASSERT_TRUE(launch_pointwise(*p, ins, outs, {}).ok());
  EXPECT_EQ(nvrtc_compile_count(), before + 2);
}

}  // namespace
}  // namespace splice::cuda::testing
