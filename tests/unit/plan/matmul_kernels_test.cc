// The matrix products' kernel choice (plan/matmul_kernels.h), planned for a GPU-like target
// made by hand (gemv_max_rows 16, "cublaslt"): no GPU is needed to plan. GEMV at 16 rows or
// fewer (batch dims folded), cuBLASLt above, for batched products, other dtypes and an addmm
// self that varies along the rows; each decision names its reason; the same kernel count at
// hidden 64 and 2048; the CPU target records nothing; the decisions survive the engine's JSON.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "plan/build.h"
#include "plan/plan_json.h"
#include "plan/report.h"
#include "tests/test_backends.h"

namespace splice::plan {
namespace {

using splice::testing::cpu_target;

backend::Target gpu_like_target() {
  backend::Target t = cpu_target();
  t.name = "gpu_like";
  t.gemv_max_rows = 16;
  t.gemm_library = "cublaslt";
  return t;
}

ir::Program parse(const std::string& text) {
  auto program = ir::parse_program(text);
  EXPECT_TRUE(program.ok()) << program.error().message();
  return std::move(*program);
}

// One product `body` (its result %y) over inputs `inputs` ("%x: f16[1, 64], ...").
std::string program_text(const std::string& inputs, const std::string& body) {
  std::string sig = "signature {\n";
  // Every "%name:" of `inputs`, in order.
  for (size_t at = inputs.find('%'); at != std::string::npos; at = inputs.find('%', at + 1))
    sig += "  input " + inputs.substr(at, inputs.find(':', at) - at) + ": user_input\n";
  sig += "  output 0: user_output\n";
  return sig + "}\ngraph(" + inputs + ") {\n" + body + "  return (%y)\n}\n";
}

// kernel and reason of the single product.
std::pair<std::string, std::string> choice(const std::string& inputs, const std::string& body,
                                           const backend::Target& target = gpu_like_target()) {
  ir::Program p = parse(program_text(inputs, body));
  const Plan plan = build_plan(p, PlanMode::kPlanned, target);
  if (plan.matmuls.size() != 1) return {"<" + std::to_string(plan.matmuls.size()) + ">", ""};
  return {plan.matmuls[0].kernel, plan.matmuls[0].reason};
}

TEST(MatmulKernels, GemvAtSixteenRowsOrFewerCublasltAbove) {
  auto [k1, r1] =
      choice("%x: f16[1, 64], %w: f16[96, 64]", "  %y: f16[1, 96] = aten.linear.default(%x, %w)\n");
  EXPECT_EQ(k1, "gemv");
  EXPECT_EQ(r1, "1 rows <= 16: a read of the weight");
  // [2, 8, 64]: the batch dims fold into 16 rows.
  auto [k16, r16] = choice("%x: bf16[2, 8, 64], %w: bf16[96, 64], %b: bf16[96]",
                           "  %y: bf16[2, 8, 96] = aten.linear.default(%x, %w, %b)\n");
  EXPECT_EQ(k16, "gemv");
  EXPECT_EQ(r16, "16 rows <= 16: a read of the weight");
  auto [k17, r17] = choice("%x: f16[17, 64], %w: f16[96, 64]",
                           "  %y: f16[17, 96] = aten.linear.default(%x, %w)\n");
  EXPECT_EQ(k17, "cublaslt");
  EXPECT_EQ(r17, "17 rows > 16: a GEMM reuses each weight tile");
  auto [kmm, rmm] =
      choice("%x: f32[4, 8], %w: f32[8, 8]", "  %y: f32[4, 8] = aten.mm.default(%x, %w)\n");
  EXPECT_EQ(kmm, "gemv");
}

TEST(MatmulKernels, CublasltForBatchesOtherDtypesAndRowVaryingSelf) {
  auto [kb, rb] = choice("%x: f16[2, 1, 8], %w: f16[2, 8, 8]",
                         "  %y: f16[2, 1, 8] = aten.bmm.default(%x, %w)\n");
  EXPECT_EQ(kb, "cublaslt");
  EXPECT_EQ(rb, "batched: 2 right operands");
  auto [kd, rd] =
      choice("%x: f64[1, 8], %w: f64[8, 8]", "  %y: f64[1, 8] = aten.mm.default(%x, %w)\n");
  EXPECT_EQ(kd, "cublaslt");
  EXPECT_EQ(rd, "f64 product: the GEMV kernels take float16, bfloat16 and float32");
  auto [ks, rs] = choice("%b: f32[4, 8], %x: f32[4, 8], %w: f32[8, 8]",
                         "  %y: f32[4, 8] = aten.addmm.default(%b, %x, %w)\n");
  EXPECT_EQ(ks, "cublaslt");
  EXPECT_EQ(rs, "addmm's self varies along the rows (not a bias)");
  auto [kv, rv] = choice("%b: f32[8], %x: f32[4, 8], %w: f32[8, 8]",
                         "  %y: f32[4, 8] = aten.addmm.default(%b, %x, %w)\n");
  EXPECT_EQ(kv, "gemv");
}

TEST(MatmulKernels, CpuTargetRecordsNothing) {
  ir::Program p = parse(program_text("%x: f16[1, 64], %w: f16[96, 64]",
                                     "  %y: f16[1, 96] = aten.linear.default(%x, %w)\n"));
  const Plan plan = build_plan(p, PlanMode::kPlanned, cpu_target());
  EXPECT_TRUE(plan.matmuls.empty());
  EXPECT_FALSE(plan_report_json(p, plan).contains("matmuls"));
}

// A decoder layer's products at one token (q, k, v, o, gate, up, down around an add and a
// SiLU·mul): the same kernels, decisions and kernel count at hidden 64 as at 2048.
std::string layer(int h) {
  const std::string H = std::to_string(h), F = std::to_string(4 * h);
  const std::string in =
      "%x: f16[1, 1, " + H + "], %w: f16[" + H + ", " + H + "], %b: f16[" + F + ", " + H + "]";
  std::string body;
  for (const char* n : {"q", "k", "v"})
    body += "  %" + std::string(n) + ": f16[1, 1, " + H + "] = aten.linear.default(%x, %w)\n";
  body += "  %qk: f16[1, 1, " + H + "] = aten.add.Tensor(%q, %k)\n";
  body += "  %qkv: f16[1, 1, " + H + "] = aten.add.Tensor(%qk, %v)\n";
  body += "  %o: f16[1, 1, " + H + "] = aten.linear.default(%qkv, %w)\n";
  body += "  %g: f16[1, 1, " + F + "] = aten.linear.default(%o, %b)\n";
  body += "  %u: f16[1, 1, " + F + "] = aten.linear.default(%o, %b)\n";
  body += "  %s: f16[1, 1, " + F + "] = aten.silu.default(%g)\n";
  body += "  %m: f16[1, 1, " + F + "] = aten.mul.Tensor(%s, %u)\n";
  body += "  %y: f16[1, 1, " + H + "] = aten.matmul.default(%m, %w2)\n";
  return program_text(in + ", %w2: f16[" + F + ", " + H + "]", body);
}

TEST(MatmulKernels, SameKernelsAtHidden64And2048) {
  const backend::Target t = gpu_like_target();
  ir::Program small = parse(layer(64)), large = parse(layer(2048));
  const Plan a = build_plan(small, PlanMode::kPlanned, t);
  const Plan b = build_plan(large, PlanMode::kPlanned, t);
  EXPECT_EQ(a.totals.kernels, b.totals.kernels);
  ASSERT_EQ(a.matmuls.size(), 7u);
  EXPECT_EQ(a.matmuls, b.matmuls);
  for (const MatmulDecision& m : a.matmuls) EXPECT_EQ(m.kernel, "gemv") << m.reason;
}

TEST(MatmulKernels, ReportedAndKeptThroughTheEngineJson) {
  ir::Program p = parse(layer(64));
  const Plan plan = build_plan(p, PlanMode::kPlanned, gpu_like_target());
  const nlohmann::json report = plan_report_json(p, plan);
  ASSERT_TRUE(report.contains("matmuls"));
  EXPECT_EQ(report["matmuls"][0]["kernel"], "gemv");
  EXPECT_EQ(report["matmuls"][0]["target"], "aten.linear.default");
  EXPECT_NE(plan_report_text(p, plan).find("matmul q (aten.linear.default): gemv, 1 rows <= 16"),
            std::string::npos)
      << plan_report_text(p, plan);
  auto back = plan_from_json(nlohmann::json::parse(plan_to_json(plan).dump()), p.graph);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, plan);
}

}  // namespace
}  // namespace splice::plan
