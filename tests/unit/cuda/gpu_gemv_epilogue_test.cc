// GEMV epilogues on the GPU (gemv_epilogue.h): the generated source compiles for every dtype
// and shape of epilogue (no GPU needed: NVRTC alone); the launch geometry and the row folding
// (plain C++); and end to end (suite GpuGemvEpilogue) programs planned for CUDA with a
// GEMV-epilogue group — SiLU·mul over a joined gate/up product, a residual add with a bias, the
// mm form, split k, several rows, an RMSNorm prologue, and a weight the kernel cannot read (the
// product and the epilogue then run apart) — against the same program on the CPU backend.
#include <gtest/gtest.h>

#include <random>

#include "backends/backend.h"
#include "backends/cuda/gemv_epilogue.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/parser.h"
#include "kernel_check.h"
#include "runtime/executor.h"
#include "tests/unit/plan/gemv_epilogue_programs.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;
using splice::testing::gemv_epilogue_program;
using splice::testing::GemvEpilogueProgram;
using Kind = GemvEpilogueProgram::Kind;

// silu(a0) * a1 over two product ranges, computed as a planned group would (float opmath,
// rounded to dtype after each op).
GemvEpilogueShape silu_mul(DType dtype) {
  GemvEpilogueShape s;
  s.dtype = dtype;
  ir::PointwiseProgram& p = s.program;
  const DType c = ir::opmath_dtype(dtype);
  const auto g = p.add_input(dtype);
  const auto u = p.add_input(dtype);
  const auto act = p.add_node(ir::PointwiseFn::kSilu, {g}, dtype, c);
  p.add_output(p.add_node(ir::PointwiseFn::kMul, {act, u}, dtype, c));
  s.is_range = {true, true};
  return s;
}

TEST(GemvEpilogueCodegen, TheKernelsCompileForEveryDtype) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    SCOPED_TRACE(dtype_name(dtype));
    auto source = generate_gemv_epilogue_source(silu_mul(dtype));
    ASSERT_TRUE(source.ok()) << source.error().message();
    auto cubin = compile_to_cubin(*source, 90);
    ASSERT_TRUE(cubin.ok()) << cubin.error().message();
  }
  // A residual add: one range and one tensor, a constant (alpha), two outputs.
  GemvEpilogueShape s;
  s.dtype = DType::kFloat16;
  const auto o = s.program.add_input(DType::kFloat16);
  const auto r = s.program.add_input(DType::kFloat16);
  const auto alpha = s.program.add_constant(Scalar(int64_t{1}), DType::kFloat16);
  const auto scaled =
      s.program.add_node(ir::PointwiseFn::kMul, {r, alpha}, DType::kFloat16, DType::kFloat32);
  const auto h =
      s.program.add_node(ir::PointwiseFn::kAdd, {o, scaled}, DType::kFloat16, DType::kFloat32);
  s.program.add_output(h);
  s.program.add_output(
      s.program.add_node(ir::PointwiseFn::kNeg, {h}, DType::kFloat16, DType::kFloat32));
  s.is_range = {true, false};
  auto source = generate_gemv_epilogue_source(s);
  ASSERT_TRUE(source.ok()) << source.error().message();
  auto cubin = compile_to_cubin(*source, 90);
  ASSERT_TRUE(cubin.ok()) << cubin.error().message();
}

TEST(GemvEpilogueCodegen, AnEpilogueOverOtherDtypesOrTooManyRangesIsRefused) {
  GemvEpilogueShape s = silu_mul(DType::kFloat16);
  s.dtype = DType::kInt32;
  auto bad = generate_gemv_epilogue_source(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "a GEMV epilogue over i32 products");
  GemvEpilogueShape wide;
  std::vector<ir::PointwiseRef> in;
  for (int i = 0; i < 5; ++i) in.push_back(wide.program.add_input(DType::kFloat16));
  ir::PointwiseRef sum = in[0];
  for (int i = 1; i < 5; ++i)
    sum = wide.program.add_node(ir::PointwiseFn::kAdd, {sum, in[i]}, DType::kFloat16,
                                DType::kFloat32);
  wide.program.add_output(sum);
  wide.is_range.assign(5, true);
  bad = generate_gemv_epilogue_source(wide);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "a GEMV epilogue of 5 ranges, 1 operands and 0 constants");
}

GemvEpilogueArgs decode_args(int64_t n, int64_t k, int64_t width, std::vector<int64_t> columns) {
  alignas(16) static char buffer[64];
  GemvEpilogueArgs a;
  a.gemv.dtype = DType::kFloat16;
  a.gemv.m = 1;
  a.gemv.n = n;
  a.gemv.k = k;
  a.gemv.x = buffer;
  a.gemv.w = buffer;
  a.gemv.x_rs = k;
  a.gemv.w_ns = k;
  a.width = width;
  a.columns = std::move(columns);
  return a;
}

