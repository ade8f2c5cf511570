// The decompositions of passes/decompose_composites, run: programs with one composite op go
// through the loader's steps (verify, shape checks, every pass) and the CPU backend, which has
// no kernel for the composite any more, and give PyTorch's values (worked out with PyTorch 2.11
// eager on the same inputs). The recorded cases cover these ops too; this adds what they do
// not: every pad mode, symbolic sizes, NaN with beta = 0 and ±inf norms, integer baddbmm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/registry.h"
#include "ir/ops.h"
#include "ir/parser.h"
#include "ir/type_check.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "runtime/executor.h"
#include "tensor/convert.h"

namespace splice::runtime {
namespace {

Tensor make(DType dtype, const Shape& sizes, const std::vector<double>& values) {
  Tensor f = Tensor::empty(DType::kFloat64, sizes).value();
  for (size_t i = 0; i < values.size(); ++i) f.data<double>()[i] = values[i];
  return convert(f, dtype).value();
}

Tensor iota(DType dtype, const Shape& sizes) {
  std::vector<double> v(shape_numel(sizes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make(dtype, sizes, v);
}

std::vector<double> values(const Tensor& t) {
  Tensor f = convert(t, DType::kFloat64).value();
  return std::vector<double>(f.data<double>(), f.data<double>() + f.numel());
}

// Loads `text` as the loader does (a plain signature added when it has none) and prepares it.
Result<detail::ModelImpl> load(std::string_view text) {
  SPLICE_ASSIGN_OR_RETURN(ir::Program p, ir::parse_program(text));
  if (p.signature.inputs.empty()) {
    for (ir::Value* v : p.graph.inputs()) {
      ir::InputSpec spec;
      spec.value = v;
      p.signature.inputs.push_back(spec);
    }
    p.signature.outputs.resize(p.graph.outputs().size());
  }
  SPLICE_TRY(ir::verify(p));
  SPLICE_ASSIGN_OR_RETURN(p.shape_checks, ir::check_types(p));
  SPLICE_TRY(passes::run_pipeline(p));
  return prepare(std::move(p), PrepareOptions{});
}

// The user outputs of one call.
std::vector<Tensor> run(std::string_view text, const TensorMap& inputs) {
  auto model = load(text);
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model.ok()) return {};
  // No composite reaches the backend.
  for (const auto& node : model->program.graph.nodes())
    for (std::string_view t : passes::decomposed_targets())
      EXPECT_NE(node->target(), t) << "left undecomposed";
  auto state = open_session_state(*model);
  EXPECT_TRUE(state.ok()) << state.error().message();
  if (!state.ok()) return {};
  auto r = execute(*model, inputs, *state);
  EXPECT_TRUE(r.ok()) << r.error().message();
  std::vector<Tensor> out;
  if (r.ok())
    for (auto& t : r->user_outputs) out.push_back(*t);
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// The composites reach no backend: the CPU backend has no kernel for any of them, and every
// other tensor op of the op table has one.
TEST(Decompositions, CompositesHaveNoKernelAndEveryOtherTensorOpHasOne) {
  const auto decomposed = passes::decomposed_targets();
  for (const ir::OpSchema* op : ir::all_ops()) {
    const bool composite =
        std::find(decomposed.begin(), decomposed.end(), op->target) != decomposed.end();
    const bool host =
        op->is_symbolic() || op->returns.empty() || op->target.rfind("aten.", 0) != 0 ||
        op->target == "aten._local_scalar_dense.default" || op->target == "aten.item.default";
    if (composite) {
      EXPECT_EQ(cpu::find_kernel(op->target), nullptr) << op->target;
    } else if (!host) {
      EXPECT_NE(cpu::find_kernel(op->target), nullptr) << op->target;
    }
  }
}

TEST(Decompositions, PadInEveryMode) {
  auto out = run(R"(graph(%x: i64[1, 2, 3], %y: f32[2, 2]) {
  %reflect: i64[1, 2, 6] = aten.pad.default(%x, [2, 1], "reflect", None)
  %replicate: i64[1, 2, 6] = aten.pad.default(%x, [1, 2], "replicate", None)
  %circular: i64[1, 2, 6] = aten.pad.default(%x, [2, 1], "circular", None)
  %constant: f32[3, 2] = aten.pad.default(%y, [1, -1, 0, 1], "constant", 9.0)
  return (%reflect, %replicate, %circular, %constant)
}
)",
                 {{"x", iota(DType::kInt64, {1, 2, 3})}, {"y", iota(DType::kFloat32, {2, 2})}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(values(out[0]), (std::vector<double>{2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}));
  EXPECT_EQ(values(out[3]), (std::vector<double>{9, 0, 9, 2, 9, 9}));
}

// Sizes a decomposition needs become sym_size/_operator nodes when they are symbolic.
TEST(Decompositions, SymbolicSizes) {
  constexpr std::string_view kProgram = R"(symbols {
  s0: [2, 64]
}
graph(%x: f32[1, s0, 3], %y: f32[s0, 2, 2]) {
  %pad: f32[1, s0 + 2, 3] = aten.pad.default(%x, [0, 0, 1, 1], "reflect", None)
  %flatten: f32[4*s0] = aten.flatten.using_ints(%y, 0, -1)
  %narrow: f32[s0, 2, 1] = aten.narrow.default(%y, -1, -1, 1)
  %chunk: f32[s0, 1, 2], %chunk_1: f32[s0, 1, 2] = aten.chunk.default(%y, 2, 1)
  %einsum: f32[s0, 2] = aten.einsum.default("bij->bj", [%y])
  return (%pad, %flatten, %narrow, %chunk_1, %einsum)
}
)";
  for (int64_t s0 : {2, 3}) {
    SCOPED_TRACE(s0);
    auto out = run(kProgram, {{"x", iota(DType::kFloat32, {1, s0, 3})},
                              {"y", iota(DType::kFloat32, {s0, 2, 2})}});
    ASSERT_EQ(out.size(), 5u);
    // F.pad(x, (0, 0, 1, 1), mode="reflect") in PyTorch 2.11.
    const std::vector<double> want =
        s0 == 2 ? std::vector<double>{3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2}
                : std::vector<double>{3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 3, 4, 5};
    EXPECT_EQ(out[0].sizes(), (Shape{1, s0 + 2, 3}));
    EXPECT_EQ(values(out[0]), want);
    EXPECT_EQ(out[1].sizes(), (Shape{4 * s0}));
    EXPECT_EQ(values(out[1]), values(iota(DType::kFloat32, {4 * s0})));
    EXPECT_EQ(out[2].sizes(), (Shape{s0, 2, 1}));
    EXPECT_EQ(values(out[2])[0], 1);
    EXPECT_EQ(out[3].sizes(), (Shape{s0, 1, 2}));
    EXPECT_EQ(values(out[3])[0], 2);
    // torch.einsum("bij->bj", y).
    const std::vector<double> sums =
        s0 == 2 ? std::vector<double>{2, 4, 10, 12} : std::vector<double>{2, 4, 10, 12, 18, 20};
    EXPECT_EQ(values(out[4]), sums);
  }
}

TEST(Decompositions, ShapeOps) {
  auto out = run(R"(graph(%x: i32[2, 5], %t: i32[2, 3], %row: f32[1, 3], %z: f32[2, 3]) {
  %narrow: i32[2, 2] = aten.narrow.default(%x, 1, -2, 2)
  %chunk: i32[2, 2], %chunk_1: i32[2, 2], %chunk_2: i32[2, 1] = aten.chunk.default(%x, 3, 1)
  %transpose: i32[3, 2] = aten.transpose.int(%t, 0, 1)
  %flatten: i32[6] = aten.flatten.using_ints(%transpose, 0, 1)
  %expand_as: f32[2, 3] = aten.expand_as.default(%row, %z)
  %swapdims: f32[3, 2] = aten.swapdims.default(%z, 0, 1)
  %contiguous: f32[3, 2] = aten.contiguous.default(%swapdims, memory_format="contiguous_format")
  %dropout: f32[2, 3] = aten.dropout.default(%z, 0.5, False)
  %unflatten: f32[2, 3, 1] = aten.unflatten.int(%z, -1, [-1, 1])
  %movedim: f32[3, 2] = aten.movedim.int(%z, 0, -1)
  %type_as: f32[2, 5] = aten.type_as.default(%x, %z)
  return (%narrow, %chunk_2, %flatten, %expand_as, %contiguous, %dropout, %unflatten, %movedim, %type_as)
}
)",
                 {{"x", iota(DType::kInt32, {2, 5})},
                  {"t", iota(DType::kInt32, {2, 3})},
                  {"row", iota(DType::kFloat32, {1, 3})},
                  {"z", iota(DType::kFloat32, {2, 3})}});
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(values(out[0]), (std::vector<double>{3, 4, 8, 9}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{4, 9}));  // 5 / 3 → pieces of 2, 2, 1
  EXPECT_EQ(values(out[2]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(out[3]), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(values(out[4]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values(out[5]), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(out[6].sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(values(out[7]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(out[8].dtype(), DType::kFloat32);
}

// A start of unknown sign (.item()) counts from the end when negative.
TEST(Decompositions, NarrowFromAnItem) {
  constexpr std::string_view kProgram = R"(symbols {
  u0: [-4, 3]
}
graph(%x: f32[4, 8], %p: i64[]) {
  %item: SymInt(u0) = aten._local_scalar_dense.default(%p)
  %narrow: f32[1, 8] = aten.narrow.default(%x, 0, %item, 1)
  return (%narrow)
}
)";
  for (int64_t start : {-1, 2}) {
    Tensor p = Tensor::empty(DType::kInt64, {}).value();
    *p.data<int64_t>() = start;
    auto out = run(kProgram, {{"x", iota(DType::kFloat32, {4, 8})}, {"p", p}});
    ASSERT_EQ(out.size(), 1u);
    const double row = start < 0 ? 3 : 2;  // torch.narrow(x, 0, start, 1)
    EXPECT_EQ(values(out[0])[0], row * 8) << start;
  }
}

TEST(Decompositions, DropoutInTrainingIsRefusedAtLoad) {
  auto model = load(R"(graph(%z: f32[2, 3]) {
  %dropout: f32[2, 3] = aten.dropout.default(%z, 0.5, True)
  return (%dropout)
}
)");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().kind(), ErrorKind::kUnsupportedOp);
  EXPECT_NE(model.error().message().find(
                "node 'dropout' (aten.dropout.default): dropout in training mode is not "
                "supported (p=0.5); export the model after model.eval()"),
            std::string::npos)
      << model.error().message();
}

// Batch norm that would update running statistics (a model exported in training mode) is
// refused at load, naming the node, in the training IR's spelling and in
// run_decompositions()'s.
TEST(Decompositions, BatchNormInTrainingIsRefusedAtLoad) {
  const char* kPrograms[] = {
      R"(graph(%x: f32[2, 3, 4], %m: f32[3], %v: f32[3]) {
  %batch_norm: f32[2, 3, 4] = aten.batch_norm.default(%x, None, None, %m, %v, True, 0.1, 1e-05, False)
  return (%batch_norm)
}
)",
      R"(graph(%x: f32[2, 3, 4], %m: f32[3], %v: f32[3]) {
  %batch_norm: f32[2, 3, 4], %b1: f32[3], %b2: f32[3], %b3: f32[3], %b4: f32[3] = aten._native_batch_norm_legit_functional.default(%x, None, None, %m, %v, True, 0.1, 1e-05)
  return (%batch_norm, %b3, %b4)
}
)"};
  const char* kTargets[] = {"aten.batch_norm.default",
                            "aten._native_batch_norm_legit_functional.default"};
  for (int i = 0; i < 2; ++i) {
    auto model = load(kPrograms[i]);
    ASSERT_FALSE(model.ok()) << i;
    EXPECT_EQ(model.error().kind(), ErrorKind::kUnsupportedOp);
    EXPECT_NE(model.error().message().find(
                  std::string("node 'batch_norm' (") + kTargets[i] +
                  "): batch norm in training mode updates running_mean and running_var, which "
                  "splice does not support; export the model after model.eval()"),
              std::string::npos)
        << model.error().message();
  }
}

TEST(Decompositions, Einsum) {
  auto out = run(
      R"(graph(%a: f32[2, 2], %b: f32[2, 2], %q: f32[1, 2, 3, 4], %k: f32[1, 2, 5, 4], %one: f32[1]) {
  %mm: f32[2, 2] = aten.einsum.default("ij,jk->ik", [%a, %b])
  %implicit: f32[2, 2] = aten.einsum.default("ij,jk", [%a, %b])
  %outer: f32[2, 2, 2] = aten.einsum.default("bi,bj->bij", [%a, %b])
  %trace: f32[] = aten.einsum.default("ii", [%a])
  %diagonal: f32[2] = aten.einsum.default("ii->i", [%a])
  %transposed: f32[2, 2] = aten.einsum.default("ij->ji", [%a])
  %total: f32[] = aten.einsum.default("i j , j k -> ", [%a, %b])
  %scores: f32[1, 2, 3, 5] = aten.einsum.default("bhqd,bhkd->bhqk", [%q, %k])
  %broadcast: f32[2] = aten.einsum.default("ij,j->i", [%a, %one])
  return (%mm, %implicit, %outer, %trace, %diagonal, %transposed, %total, %scores, %broadcast)
}
)",
      {{"a", make(DType::kFloat32, {2, 2}, {1, 2, 3, 4})},
       {"b", make(DType::kFloat32, {2, 2}, {5, 6, 7, 8})},
       {"q", iota(DType::kFloat32, {1, 2, 3, 4})},
       {"k", iota(DType::kFloat32, {1, 2, 5, 4})},
       {"one", make(DType::kFloat32, {1}, {2})}});
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(values(out[0]), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{5, 6, 10, 12, 21, 24, 28, 32}));
  EXPECT_EQ(values(out[3]), (std::vector<double>{5}));
  EXPECT_EQ(values(out[4]), (std::vector<double>{1, 4}));
  EXPECT_EQ(values(out[5]), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(values(out[6]), (std::vector<double>{134}));
  std::vector<double> want;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int d = 0; d < 4; ++d) acc += (h * 12 + i * 4 + d) * (h * 20 + j * 4 + d);
        want.push_back(acc);
      }
  EXPECT_EQ(values(out[7]), want);
  EXPECT_EQ(values(out[8]), (std::vector<double>{6, 14}));
}

