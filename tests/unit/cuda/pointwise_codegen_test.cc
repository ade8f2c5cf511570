// Code generation for pointwise programs without a GPU: every function compiles with NVRTC for
// sm_90 in every compute class it supports, over every storage dtype; every dtype converts to
// every other; constant values stay out of the source (one kernel serves every value); program
// validation names what is wrong.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <vector>

#include "backends/cuda/nvrtc_compiler.h"
#include "backends/cuda/pointwise_codegen.h"
#include "ir/pointwise.h"

namespace splice::cuda {
namespace {

using ir::PointwiseFn;
using ir::PointwiseProgram;
using ir::PointwiseRef;

uint8_t compute_class(DType d) {
  if (d == DType::kBool) return ir::kComputeBool;
  return is_integral(d) ? ir::kComputeInt : ir::kComputeFloat;
}

// Every function defined for `storage`'s compute class, each on inputs of `storage` (and a
// bool condition for where); odd nodes take their last operand from a constant.
PointwiseProgram all_functions(DType storage) {
  PointwiseProgram p;
  const DType compute = ir::opmath_dtype(storage);
  std::vector<PointwiseRef> in;
  for (int k = 0; k < 4; ++k) in.push_back(p.add_input(storage));
  const PointwiseRef cond = p.add_input(DType::kBool);
  const Scalar value = is_floating(storage) ? Scalar(0.75) : Scalar(int64_t{3});
  PointwiseRef last{};
  int count = 0;
  for (PointwiseFn fn : ir::all_pointwise_fns()) {
    const ir::PointwiseFnInfo& info = ir::pointwise_fn_info(fn);
    if ((info.classes & compute_class(compute)) == 0) continue;
    std::vector<PointwiseRef> ops(in.begin(), in.begin() + info.arity);
    if (fn == PointwiseFn::kWhere) ops[0] = cond;
    if (count % 2 == 1 && info.arity > 1) ops.back() = p.add_constant(value, storage);
    last = p.add_node(fn, ops, info.bool_result ? DType::kBool : storage, compute);
    ++count;
  }
  p.add_output(last);
  return p;
}

class CudaPointwiseCodegen : public ::testing::TestWithParam<DType> {};

TEST_P(CudaPointwiseCodegen, EveryFunctionCompiles) {
  const PointwiseProgram p = all_functions(GetParam());
  auto source = generate_pointwise_source(p, {});
  ASSERT_TRUE(source.ok()) << source.error().message();
  auto cubin = compile_to_cubin(*source, 90);
  ASSERT_TRUE(cubin.ok()) << cubin.error().message();
  EXPECT_GT(cubin->size(), 1000u);
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, CudaPointwiseCodegen, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(CudaPointwiseCodegenCasts, EveryDTypeToEveryDType) {
  PointwiseProgram p;
  std::vector<PointwiseRef> in;
  for (DType d : kAllDTypes) in.push_back(p.add_input(d));
  PointwiseRef last{};
  for (size_t i = 0; i < std::size(kAllDTypes); ++i) {
    for (DType to : kAllDTypes) {
      last = p.add_node(PointwiseFn::kCopy, {in[i]}, to, ir::opmath_dtype(to));
    }
  }
  // Constants of each Python kind into each dtype.
  for (DType to : kAllDTypes) {
    for (Scalar s : {Scalar(true), Scalar(int64_t{-300}), Scalar(-1.5)}) {
      p.add_node(PointwiseFn::kCopy, {p.add_constant(s, to)}, to, ir::opmath_dtype(to));
    }
  }
  p.add_output(last);
  auto source = generate_pointwise_source(p, {});
  ASSERT_TRUE(source.ok()) << source.error().message();
  auto cubin = compile_to_cubin(*source, 90);
  ASSERT_TRUE(cubin.ok()) << cubin.error().message();
}

TEST(CudaPointwiseCodegenCasts, MultipleOutputsLinearIndexAndPositions) {
  // arange-like: out0 = float(linear_index) * step + start; out1 = its f16 rounding; both
  // outputs start at positions read on the device.
  PointwiseProgram p;
  const PointwiseRef x = p.add_input(DType::kFloat16);
  const PointwiseRef idx = p.add_node(PointwiseFn::kCopy, {PointwiseRef::linear_index()},
                                      DType::kFloat64, DType::kFloat64);
  const PointwiseRef scaled =
      p.add_node(PointwiseFn::kMul, {idx, p.add_constant(Scalar(0.5), DType::kFloat64)},
                 DType::kFloat64, DType::kFloat64);
  const PointwiseRef sum =
      p.add_node(PointwiseFn::kAdd, {scaled, x}, DType::kFloat32, DType::kFloat32);
  p.add_output(sum);
  p.add_output(p.add_node(PointwiseFn::kCopy, {sum}, DType::kFloat16, DType::kFloat32));
  PointwiseVariant variant;
  variant.dynamic = {false, true, true};
  auto source = generate_pointwise_source(p, variant);
  ASSERT_TRUE(source.ok()) << source.error().message();
  EXPECT_NE(source->find("Dyn dyn[2]"), std::string::npos);
  auto cubin = compile_to_cubin(*source, 90);
  ASSERT_TRUE(cubin.ok()) << cubin.error().message();
}

TEST(CudaPointwiseCodegenCasts, ConstantValuesAreNotInTheSource) {
  auto program = [](double value) {
    PointwiseProgram p;
    const PointwiseRef x = p.add_input(DType::kFloat32);
    p.add_output(p.add_node(PointwiseFn::kMul, {x, p.add_constant(Scalar(value), DType::kFloat32)},
                            DType::kFloat32, DType::kFloat32));
    return p;
  };
  auto a = generate_pointwise_source(program(2.5), {});
  auto b = generate_pointwise_source(program(-7.25), {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  // A different Python kind (int instead of float) is structure: it converts differently.
  PointwiseProgram c;
  const PointwiseRef x = c.add_input(DType::kFloat32);
  c.add_output(c.add_node(PointwiseFn::kMul,
                          {x, c.add_constant(Scalar(int64_t{2}), DType::kFloat32)}, DType::kFloat32,
                          DType::kFloat32));
  auto cs = generate_pointwise_source(c, {});
  ASSERT_TRUE(cs.ok());
  EXPECT_NE(*a, *cs);
}

TEST(CudaPointwiseCodegenCasts, CompileErrorsCarryTheLog) {
  auto cubin = compile_to_cubin("extern \"C\" __global__ void k() { undefined_thing(); }", 90);
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.error().kind(), ErrorKind::kBackend);
  EXPECT_NE(cubin.error().message().find("undefined_thing"), std::string::npos)
      << cubin.error().message();
}

TEST(CudaPointwiseProgram, ValidateNamesTheProblem) {
  PointwiseProgram p;
  const PointwiseRef x = p.add_input(DType::kFloat32);
  p.add_output(p.add_node(PointwiseFn::kBitwiseAnd, {x, x}, DType::kFloat32, DType::kFloat32));
  auto r = ir::validate(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("bitwise_and is not defined for f32 compute"),
            std::string::npos)
      << r.error().message();

  PointwiseProgram q;
  const PointwiseRef y = q.add_input(DType::kFloat16);
  q.add_output(q.add_node(PointwiseFn::kExp, {y}, DType::kFloat16, DType::kFloat16));
  r = ir::validate(q);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("16-bit floats compute in float32"), std::string::npos);

  PointwiseProgram arity;
  const PointwiseRef z = arity.add_input(DType::kInt32);
  arity.add_output(arity.add_node(PointwiseFn::kAdd, {z}, DType::kInt32, DType::kInt32));
  r = ir::validate(arity);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("add takes 2 operands, got 1"), std::string::npos);

  PointwiseProgram forward;
  forward.add_input(DType::kInt32);
  forward.nodes.push_back(
      {PointwiseFn::kNeg, {PointwiseRef::node(0)}, DType::kInt32, DType::kInt32});
  forward.outputs.push_back({0, DType::kInt32});
  r = ir::validate(forward);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("earlier node"), std::string::npos);

