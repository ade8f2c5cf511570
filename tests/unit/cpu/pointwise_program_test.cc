// The PointwiseProgram interpreter (backends/cpu/pointwise_program.h) against the CPU kernels:
// for every pointwise case of the lowering's table (tests/unit/cuda/pointwise_cases.h: every
// op, with numbers, broadcasts and mixed dtypes) in every dtype the lowering accepts, the
// op's program, interpreted, gives the kernel's result bit for bit (NaNs as NaNs) — the
// property that lets the planner fuse ops without changing any result. Also: a strided
// output (a slice of a larger buffer) receives exactly its elements, and large iteration
// spaces split over threads give the single-thread bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backends/cpu/pointwise_program.h"
#include "backends/cpu/registry.h"
#include "backends/cpu/thread_pool.h"
#include "ir/pointwise_lowering.h"
#include "tensor/convert.h"
#include "tests/unit/cuda/pointwise_cases.h"

namespace splice::cpu {
namespace {

using cuda::testing::ArgSpec;
using cuda::testing::PointwiseCase;
using cuda::testing::Values;

constexpr DType kDTypes[] = {DType::kBool,    DType::kUInt8,  DType::kInt8,    DType::kInt16,
                             DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                             DType::kFloat32, DType::kFloat64};

Shape instantiate(const std::vector<int64_t>& shape) {
  Shape s;
  for (int64_t d : shape) s.push_back(d == -1 ? 5 : d == -2 ? 7 : d);
  return s;
}

Tensor random_tensor(DType dtype, const Shape& sizes, Values kind, std::mt19937& rng) {
  Tensor f = Tensor::empty(DType::kFloat64, sizes).value();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int64_t i = 0; i < f.numel(); ++i) {
    const double r = unit(rng);
    double v;
    if (dtype == DType::kBool) {
      v = r < 0.5 ? 0.0 : 1.0;
    } else if (is_floating(dtype)) {
      if (kind == Values::kUnit) {
        v = unit(rng) * 1.98 - 0.99;
      } else if (kind == Values::kSmall) {
        v = unit(rng) * 4.0 - 2.0;
      } else if (r < 0.03) {
        const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};
        v = specials[static_cast<int>(unit(rng) * 5) % 5];
        if (kind == Values::kNonZero && v == 0.0) v = 1.0;
      } else if (r < 0.15) {
        v = std::floor(unit(rng) * 9.0) - 4.0;
        if (kind == Values::kNonZero && v == 0.0) v = 3.0;
      } else if (r < 0.25) {
        v = std::floor(unit(rng) * 9.0) - 4.5;
      } else {
        v = unit(rng) * 8.0 - 4.0;
      }
    } else if (kind == Values::kSmall) {
      v = std::floor(unit(rng) * 4.0);
    } else {
      v = std::floor(unit(rng) * 19.0) - 9.0;
      if (kind == Values::kNonZero && v == 0.0) v = 5.0;
    }
    f.data<double>()[i] = v;
  }
  return convert(f, dtype).value();
}

// Equal bit for bit, except that any NaN equals any NaN (payloads are not PyTorch's contract).
bool same_values(const Tensor& a, const Tensor& b, std::string* where) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) {
    *where = "dtype or sizes";
    return false;
  }
  const Tensor ca = a.contiguous_copy().value(), cb = b.contiguous_copy().value();
  const size_t size = dtype_size(a.dtype());
  for (int64_t i = 0; i < ca.numel(); ++i) {
    const std::byte* x = ca.raw_data() + i * size;
    const std::byte* y = cb.raw_data() + i * size;
    if (std::memcmp(x, y, size) == 0) continue;
    if (is_floating(a.dtype())) {
      const double dx =
          convert(ca.view_as({1}, {1}, ca.offset() + i), DType::kFloat64).value().data<double>()[0];
      const double dy =
          convert(cb.view_as({1}, {1}, cb.offset() + i), DType::kFloat64).value().data<double>()[0];
      if (std::isnan(dx) && std::isnan(dy)) continue;
      *where = fmt::format("element {}: {} vs {}", i, dx, dy);
    } else {
      *where = fmt::format("element {}", i);
    }
    return false;
  }
  return true;
}