TEST(Decompositions, BaddbmmAndOuter) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto out = run(
      R"(graph(%c: f32[2, 2, 2], %a: f32[2, 2, 3], %b: f32[2, 3, 2], %n: f32[2], %ci: i64[2, 2, 2], %ai: i64[2, 2, 3], %bi: i64[2, 3, 2], %u: i32[2], %v: f32[3]) {
  %scaled: f32[2, 2, 2] = aten.baddbmm.default(%c, %a, %b, beta=0.5, alpha=2)
  %beta_zero: f32[2, 2, 2] = aten.baddbmm.default(%n, %a, %b, beta=0.0, alpha=1)
  %ints: i64[2, 2, 2] = aten.baddbmm.default(%ci, %ai, %bi, beta=2, alpha=-1)
  %outer: f32[2, 3] = aten.outer.default(%u, %v)
  %truncated: i64[2, 2, 2] = aten.baddbmm.default(%ci, %ai, %bi, beta=0.5, alpha=2.5)
  return (%scaled, %beta_zero, %ints, %outer, %truncated)
}
)",
      {{"c", make(DType::kFloat32, {2, 2, 2}, std::vector<double>(8, 1))},
       {"a", make(DType::kFloat32, {2, 2, 3}, std::vector<double>(12, 1))},
       {"b", make(DType::kFloat32, {2, 3, 2}, std::vector<double>(12, 1))},
       {"n", make(DType::kFloat32, {2}, {nan, nan})},
       {"ci", make(DType::kInt64, {2, 2, 2}, std::vector<double>(8, 1))},
       {"ai", make(DType::kInt64, {2, 2, 3}, std::vector<double>(12, 2))},
       {"bi", make(DType::kInt64, {2, 3, 2}, std::vector<double>(12, 3))},
       {"u", make(DType::kInt32, {2}, {1, 2})},
       {"v", make(DType::kFloat32, {3}, {1, 0.5, -1})}});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(values(out[0]), std::vector<double>(8, 6.5));
  EXPECT_EQ(values(out[1]), std::vector<double>(8, 3));  // beta = 0 ignores the NaN
  EXPECT_EQ(values(out[2]), std::vector<double>(8, -16));
  EXPECT_EQ(out[3].dtype(), DType::kFloat32);
  EXPECT_EQ(values(out[3]), (std::vector<double>{1, 0.5, -1, 2, 1, -2}));
  // torch.baddbmm on int64 with beta=0.5, alpha=2.5: the factors truncate to 0 and 2.
  EXPECT_EQ(values(out[4]), std::vector<double>(8, 36));
}

