// Plan equivalence of the training IR: for every training-IR case (`.train`, `.strict`) with a
// `run_decompositions({})` twin (`.keep`), the functionalised program plans its writes exactly
// as the twin's: per write the same op, strategy, producer op and bytes (value names ignored,
// the writes compared as multisets), and no more copied bytes in total. So `cache.index_copy_`
// or `res[..., :h] = y` as torch.export.export returns them cost what their functional forms
// cost. Where export recorded a reshape as clone + _unsafe_view in the twin, splice decides it
// again from its own layouts (decompose_composites), as it decides the training IR's reshape.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "plan/build.h"
#include "tests/test_backends.h"

namespace splice::plan {
namespace {

namespace fs = std::filesystem;
using splice::testing::cpu_target;

const fs::path kCases = fs::path(SPLICE_SOURCE_DIR) / "tests/cases";

struct Summary {
  std::vector<std::string> writes;  // "op strategy producer-op bytes", sorted
  int64_t copy_bytes = 0;
};

Summary summarize(const fs::path& pt2) {
  Summary s;
  auto program = compiler::load_program(pt2.string());
  EXPECT_TRUE(program.ok()) << pt2 << ": " << program.error().message();
  if (!program.ok()) return s;
  const Plan plan = build_plan(*program, PlanMode::kPlanned, cpu_target());
  const auto& nodes = program->graph.nodes();
  for (const WriteDecision& w : plan.writes) {
    const std::string producer = w.producer >= 0 ? nodes[w.producer]->target() : "-";
    s.writes.push_back(fmt::format("{} {} {} {}", nodes[w.node]->target(),
                                   strategy_name(w.strategy), producer, w.bytes));
  }
  std::sort(s.writes.begin(), s.writes.end());
  s.copy_bytes = plan.totals.copy_bytes;
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& x : v) out += "\n    " + x;
  return out;
}

TEST(TrainingIrPlan, EveryTrainingIrCasePlansLikeItsFunctionalTwin) {
  int compared = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kCases)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    std::string base, suffix;
    for (const char* form : {".train", ".strict"}) {
      const size_t at = name.find(form);
      if (at == std::string::npos) continue;
      base = name.substr(0, at);
      suffix = name.substr(at + std::string(form).size());  // "" or ".cuda"
    }
    if (base.empty() || !fs::exists(dir / "model.pt2")) continue;
    const fs::path twin = kCases / (base + ".keep" + suffix);
    if (!fs::exists(twin / "model.pt2")) continue;
    SCOPED_TRACE(name);
    const Summary train = summarize(dir / "model.pt2");
    const Summary keep = summarize(twin / "model.pt2");
    ++compared;
    EXPECT_EQ(train.writes, keep.writes)
        << "training IR:" << join(train.writes) << "\n  twin:" << join(keep.writes);
    // No more copied bytes than the twin. Fewer is possible: where the two forms decompose an
    // op differently (upsample_* against its twin's _unsafe_index), share_identical_computations
    // can find more repeated casts in one of them.
    EXPECT_LE(train.copy_bytes, keep.copy_bytes);
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace splice::plan