TEST(PointwiseProgram, EveryLoweredCaseMatchesItsKernel) {
  std::mt19937 rng(17);
  int compared = 0, not_interpreted = 0;
  for (const PointwiseCase& c : cuda::testing::pointwise_cases()) {
    for (DType dtype : kDTypes) {
      std::vector<ir::OpArg> op_args;
      std::vector<KernelArg> args;
      for (const ArgSpec& a : c.args) {
        switch (a.kind) {
          case ArgSpec::Kind::kTensor: {
            const DType d = a.dtype.value_or(dtype);
            op_args.push_back(ir::OpArg::tensor(d, static_cast<int64_t>(a.shape.size())));
            args.push_back(random_tensor(d, instantiate(a.shape), a.values, rng));
            break;
          }
          case ArgSpec::Kind::kNumber:
            op_args.push_back(ir::OpArg::number(a.number));
            if (a.number.is_bool())
              args.push_back(a.number.to_bool());
            else if (a.number.is_int())
              args.push_back(a.number.to_int());
            else
              args.push_back(a.number.to_double());
            break;
          case ArgSpec::Kind::kString:
            op_args.push_back(ir::OpArg::string(a.text));
            args.push_back(a.text);
            break;
          case ArgSpec::Kind::kNone:
            op_args.push_back(ir::OpArg::none());
            args.push_back(std::monostate{});
            break;
          case ArgSpec::Kind::kDType:
            op_args.push_back(ir::OpArg::scalar_type(a.dtype.value_or(dtype)));
            args.push_back(a.dtype.value_or(dtype));
            break;
          case ArgSpec::Kind::kIntList:
            op_args.push_back(ir::OpArg::none());
            args.push_back(instantiate(a.shape));
            break;
        }
      }
      auto lowered = ir::lower_pointwise_op(c.target, op_args);
      if (!lowered.ok()) continue;  // the lowering refuses what the kernel refuses
      bool runs = true;
      for (const auto& n : lowered->program.nodes) {
        const uint8_t cls = n.compute == DType::kBool ? ir::kComputeBool
                            : is_integral(n.compute)  ? ir::kComputeInt
                                                      : ir::kComputeFloat;
        runs = runs && (interpreted_classes(n.fn) & cls) != 0;
      }
      if (!runs) {
        ++not_interpreted;
        continue;
      }
      // Composites (to.dtype, contiguous, type_as, dropout) are decomposed before any backend
      // and have no kernel to compare with.
      const auto kernel = find_kernel(c.target);
      if (kernel == nullptr) continue;
      auto expected = call_kernel(kernel, args);
      // fill.Tensor checks its value tensor's data (the planner never fuses it).
      if (!expected.ok() && c.target == "aten.fill.Tensor") continue;
      ASSERT_TRUE(expected.ok()) << c.target << " " << dtype_name(dtype) << ": "
                                 << expected.error().message();
      const Tensor& want = (*expected)[0];
      std::vector<Tensor> inputs;
      for (int i : lowered->inputs) {
        const Tensor& t = std::get<Tensor>(args[static_cast<size_t>(i)]);
        // Leading dims of size 1 up to the output's rank.
        Shape sizes(static_cast<size_t>(want.dim() - t.dim()), 1), strides(sizes.size(), 0);
        sizes.insert(sizes.end(), t.sizes().begin(), t.sizes().end());
        strides.insert(strides.end(), t.strides().begin(), t.strides().end());
        inputs.push_back(t.view_as(sizes, strides, t.offset()));
      }
      Tensor got = Tensor::empty(want.dtype(), want.sizes()).value();
      const Tensor outs[] = {got};
      auto r = run_pointwise_program(lowered->program, inputs, outs, want.sizes());
      ASSERT_TRUE(r.ok()) << c.target << " " << dtype_name(dtype) << ": " << r.error().message();
      std::string where;
      EXPECT_TRUE(same_values(got, want, &where))
          << c.target << " in " << dtype_name(dtype) << ": " << where << "\n"
          << ir::to_string(lowered->program);
      ++compared;
    }
  }
  EXPECT_GT(compared, 500);
  EXPECT_LT(not_interpreted, compared / 10);
}