TEST(Decompositions, VectorNormsAndStdMean) {
  auto out = run(R"(graph(%v: f32[4], %m: f32[2, 2], %w: f32[3], %x: f32[2, 4], %h: f16[4]) {
  %two: f32[] = aten.linalg_vector_norm.default(%v, 2, None, False, dtype=None)
  %one: f32[] = aten.linalg_vector_norm.default(%v, 1, None, False, dtype=None)
  %max: f32[] = aten.linalg_vector_norm.default(%v, inf, None, False, dtype=None)
  %min: f32[] = aten.linalg_vector_norm.default(%v, -inf, None, False, dtype=None)
  %zero: f32[] = aten.linalg_vector_norm.default(%v, 0, None, False, dtype=None)
  %three: f32[] = aten.linalg_vector_norm.default(%v, 3, None, False, dtype=None)
  %half: f32[] = aten.linalg_vector_norm.default(%v, 0.5, None, False, dtype=None)
  %rows: f32[2, 1] = aten.linalg_vector_norm.default(%m, 2, [1], True, dtype=None)
  %f64: f64[] = aten.linalg_vector_norm.default(%m, 1, None, False, dtype=f64)
  %cols: f32[2] = aten.norm.ScalarOpt_dim(%m, None, [0], False)
  %all: f32[] = aten.norm.Scalar(%m, 1)
  %nan: f32[] = aten.linalg_vector_norm.default(%w, inf, None, False, dtype=None)
  %std: f32[2], %mean: f32[2] = aten.std_mean.dim(%x, [1], True, False)
  %std_1: f32[1, 1], %mean_1: f32[1, 1] = aten.std_mean.correction(%x, None, correction=0, keepdim=True)
  %half_norm: f16[] = aten.linalg_vector_norm.default(%h, 2, None, False, dtype=None)
  return (%two, %one, %max, %min, %zero, %three, %half, %rows, %f64, %cols, %all, %nan, %std, %mean, %std_1, %mean_1, %half_norm)
}
)",
                 {{"v", make(DType::kFloat32, {4}, {3, -4, 0, 1})},
                  {"m", make(DType::kFloat32, {2, 2}, {3, 4, -6, 8})},
                  {"w", make(DType::kFloat32, {3}, {1, std::nan(""), 3})},
                  {"x", make(DType::kFloat32, {2, 4}, {1, 2, 3, 4, 2, 4, 6, 8})},
                  {"h", make(DType::kFloat16, {4}, {3, -4, 0, 1})}});
  ASSERT_EQ(out.size(), 17u);
  EXPECT_NEAR(values(out[0])[0], 5.0990195, 1e-6);
  EXPECT_EQ(values(out[1])[0], 8);
  EXPECT_EQ(values(out[2])[0], 4);
  EXPECT_EQ(values(out[3])[0], 0);
  EXPECT_EQ(values(out[4])[0], 3);
  EXPECT_NEAR(values(out[5])[0], 4.5143576, 1e-6);
  EXPECT_NEAR(values(out[6])[0], 22.3923054, 1e-5);
  EXPECT_EQ(values(out[7]), (std::vector<double>{5, 10}));
  EXPECT_EQ(out[8].dtype(), DType::kFloat64);
  EXPECT_EQ(values(out[8]), (std::vector<double>{21}));
  expect_near(values(out[9]), {std::sqrt(45.0), std::sqrt(80.0)});
  EXPECT_EQ(values(out[10]), (std::vector<double>{21}));
  EXPECT_TRUE(std::isnan(values(out[11])[0]));  // inf-norm propagates NaN
  expect_near(values(out[12]), {1.2909944, 2.5819889});
  EXPECT_EQ(values(out[13]), (std::vector<double>{2.5, 5}));
  double m2 = 0;
  for (double v : {1, 2, 3, 4, 2, 4, 6, 8}) m2 += (v - 3.75) * (v - 3.75);
  expect_near(values(out[14]), {std::sqrt(m2 / 8)});
  EXPECT_EQ(values(out[15]), (std::vector<double>{3.75}));
  EXPECT_EQ(out[16].dtype(), DType::kFloat16);
  EXPECT_EQ(values(out[16])[0], 5.09765625);  // computed in f32, rounded once to f16
}

TEST(Decompositions, GroupNorm) {
  auto out = run(R"(graph(%g: f32[1, 4, 2], %w: f32[4], %b: f32[4]) {
  %group_norm: f32[1, 4, 2] = aten.group_norm.default(%g, 2, %w, %b, 1e-05, True)
  return (%group_norm)
}
)",
                 {{"g", iota(DType::kFloat32, {1, 4, 2})},
                  {"w", make(DType::kFloat32, {4}, {1, 2, 1, 1})},
                  {"b", make(DType::kFloat32, {4}, {0, 0, 1, 0})}});
  ASSERT_EQ(out.size(), 1u);
  expect_near(values(out[0]), {-1.3416355, -0.4472119, 0.8944235, 2.6832707, -0.3416355, 0.5527881,
                               0.4472120, 1.3416356});
}

}  // namespace
}  // namespace splice::runtime
