// The CUDA-export attention forms (_scaled_dot_product_{flash,efficient,cudnn}_attention) run
// by the CUDA backend's kernels, through the backend interface as the runtime calls them,
// against the CPU backend's kernels: every output, the extra ones included (logsumexp in each
// form's layout with the efficient form's +inf padding, cum_seq, max_q / max_k, rng state,
// debug masks), with the CPU's dtype and shape, floats within attention's tolerances
// (attention.h), integers exact. A float32 case (CUDA-core kernel) with an attention bias and a
// float16 one (tensor-core kernel) that is causal with a scale and grouped KV heads. Needs a
// GPU (skips without one).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "cuda_test_util.h"
#include "tensor/convert.h"

namespace splice::cuda {
namespace {

using backend::KernelArg;
using backend::KernelCall;
using testing::fill_random;

struct FormCase {
  std::string name;
  DType dtype;
  Shape q, kv;  // q (B, Hq, L, E); k and v (B, Hkv, S, E)
  bool bias;    // a float attention bias (L, S) for the forms that take one
  bool causal;
  std::optional<double> scale;
};

const FormCase kCases[] = {
    {"f32_bias", DType::kFloat32, {2, 2, 5, 16}, {2, 2, 7, 16}, true, false, std::nullopt},
    {"f16_causal_gqa", DType::kFloat16, {1, 4, 33, 32}, {1, 2, 40, 32}, false, true, 0.3},
};

class GpuAttentionForms : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
    cuda_ = backend::find_backend("cuda");
    cpu_ = backend::find_backend("cpu");
    ASSERT_TRUE(cuda_ != nullptr && cpu_ != nullptr);
    auto model = cuda_->open_model(backend::ModelOptions{});
    ASSERT_TRUE(model.ok()) << model.error().message();
    model_ = *model;
    auto session = cuda_->open_session(*model_);
    ASSERT_TRUE(session.ok()) << session.error().message();
    session_ = std::move(*session);
  }

  Tensor random(DType dtype, const Shape& sizes) {
    Tensor t = Tensor::empty(dtype, sizes).value();
    fill_random(t, 3, rng_);  // values in (-1, 1)
    return t;
  }

  Tensor to_device(const Tensor& host) {
    auto storage = cuda_->allocate(host.nbytes());
    EXPECT_TRUE(storage.ok()) << storage.error().message();
    Tensor d(host.dtype(), host.sizes(), contiguous_strides(host.sizes()), 0, *storage);
    auto copied = cuda_->copy(d, host, session_.get());
    EXPECT_TRUE(copied.ok()) << copied.error().message();
    return d;
  }

  Tensor to_host(const Tensor& d) {
    Tensor h = Tensor::empty(d.dtype(), d.sizes()).value();
    auto copied = cuda_->copy(h, d, session_.get());
    EXPECT_TRUE(copied.ok()) << copied.error().message();
    auto synced = cuda_->synchronize(*session_);
    EXPECT_TRUE(synced.ok()) << synced.error().message();
    return h;
  }

  // Runs `op` on both backends with `host_args` (tensors given on the host; the CUDA kernel
  // gets device copies) and compares every output.
  void compare(ir::OpId op, const std::vector<KernelArg>& host_args, DType dtype) {
    SCOPED_TRACE(std::string(ir::op_target(op)));
    std::vector<KernelArg> device_args = host_args;
    for (KernelArg& a : device_args)
      if (auto* t = std::get_if<Tensor>(&a)) *t = to_device(*t);
    auto want = cpu_->kernel(op)->fn(KernelCall{}, host_args);
    ASSERT_TRUE(want.ok()) << want.error().message();
    auto got = cuda_->kernel(op)->fn(KernelCall{session_.get()}, device_args);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(got->size(), want->size());
    // Output 0 is in q's dtype; logsumexp is float32, computed from 16-bit inputs for f16.
    const bool half = dtype != DType::kFloat32;
    for (size_t i = 0; i < want->size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      const Tensor& w = (*want)[i];
      const Tensor& g = (*got)[i];
      ASSERT_EQ(g.dtype(), w.dtype());
      ASSERT_EQ(g.sizes(), w.sizes());
      EXPECT_FALSE(g.is_host()) << "outputs stay on the device";
      const double tol = !is_floating(w.dtype()) ? 0.0
                         : i == 0                ? (half ? 2e-3 : 2e-5)
                                                 : (half ? 1e-4 : 2e-5);
      expect_close(to_host(g), w, tol);
    }
  }

  static void expect_close(const Tensor& got, const Tensor& want, double tol) {
    const Tensor g = convert(got.contiguous_copy().value(), DType::kFloat64).value();
    const Tensor w = convert(want.contiguous_copy().value(), DType::kFloat64).value();
    int64_t bad = 0;
    std::string first;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const double a = g.data<double>()[i], b = w.data<double>()[i];
      const bool ok = std::isinf(b) ? a == b : std::fabs(a - b) <= tol + tol * std::fabs(b);
      if (!ok && bad++ == 0) first = fmt::format("element {}: {} vs {}", i, a, b);
    }
    EXPECT_EQ(bad, 0) << bad << " of " << w.numel() << " elements differ; first " << first;
  }

  const backend::Backend* cuda_ = nullptr;
  const backend::Backend* cpu_ = nullptr;
  std::shared_ptr<backend::ModelContext> model_;
  std::unique_ptr<backend::SessionContext> session_;
  std::mt19937 rng_{1234};
};

TEST_F(GpuAttentionForms, EveryOutputMatchesTheCpuBackend) {
  for (const FormCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const Tensor q = random(c.dtype, c.q), k = random(c.dtype, c.kv), v = random(c.dtype, c.kv);
    KernelArg bias;  // None
    if (c.bias) bias = random(c.dtype, {c.q[2], c.kv[2]});
    KernelArg scale;  // None
    if (c.scale) scale = *c.scale;
    // (query, key, value, dropout_p, is_causal, return_debug_mask, *, scale)
    compare(ir::OpId::_scaled_dot_product_flash_attention,
            {q, k, v, 0.0, c.causal, /*return_debug_mask=*/c.causal, scale}, c.dtype);
    // (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, *, scale), with
    // and without logsumexp.
    for (bool lse : {true, false}) {
      compare(ir::OpId::_scaled_dot_product_efficient_attention,
              {q, k, v, bias, lse, 0.0, c.causal, scale}, c.dtype);
    }
    // (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal,
    //  return_debug_mask, *, scale)
    compare(ir::OpId::_scaled_dot_product_cudnn_attention,
            {q, k, v, bias, true, 0.0, c.causal, false, scale}, c.dtype);
  }
}

}  // namespace
}  // namespace splice::cuda