// out = x * 2 + 1 into every other column of a zeroed [4, 6] buffer; the rest stays 0.
TEST(PointwiseProgram, StoresThroughAStridedOutputOnly) {
  ir::PointwiseProgram p;
  auto x = p.add_input(DType::kFloat32);
  auto m =
      p.add_node(ir::PointwiseFn::kMul, {x, p.add_constant(Scalar(int64_t{2}), DType::kFloat32)},
                 DType::kFloat32, DType::kFloat32);
  auto a = p.add_node(ir::PointwiseFn::kAdd, {m, p.add_constant(Scalar(1.0), DType::kFloat32)},
                      DType::kFloat32, DType::kFloat32);
  p.add_output(a);
  Tensor in = Tensor::empty(DType::kFloat32, {4, 3}).value();
  for (int i = 0; i < 12; ++i) in.data<float>()[i] = static_cast<float>(i);
  Tensor buf = Tensor::empty(DType::kFloat32, {4, 6}).value();
  std::memset(buf.raw_data(), 0, buf.nbytes());
  const Tensor outs[] = {buf.view_as({4, 3}, {6, 2}, 1)};
  ASSERT_TRUE(run_pointwise_program(p, std::span<const Tensor>(&in, 1), outs, {4, 3}).ok());
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c)
      EXPECT_EQ(buf.data<float>()[r * 6 + c], c % 2 == 1 ? (r * 3 + c / 2) * 2.0f + 1.0f : 0.0f)
          << r << "," << c;
}

// Dims merge only where every tensor walks them as one: x contiguous, y broadcast along dim 1,
// z transposed in its last two dims, out0 the right half of a [2, 3, 8] buffer, out1
// contiguous. Each element must come from its own operands whatever runs the walk takes.
TEST(PointwiseProgram, MixedLayoutsReadAndStoreEveryElementOnce) {
  ir::PointwiseProgram p;
  auto x = p.add_input(DType::kFloat32), y = p.add_input(DType::kFloat32),
       z = p.add_input(DType::kFloat32);
  auto xy = p.add_node(ir::PointwiseFn::kAdd, {x, y}, DType::kFloat32, DType::kFloat32);
  p.add_output(p.add_node(ir::PointwiseFn::kMul, {xy, z}, DType::kFloat32, DType::kFloat32));
  p.add_output(xy);
  auto counting = [](const Shape& sizes, float scale) {
    Tensor t = Tensor::empty(DType::kFloat32, sizes).value();
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i) * scale;
    return t;
  };
  const Tensor xs = counting({2, 3, 4}, 1.0f);
  const Tensor ys = counting({2, 1, 4}, 100.0f);
  const Tensor zs = counting({2, 4, 3}, 0.5f);
  const Tensor ins[] = {xs, ys, zs.view_as({2, 3, 4}, {12, 1, 3}, 0)};
  Tensor buf = Tensor::empty(DType::kFloat32, {2, 3, 8}).value();
  std::memset(buf.raw_data(), 0, buf.nbytes());
  Tensor out1 = Tensor::empty(DType::kFloat32, {2, 3, 4}).value();
  const Tensor outs[] = {buf.view_as({2, 3, 4}, {24, 8, 1}, 4), out1};
  ASSERT_TRUE(run_pointwise_program(p, ins, outs, {2, 3, 4}).ok());
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 8; ++c) {
        const float sum =
            xs.data<float>()[a * 12 + b * 4 + (c % 4)] + ys.data<float>()[a * 4 + (c % 4)];
        const float want_out0 = c < 4 ? 0.0f : sum * zs.data<float>()[a * 12 + (c - 4) * 3 + b];
        EXPECT_EQ(buf.data<float>()[a * 24 + b * 8 + c], want_out0) << a << "," << b << "," << c;
        if (c < 4) {
          EXPECT_EQ(out1.data<float>()[a * 12 + b * 4 + c], sum) << a << "," << b;
        }
      }
    }
}