  PointwiseProgram cmp;
  const PointwiseRef w = cmp.add_input(DType::kInt32);
  cmp.add_output(cmp.add_node(PointwiseFn::kLt, {w, w}, DType::kInt32, DType::kInt32));
  r = ir::validate(cmp);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("lt gives bool"), std::string::npos);
}

TEST(CudaPointwiseProgram, TextForm) {
  PointwiseProgram p;
  const PointwiseRef x = p.add_input(DType::kFloat16);
  p.add_output(p.add_node(PointwiseFn::kAddScaled,
                          {x, x, p.add_constant(Scalar(int64_t{2}), DType::kFloat16)},
                          DType::kFloat16, DType::kFloat32));
  EXPECT_EQ(ir::to_string(p),
            "in0 : f16\nc0 = 2 : f16\nn0 = add_scaled(in0, in0, c0) : f16 via f32\nout0 = n0 : "
            "f16\n");
}

// The 32-bit strided kernel divides by each dim's size with divisor_of's magic number: the
// same formula on the host (umulhi is the high half of the 64-bit product) against `/`, for
// every size up to 4096 and sizes near powers of two up to 2^31 - 1, at dividends around each
// multiple of the size, small ones and the largest the kernel takes (2^31 - 1).
TEST(CudaPointwiseCodegen, DivisorOfDividesLikeTheDivideInstruction) {
  auto divide = [](uint32_t n, uint64_t packed) {
    const auto magic = static_cast<uint32_t>(packed);
    const auto shift = static_cast<uint32_t>(packed >> 32);
    const auto hi = static_cast<uint32_t>((uint64_t{n} * magic) >> 32);
    return (hi + n) >> shift;
  };
  std::vector<uint32_t> sizes;
  for (uint32_t d = 1; d <= 4096; ++d) sizes.push_back(d);
  for (int b = 12; b <= 31; ++b)
    for (int64_t delta : {-3, -1, 0, 1, 3}) {
      const int64_t d = (int64_t{1} << b) + delta;
      if (d >= 1 && d <= INT32_MAX) sizes.push_back(static_cast<uint32_t>(d));
    }
  constexpr uint32_t kLargest = INT32_MAX;
  for (uint32_t d : sizes) {
    const uint64_t packed = divisor_of(d);
    std::vector<uint32_t> dividends = {0, 1, 2, 7, 1000, 65535, 65536, kLargest, kLargest - 1};
    for (uint64_t k : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{kLargest / d}})
      for (int64_t delta : {-1, 0, 1}) {
        const int64_t n = static_cast<int64_t>(k * d) + delta;
        if (n >= 0 && n <= kLargest) dividends.push_back(static_cast<uint32_t>(n));
      }
    for (uint32_t n : dividends) ASSERT_EQ(divide(n, packed), n / d) << n << " / " << d;
  }
}

}  // namespace
}  // namespace splice::cuda
