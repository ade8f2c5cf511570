// The runtime half of GEMV groups (plan/gemv_epilogue.h) on the host, where no GPU is needed: a
// test backend with the CPU kernels that declares RMSNorm groups and GEMV groups, and runs them
// the plain way — the norm as a host loop, the product through the CPU's own kernel, the
// epilogue through the CPU's pointwise groups over the product's columns. Recorded decoder
// cases then run with every GEMV group the CUDA plan has (norm prologues, SiLU·mul and
// residual epilogues, products stored as they are) and must match PyTorch: what the executor
// hands a backend for such a group (the product's operands, the norm's input and weight, the
// epilogue's inputs and outputs, the column of each range) is checked without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/registry.h"
#include "compiler/driver.h"
#include "plan/build.h"
#include "plan/gemv_epilogue.h"
#include "splice/splice.h"
#include "tensor/convert.h"
#include "tensor/safetensors.h"
#include "tests/unit/backends/recorded_calls.h"

namespace splice {
namespace {

// Sorts after cpu_nostride: test_backend_test.cc reads the list of names.
constexpr const char* kGemvBackend = "cpu_with_gemv_groups";
const std::string kCases = std::string(SPLICE_SOURCE_DIR) + "/tests/cases/";

// Rounds through a dtype as a stored value would be.
float round_to(DType t, float v) {
  auto r = convert(Tensor::empty(DType::kFloat32, {}).value(), DType::kFloat32).value();
  *r.data<float>() = v;
  return *convert(convert(r, t).value(), DType::kFloat32).value().data<float>();
}

class GemvGroupBackend final : public backend::Backend {
 public:
  GemvGroupBackend() {
    set_kernels(kGemvBackend, cpu::kernels());
    set_pointwise_classes(cpu().target().pointwise_classes);
    set_fused_rms_norm();
    set_gemv_epilogue();
    set_matmul_kernels(16, "cpu");
  }
  std::string_view name() const override { return kGemvBackend; }
  Device device() const override { return cpu().device(); }
  Result<std::shared_ptr<Storage>> allocate(size_t n) const override { return cpu().allocate(n); }
  Result<void> copy(const Tensor& dst, const Tensor& src,
                    backend::SessionContext* s) const override {
    return cpu().copy(dst, src, s);
  }
  Result<std::shared_ptr<backend::ModelContext>> open_model(
      const backend::ModelOptions& o) const override {
    return cpu().open_model(o);
  }
  Result<std::unique_ptr<backend::SessionContext>> open_session(
      backend::ModelContext& m) const override {
    return cpu().open_session(m);
  }
  Result<void> run_pointwise(backend::SessionContext* s, const ir::PointwiseProgram& p,
                             std::span<const Tensor> in, std::span<const Tensor> out,
                             const Shape& sizes) const override {
    return cpu().run_pointwise(s, p, in, out, sizes);
  }

  // RmsNormCall's semantics, row by row over the last dim.
  Result<void> run_rms_norm(backend::SessionContext*,
                            const backend::RmsNormCall& c) const override {
    SPLICE_ASSIGN_OR_RETURN(Tensor x, convert(c.x, DType::kFloat32));
    Tensor r, w;
    if (c.residual) {
      SPLICE_ASSIGN_OR_RETURN(r, convert(*c.residual, DType::kFloat32));
    }
    if (c.weight) {
      SPLICE_ASSIGN_OR_RETURN(w, convert(*c.weight, DType::kFloat32));
    }
    const int64_t h = x.sizes().back(), rows = x.numel() / std::max<int64_t>(h, 1);
    const DType t = c.x.dtype();
    SPLICE_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(DType::kFloat32, x.sizes()));
    Tensor sum = out;
    if (c.sum) {
      SPLICE_ASSIGN_OR_RETURN(sum, Tensor::empty(DType::kFloat32, x.sizes()));
    }
    const float* xv = x.data<float>();
    // The weight broadcasts along the rows: its last h values.
    const float* wv = c.weight ? w.data<float>() + (w.numel() - h) : nullptr;
    for (int64_t i = 0; i < rows; ++i) {
      std::vector<float> a(h);
      float s = 0;
      for (int64_t j = 0; j < h; ++j) {
        a[j] = xv[i * h + j];
        if (c.residual) a[j] = round_to(t, a[j] + r.data<float>()[i * h + j]);
        if (c.sum) sum.data<float>()[i * h + j] = a[j];
        const float xf = round_to(c.stat, a[j]);
        s += round_to(c.stat, xf * xf);
      }
      const float m = round_to(c.stat, s / static_cast<float>(h));
      const float rs =
          round_to(c.stat, 1.0f / std::sqrt(round_to(c.stat, m + static_cast<float>(c.eps))));
      for (int64_t j = 0; j < h; ++j) {
        float y = round_to(c.cast, round_to(c.stat, round_to(c.stat, a[j]) * rs));
        if (wv) y = y * wv[j];
        out.data<float>()[i * h + j] = y;
      }
    }
    copy_cast_into(c.out, out);
    if (c.sum) copy_cast_into(*c.sum, sum);
    return ok_result();
  }

