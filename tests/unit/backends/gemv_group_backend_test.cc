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
#include "ir/parser.h"
#include "plan/build.h"
#include "plan/gemv_epilogue.h"
#include "runtime/executor.h"
#include "splice/splice.h"
#include "tensor/convert.h"
#include "tensor/safetensors.h"
#include "tests/unit/backends/recorded_calls.h"
#include "tests/unit/plan/gemv_epilogue_programs.h"

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
    set_gemv_epilogue(0);  // the CPU runs any number of operands
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
    const ir::OpId op = c.product_op;
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

ir::Program parse(const std::string& text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message() << "\n" << text;
  return std::move(*program);
}

// run_decompositions' form of a final norm and head over one position of a batch: the norm's
// input is h[:, -1], whose rows lie apart in h, and mm reads the norm's value as [2, 64] rows.
const char* const kStridedNormInput = R"(signature {
  input %h: user_input
  input %nw: user_input
  input %w: user_input
  input %r: user_input
  output 0: user_output
}
graph(%h: f32[2, 3, 64], %nw: f32[64], %w: f32[32, 64], %r: f32[2, 32]) {
  %hs: f32[2, 64] = aten.select.int(%h, 1, -1)
  %sq: f32[2, 64] = aten.mul.Tensor(%hs, %hs)
  %m: f32[2, 1] = aten.mean.dim(%sq, [-1], True, dtype=None)
  %v: f32[2, 1] = aten.add.Tensor(%m, 1e-05, alpha=1)
  %rs: f32[2, 1] = aten.rsqrt.default(%v)
  %yn: f32[2, 64] = aten.mul.Tensor(%hs, %rs)
  %nrm: f32[2, 64] = aten.mul.Tensor(%nw, %yn)
  %wt: f32[64, 32] = aten.t.default(%w)
  %p: f32[2, 32] = aten.mm.default(%nrm, %wt)
  %o: f32[2, 32] = aten.add.Tensor(%r, %p, alpha=1)
  return (%o)
}
)";

// A norm prologue whose input is a strided view: the GEMV group reads it as rows (a copy), and
// the result is the CPU backend's, op by op (bug: the executor refused it as an internal error).
TEST(GemvGroupBackend, AStridedNormInputOfAnMmPrologueIsReadAsRows) {
  ir::Program p = parse(kStridedNormInput);
  const plan::Plan plan = plan::build_plan(p, plan::PlanMode::kPlanned, gemv_backend().target());
  int prologues = 0;
  for (const plan::Group& g : plan.groups)
    if (g.kind == plan::GroupKind::kGemvEpilogue)
      prologues += plan::gemv_epilogue_of(p.graph, g).value().prologue.nodes.empty() ? 0 : 1;
  ASSERT_EQ(prologues, 1);
  auto grouped = runtime::prepare(parse(kStridedNormInput), {.device = kGemvBackend});
  auto naive = runtime::prepare(parse(kStridedNormInput), {.mode = plan::PlanMode::kNaive});
  ASSERT_TRUE(grouped.ok()) << grouped.error().message();
  ASSERT_TRUE(naive.ok()) << naive.error().message();
  runtime::TensorMap inputs;
  int seed = 1;
  for (const auto& [name, sizes] : std::vector<std::pair<std::string, Shape>>{
           {"h", {2, 3, 64}}, {"nw", {64}}, {"w", {32, 64}}, {"r", {2, 32}}}) {
    Tensor t = Tensor::empty(DType::kFloat32, sizes).value();
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<float>()[i] = static_cast<float>((i * 37 + seed * 11) % 29) / 29.0f - 0.5f;
    inputs.emplace(name, t);
    ++seed;
  }
  auto s0 = runtime::open_session_state(*grouped).value();
  auto s1 = runtime::open_session_state(*naive).value();
  const int before = gemv_backend().prologues_run;
  auto a = runtime::execute(*grouped, inputs, s0);
  auto b = runtime::execute(*naive, inputs, s1);
  ASSERT_TRUE(a.ok()) << a.error().message();
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(gemv_backend().prologues_run, before + 1);
  const Tensor& x = *a->user_outputs.at(0);
  const Tensor& y = *b->user_outputs.at(0);
  ASSERT_EQ(x.sizes(), y.sizes());
  // The norm's sum runs in another order than mean's: equal to float32's rounding.
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_NEAR(x.data<float>()[i], y.data<float>()[i], 1e-5f) << "element " << i;
}

// A plan (an engine file's) whose GEMV group takes a norm the product does not read: refused at
// load, naming the group.
TEST(GemvGroupBackend, APrologueThatIsNotTheProductsInputIsRefusedAtLoad) {
  testing::GemvEpilogueProgram kind;
  kind.kind = testing::GemvEpilogueProgram::Kind::kNormBlock;
  kind.dtype = DType::kFloat32;
  const std::string text = testing::gemv_epilogue_program(kind);
  const plan::Plan plan =
      plan::build_plan(parse(text), plan::PlanMode::kPlanned, gemv_backend().target());
  // The same nodes, the second product reading x instead of the norm.
  std::string tampered = text;
  const std::string read = "aten.linear.default(%nrm,";
  ASSERT_NE(tampered.find(read), std::string::npos);
  tampered.replace(tampered.find(read), read.size(), "aten.linear.default(%x,");
  auto m = runtime::prepare(parse(tampered), {.device = kGemvBackend}, plan);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(m.error().message(),
            "plan: group 0 (gu .. y) has an RMSNorm prologue that is not its product's input");
}

}  // namespace
}  // namespace splice