TEST(GemvEpilogueLaunch, TheGeometryCoversEveryRangeOfEveryColumn) {
  // gate/up of a Llama-3.2-1B MLP on 132 multiprocessors: 4 columns x 2 ranges per block.
  auto l = plan_gemv_epilogue(decode_args(16384, 2048, 8192, {0, 8192}), 132);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->cols_per_block, 4);
  EXPECT_EQ(l->tiles, 2048);
  EXPECT_EQ(l->splits, 1);
  EXPECT_EQ(l->partial_bytes, 0u);
  // Fewer blocks than tiles, each looping over its tiles (SPLICE_GEMV_EPILOGUE_BLOCKS_PER_SM
  // is not set in tests).
  EXPECT_EQ(l->blocks, kGemvEpilogueBlocksPerSm * 132);
  // A narrow output splits k, one block per tile.
  l = plan_gemv_epilogue(decode_args(64, 8192, 64, {0}), 132);
  ASSERT_TRUE(l.has_value());
  EXPECT_GT(l->splits, 1);
  EXPECT_EQ(l->blocks, l->tiles);
  EXPECT_EQ(l->k_per_split % 8, 0);
  EXPECT_GE(l->splits * l->k_per_split, 8192);
  EXPECT_GT(l->partial_bytes, 0u);
  // What the kernel cannot read: a range past the product, a k not of whole 16-byte loads,
  // a strided weight, more rows than a GEMV.
  EXPECT_FALSE(plan_gemv_epilogue(decode_args(128, 256, 64, {0, 65}), 132));
  EXPECT_FALSE(plan_gemv_epilogue(decode_args(128, 250, 64, {0}), 132));
  GemvEpilogueArgs strided = decode_args(128, 256, 64, {0});
  strided.gemv.w_ks = 2;
  EXPECT_FALSE(plan_gemv_epilogue(strided, 132));
  GemvEpilogueArgs tall = decode_args(128, 256, 64, {0});
  tall.gemv.m = 17;
  EXPECT_FALSE(plan_gemv_epilogue(tall, 132));
}

TEST(GemvEpilogueLaunch, LeadingDimsFoldIntoRowsWhenOneStrideDescribesThem) {
  DeviceTensor t;
  t.rank = 3;
  t.sizes = {2, 3, 8};
  t.strides = {24, 8, 1};
  auto r = fold_rows(t);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->row_stride, 8);
  EXPECT_EQ(r->col_stride, 1);
  t.sizes = {1, 3, 8};
  t.strides = {99, 8, 1};  // a size-1 dim's stride is never used
  ASSERT_TRUE(fold_rows(t).has_value());
  t.sizes = {2, 3, 8};
  t.strides = {0, 0, 1};  // broadcast rows
  r = fold_rows(t);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->row_stride, 0);
  t.strides = {32, 8, 1};  // a padded row: no single stride
  EXPECT_FALSE(fold_rows(t).has_value());
}

class GpuGemvEpilogue : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  std::mt19937 gen_{35};
};

TEST_F(GpuGemvEpilogue, ProgramsMatchTheCpuBackend) {
  const std::vector<GemvEpilogueProgram> programs = {
      {},
      {.dtype = DType::kBFloat16, .rows = 3, .k = 512, .width = 96},
      {.dtype = DType::kFloat32, .rows = 16, .k = 64, .width = 40},
      {.kind = Kind::kResidual, .k = 2048, .width = 64},  // split k
      {.kind = Kind::kResidual, .dtype = DType::kBFloat16, .rows = 5, .k = 1024, .width = 320},
      {.kind = Kind::kMm, .rows = 2, .k = 4096, .width = 200},
      {.kind = Kind::kNormBlock, .k = 512, .width = 96},  // a norm prologue, an add epilogue
      {.kind = Kind::kNormBlock, .dtype = DType::kBFloat16, .rows = 3, .k = 256, .width = 64},
      {.unaligned = true},  // run apart
      {.kind = Kind::kResidual, .unaligned = true},
  };
  for (const GemvEpilogueProgram& gp : programs) {
    const std::string text = gemv_epilogue_program(gp);
    SCOPED_TRACE(text);
    runtime::PrepareOptions on_gpu, on_cpu;
    on_gpu.device = "cuda";
    auto gpu = runtime::prepare(ir::parse_program(text).value(), on_gpu);
    auto cpu = runtime::prepare(ir::parse_program(text).value(), on_cpu);
    ASSERT_TRUE(gpu.ok()) << gpu.error().message();
    ASSERT_TRUE(cpu.ok()) << cpu.error().message();
    bool fused = false;
    for (const plan::Group& g : gpu->plan.groups)
      fused = fused || g.kind == plan::GroupKind::kGemvEpilogue;
    EXPECT_TRUE(fused);
    runtime::TensorMap inputs;
    const auto& graph_inputs = cpu->program.graph.inputs();
    for (const ir::Value* v : graph_inputs) {
      Shape sizes;
      for (const SymExpr& d : v->type().sizes) sizes.push_back(*d.constant());
      inputs[v->name()] = random_tensor(v->type().dtype, sizes, Layout::kContiguous, gen_, -1, 1);
    }
    auto gs = runtime::open_session_state(*gpu);
    auto cs = runtime::open_session_state(*cpu);
    ASSERT_TRUE(gs.ok() && cs.ok());
    auto g = runtime::execute(*gpu, inputs, *gs);
    auto c = runtime::execute(*cpu, inputs, *cs);
    ASSERT_TRUE(g.ok()) << g.error().message();
    ASSERT_TRUE(c.ok()) << c.error().message();
    ASSERT_EQ(g->user_outputs.size(), c->user_outputs.size());
    const backend::Backend* cuda = backend::find_backend("cuda");
    for (size_t k = 0; k < c->user_outputs.size(); ++k) {
      const Tensor& want = *c->user_outputs[k];
      Tensor got = Tensor::empty(want.dtype(), want.sizes()).value();
      ASSERT_TRUE(cuda->copy(got, *g->user_outputs[k], gs->backend_session.get()).ok());
      ASSERT_TRUE(cuda->synchronize(*gs->backend_session).ok());
      // The sums run in another order than the CPU's: a rounding of the product's dtype, and
      // what the epilogue makes of it.
      Tolerance tol = tolerance_for(want.dtype());
      tol.atol *= 4;
      tol.rtol *= 4;
      EXPECT_EQ(compare(got, want, tol), "") << "output " << k;
    }
  }
}

}  // namespace
}  // namespace splice::cuda