TEST(PointwiseProgram, ThreadsGiveTheSingleThreadBytes) {
  ir::PointwiseProgram p;
  auto x = p.add_input(DType::kFloat32);
  p.add_output(p.add_node(ir::PointwiseFn::kSilu, {x}, DType::kFloat32, DType::kFloat32));
  std::mt19937 rng(3);
  const Shape sizes = {257, 1031};  // not a multiple of the tile
  Tensor in = random_tensor(DType::kFloat32, sizes, Values::kAny, rng);
  Tensor one = Tensor::empty(DType::kFloat32, sizes).value();
  Tensor four = Tensor::empty(DType::kFloat32, sizes).value();
  ASSERT_TRUE(run_pointwise_program(p, std::span<const Tensor>(&in, 1),
                                    std::span<const Tensor>(&one, 1), sizes)
                  .ok());
  ThreadPool pool(4);
  {
    ScopedPool scoped(&pool);
    ASSERT_TRUE(run_pointwise_program(p, std::span<const Tensor>(&in, 1),
                                      std::span<const Tensor>(&four, 1), sizes)
                    .ok());
  }
  EXPECT_GT(pool.max_threads_used(), 1);
  EXPECT_EQ(std::memcmp(one.raw_data(), four.raw_data(), one.nbytes()), 0);
}

// Dense inputs are read and dense outputs computed in place, whole tiles at a time: 900
// elements are three whole tiles and a partial one (through the slots), one node's value is
// stored twice (once in place, once copied from there), and an output stored over an input
// leaves later nodes reading the input as it was.
TEST(PointwiseProgram, InPlaceTilesGiveTheSameValues) {
  ir::PointwiseProgram p;
  auto x = p.add_input(DType::kFloat32), y = p.add_input(DType::kFloat32);
  auto t = p.add_node(ir::PointwiseFn::kMul, {x, y}, DType::kFloat32, DType::kFloat32);
  auto u = p.add_node(ir::PointwiseFn::kAdd, {t, x}, DType::kFloat32, DType::kFloat32);
  p.add_output(u);
  p.add_output(u);
  p.add_output(t);
  const Shape sizes = {3, 300};
  std::mt19937 rng(5);
  const Tensor xs = random_tensor(DType::kFloat32, sizes, Values::kAny, rng);
  const Tensor ys = random_tensor(DType::kFloat32, sizes, Values::kAny, rng);
  std::vector<float> want_t(900), want_u(900);
  for (int i = 0; i < 900; ++i) {
    want_t[i] = xs.data<float>()[i] * ys.data<float>()[i];
    want_u[i] = want_t[i] + xs.data<float>()[i];
  }
  auto expect_values = [&](const Tensor& got, const std::vector<float>& want, const char* what) {
    for (int i = 0; i < 900; ++i)
      ASSERT_EQ(std::memcmp(&got.data<float>()[i], &want[i], sizeof(float)), 0)
          << what << " at " << i;
  };
  Tensor o0 = Tensor::empty(DType::kFloat32, sizes).value();
  Tensor o1 = Tensor::empty(DType::kFloat32, sizes).value();
  Tensor o2 = Tensor::empty(DType::kFloat32, sizes).value();
  const Tensor ins[] = {xs, ys};
  const Tensor outs[] = {o0, o1, o2};
  ASSERT_TRUE(run_pointwise_program(p, ins, outs, sizes).ok());
  expect_values(o0, want_u, "u");
  expect_values(o1, want_u, "u again");
  expect_values(o2, want_t, "t");
  // t stored over x: u's node, after t's, must still read x as it was.
  const Tensor x_copy = xs.contiguous_copy().value();
  const Tensor ins_copy[] = {x_copy, ys};
  const Tensor over_x[] = {o0, o1, x_copy};
  ASSERT_TRUE(run_pointwise_program(p, ins_copy, over_x, sizes).ok());
  expect_values(o0, want_u, "u with t over x");
  expect_values(x_copy, want_t, "t over x");
}

TEST(PointwiseProgram, MismatchedTensorsAreRefused) {
  ir::PointwiseProgram p;
  p.add_output(p.add_node(ir::PointwiseFn::kNeg, {p.add_input(DType::kFloat32)}, DType::kFloat32,
                          DType::kFloat32));
  Tensor in = Tensor::empty(DType::kFloat64, {3}).value();
  Tensor out = Tensor::empty(DType::kFloat32, {3}).value();
  auto r = run_pointwise_program(p, std::span<const Tensor>(&in, 1),
                                 std::span<const Tensor>(&out, 1), {3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "pointwise program: input 0 is f64[3], not f32 of rank 1");
}

}  // namespace
}  // namespace splice::cpu
