// An RMSNorm chain end to end on the GPU (suite GpuNormGroup): a program planned for CUDA with
// an RMSNorm group (plan/norm_fusion.h), run through the runtime, against the same program on
// the CPU backend, which runs it as two pointwise groups and a mean. The residual sum the
// group stores is exact; the norm within two roundings of its dtype.
#include <gtest/gtest.h>

#include <random>

#include "backends/backend.h"
#include "ir/parser.h"
#include "kernel_check.h"
#include "runtime/executor.h"
#include "tests/unit/plan/norm_programs.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

class GpuNormGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  }
  std::mt19937 gen_{36};
};

TEST_F(GpuNormGroup, AProgramWithTheChainMatchesTheCpuBackend) {
  for (const splice::testing::NormProgram& np :
       {splice::testing::NormProgram{},
        splice::testing::NormProgram{.dtype = DType::kBFloat16, .hidden = 2048},
        splice::testing::NormProgram{.dtype = DType::kFloat32, .stat = DType::kFloat32},
        splice::testing::NormProgram{.stat = DType::kFloat16, .weight_first = true}}) {
    const std::string text = splice::testing::norm_program(np);
    SCOPED_TRACE(text);
    runtime::PrepareOptions on_gpu, on_cpu;
    on_gpu.device = "cuda";
    auto gpu = runtime::prepare(ir::parse_program(text).value(), on_gpu);
    auto cpu = runtime::prepare(ir::parse_program(text).value(), on_cpu);
    ASSERT_TRUE(gpu.ok()) << gpu.error().message();
    ASSERT_TRUE(cpu.ok()) << cpu.error().message();
    bool fused = false;
    for (const plan::Group& g : gpu->plan.groups)
      fused = fused || g.kind == plan::GroupKind::kRmsNorm;
    EXPECT_TRUE(fused);
    const Shape sizes{np.rows, np.hidden};
    runtime::TensorMap inputs = {
        {"x", random_tensor(np.dtype, sizes, Layout::kContiguous, gen_, -2, 2)},
        {"r", random_tensor(np.dtype, sizes, Layout::kContiguous, gen_, -2, 2)},
        {"w", random_tensor(np.dtype, {np.hidden}, Layout::kContiguous, gen_, 0.5, 1.5)}};
    auto gs = runtime::open_session_state(*gpu);
    auto cs = runtime::open_session_state(*cpu);
    ASSERT_TRUE(gs.ok() && cs.ok());
    auto g = runtime::execute(*gpu, inputs, *gs);
    auto c = runtime::execute(*cpu, inputs, *cs);
    ASSERT_TRUE(g.ok()) << g.error().message();
    ASSERT_TRUE(c.ok()) << c.error().message();
    ASSERT_EQ(g->user_outputs.size(), 2u);
    const backend::Backend* cuda = backend::find_backend("cuda");
    for (size_t k = 0; k < 2; ++k) {
      const Tensor& want = *c->user_outputs[k];
      Tensor got = Tensor::empty(want.dtype(), want.sizes()).value();
      ASSERT_TRUE(cuda->copy(got, *g->user_outputs[k], gs->backend_session.get()).ok());
      ASSERT_TRUE(cuda->synchronize(*gs->backend_session).ok());
      Tolerance tol = tolerance_for(want.dtype());
      tol.atol *= 2;
      tol.rtol *= 2;
      // Output 1 is -(x + r): the stored residual sum, exact.
      EXPECT_EQ(compare(got, want, k == 0 ? tol : Tolerance{0, 0}), "") << "output " << k;
    }
  }
}

}  // namespace
}  // namespace splice::cuda
