// Session::profile (include/splice/splice.h) on the CPU: one row per plan step, timed on the
// host (no kernel, no grid: the CPU profile touches neither CUDA nor CUPTI), sorted by time,
// adding up to the profiled call's own time within 25%; the session's state afterwards is what
// the call left, as measure() leaves it; and the error for a bad warm-up count.
#include <gtest/gtest.h>

#include <set>

#include "splice/splice.h"
#include "tensor/safetensors.h"

namespace splice {
namespace {

// Two llama blocks (attention, MLP, RMSNorm, rotary): enough work per step that the call's time
// is mostly its steps'.
const std::string kCase = SPLICE_SOURCE_DIR "/tests/cases/llama_block_2layer.default";

struct Loaded {
  Model model;
  Session session;
  std::map<std::string, Tensor> tensors;
  std::map<std::string, TensorArg> args;
};

Loaded load() {
  LoadOptions options;
  options.threads = 1;
  auto model = Model::load(kCase + "/model.pt2", options);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message());
  if (!model.ok()) std::abort();
  auto session = model->open_session();
  if (!session.ok()) std::abort();
  auto inputs = read_safetensors(kCase + "/call0.inputs.safetensors");
  if (!inputs.ok()) std::abort();
  Loaded l{std::move(*model), std::move(*session), std::move(*inputs), {}};
  for (auto& [name, t] : l.tensors)
    l.args.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  return l;
}

TEST(SessionProfile, OneRowPerPlanStepOnTheCpuSummingToTheCall) {
  Loaded l = load();
  MeasureOptions options;
  options.warmup = 3;
  auto p = l.session.profile(l.args, options);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->source, "host");
  EXPECT_EQ(p->clock, "host");
  ASSERT_FALSE(p->rows.empty());
  std::set<int64_t> steps;
  double sum = 0;
  for (size_t i = 0; i < p->rows.size(); ++i) {
    const ProfileRow& r = p->rows[i];
    EXPECT_FALSE(r.kernel.has_value());
    EXPECT_FALSE(r.grid.has_value());
    EXPECT_EQ(r.calls, 1);
    EXPECT_GE(r.ms, 0.0);
    EXPECT_FALSE(r.op.empty()) << "step " << r.step;
    if (i > 0) {
      EXPECT_GE(p->rows[i - 1].ms, r.ms) << "rows not sorted by ms";
    }
    EXPECT_TRUE(steps.insert(r.step).second) << "step " << r.step << " twice";
    sum += r.ms;
  }
  // Steps 0..n-1, each once.
  EXPECT_EQ(*steps.begin(), 0);
  EXPECT_EQ(*steps.rbegin(), static_cast<int64_t>(steps.size()) - 1);
  EXPECT_GT(p->call_ms, 0.0);
  EXPECT_NEAR(sum, p->call_ms, 0.25 * p->call_ms) << "rows sum to " << sum;
  // A matmul step is among the rows, named by its op.
  bool matmul = false;
  for (const ProfileRow& r : p->rows) matmul = matmul || r.op.find("mm") != std::string::npos;
  EXPECT_TRUE(matmul);
}

TEST(SessionProfile, RefusesANegativeWarmup) {
  Loaded l = load();
  MeasureOptions options;
  options.warmup = -1;
  auto p = l.session.profile(l.args, options);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind(), ErrorKind::kBadUsage);
  EXPECT_EQ(p.error().message(), "profile needs warmup >= 0 (got -1)");
}

}  // namespace
}  // namespace splice