  // The norm, the product (the CPU's kernel), then the epilogue over the product's columns.
  Result<void> run_gemv_epilogue(backend::SessionContext* s,
                                 const backend::GemvEpilogueCall& c) const override {
    ++groups_run;
    Tensor a = c.a;
    if (c.norm) {
      SPLICE_ASSIGN_OR_RETURN(Tensor normed, Tensor::empty(a.dtype(), a.sizes()));
      backend::RmsNormCall n;
      n.x = a;
      n.weight = c.norm->weight;
      n.out = normed;
      n.stat = c.norm->stat;
      n.cast = c.norm->cast;
      n.eps = c.norm->eps;
      SPLICE_TRY(run_rms_norm(s, n));
      a = normed;
      ++prologues_run;
    }
    const ir::OpId op = c.product_op == "linear" ? ir::OpId::linear
                        : c.product_op == "mm"   ? ir::OpId::mm
                                                 : ir::OpId::addmm;
    std::vector<backend::KernelArg> args;
    if (op == ir::OpId::linear) {
      args = {a, c.b, c.c ? backend::KernelArg(*c.c) : backend::KernelArg(std::monostate{})};
    } else if (op == ir::OpId::mm) {
      args = {a, c.b};
    } else {
      args = {*c.c, a, c.b, int64_t{1}, int64_t{1}};
    }
    backend::KernelCall call;
    call.session = s;
    SPLICE_ASSIGN_OR_RETURN(std::vector<Tensor> product, kernel(op)->fn(call, args));
    const Tensor& p = product.at(0);  // contiguous
    // The epilogue's space regroups the product's rows: row-major rows of the product's width.
    const int64_t n = p.sizes().back();
    Shape strides(c.sizes.size(), 1);
    for (size_t d = c.sizes.size() - 1; d-- > 0;)
      strides[d] = d + 2 == c.sizes.size() ? n : strides[d + 1] * c.sizes[d + 1];
    std::vector<Tensor> inputs(c.inputs.begin(), c.inputs.end());
    for (size_t k = 0; k < inputs.size(); ++k)
      if (c.columns[k] >= 0) inputs[k] = p.view_as(c.sizes, strides, p.offset() + c.columns[k]);
    return cpu().run_pointwise(s, *c.program, inputs, c.outputs, c.sizes);
  }

  mutable int groups_run = 0;
  mutable int prologues_run = 0;

 private:
  static const backend::Backend& cpu() { return *backend::find_backend("cpu"); }
};

// Registered on first use, not by a static initializer: it reads the CPU backend's target,
// which registers itself from one.
GemvGroupBackend& gemv_backend() {
  static GemvGroupBackend* const b = [] {
    auto owned = std::make_unique<GemvGroupBackend>();
    GemvGroupBackend* raw = owned.get();
    backend::register_backend(std::move(owned));
    return raw;
  }();
  return *b;
}

// Decode-shaped recorded cases (one or a few rows: every product a GEMV) through the public API:
// every output and buffer after every call matches PyTorch, with GEMV groups run.
TEST(GemvGroupBackend, DecoderCasesMatchPyTorchWithEveryGemvGroup) {
  for (const char* name :
       {"hf_llama_static_cache.train", "hf_llama_static_cache.keep",
        "hf_llama_static_cache.default", "llama_block_2layer_f16.default",
        "hf_qwen2_static_cache.default", "hf_gpt2.default", "hf_qwen2_static_cache.train",
        "llama_block_2layer.train", "llama_block_2layer_f16.train", "llama_block_2layer_bf16.train",
        "hf_llama.train", "hf_mistral.train", "hf_gpt2.train"}) {
    SCOPED_TRACE(name);
    const std::string dir = kCases + name + "/";
    auto program = compiler::load_program(dir + "model.pt2");
    ASSERT_TRUE(program.ok()) << program.error().message();
    const plan::Plan plan =
        plan::build_plan(*program, plan::PlanMode::kPlanned, gemv_backend().target());
    int gemv_groups = 0;
    for (const plan::Group& g : plan.groups)
      gemv_groups += g.kind == plan::GroupKind::kGemvEpilogue ? 1 : 0;
    const int before = gemv_backend().groups_run;
    testing::expect_recorded_calls_match(dir, kGemvBackend);
    // The groups the plan has ran (each call runs each once).
    EXPECT_GT(gemv_groups, 0);
    EXPECT_GE(gemv_backend().groups_run - before, gemv_groups);
  }
  EXPECT_GT(gemv_backend().prologues_run, 0);
}

}  // namespace
}  // namespace splice
