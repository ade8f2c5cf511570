// `splice inspect --plan [--json]` on real cases from tests/cases: each kind of write gets the
// strategy and src mode docs/planning.md gives it, refused strategies carry a reason naming the
// cause, bytes follow from the value shapes `splice inspect` prints, the text form carries the
// same facts, an engine file reports the plan it stores, and the JSON has exactly the keys
// plan/report.h documents (checked on every .default case). Children run with XDG_CACHE_HOME
// in the test's scratch folder, so nothing touches the real ~/.cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "support/dtype.h"
#include "tests/unit/temp_dir_test_base.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

using nlohmann::json;

std::string model_of(const std::string& c) { return kCasesDir + "/" + c + "/model.pt2"; }

// The strategies in the order the write planner tries them (docs/planning.md).
const std::vector<std::string> kStrategies = {"in_place_state", "full_overwrite", "reuse_base",
                                              "copy_then_write"};

class PlanReport : public splice::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    env_ = {{"XDG_CACHE_HOME", (dir_ / "xdg").string()}};
  }
  void TearDown() override {
    EXPECT_FALSE(std::filesystem::exists(dir_ / "xdg")) << "inspect must not use the cache";
    TempDirTest::TearDown();
  }

  Outcome cli(const std::vector<std::string>& args) { return run_splice(args, env_); }

  // `splice inspect --plan --json MODEL EXTRA...`, parsed; null on failure (after a failure).
  json plan_json(const std::string& model, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"inspect", "--plan", "--json", model};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = cli(args);
    EXPECT_EQ(o.exit_code, 0) << describe(o);
    json j = json::parse(o.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << o.out;
    return o.exit_code == 0 && !j.is_discarded() ? j : json();
  }

  // `splice inspect --plan MODEL` (text).
  std::string plan_text(const std::string& model, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"inspect", "--plan", model};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = cli(args);
    EXPECT_EQ(o.exit_code, 0) << describe(o);
    return o.out;
  }

  // Size in bytes of value `name` as `splice inspect` prints it in the IR ("%k: f32[1, 2, 1,
  // 4]" → 8 elements of 4 bytes = 32); -1 (and a failure) when it is not there.
  int64_t value_bytes(const std::string& model, const std::string& name) {
    Outcome o = cli({"inspect", model});
    EXPECT_EQ(o.exit_code, 0) << describe(o);
    // In the graph, where values carry their types (the signature above lists only roles).
    const std::string key = "%" + name + ": ";
    size_t at = o.out.find(key, o.out.find("\ngraph("));
    EXPECT_NE(at, std::string::npos) << key << " not in the IR of " << model;
    if (at == std::string::npos) return -1;
    at += key.size();
    const size_t open = o.out.find('[', at), close = o.out.find(']', at);
    auto dtype = dtype_from_name(o.out.substr(at, open - at));
    EXPECT_TRUE(dtype.has_value()) << o.out.substr(at, 20);
    if (!dtype) return -1;
    int64_t bytes = dtype_size(*dtype);
    std::string dims = o.out.substr(open + 1, close - open - 1);
    for (size_t p = 0; p < dims.size();) {
      size_t comma = dims.find(',', p);
      if (comma == std::string::npos) comma = dims.size();
      bytes *= std::stoll(dims.substr(p, comma - p));
      p = comma + 1;
    }
    return bytes;
  }

  Environment env_;
};

// The rejected strategies' names, in order.
std::vector<std::string> rejected_names(const json& write) {
  std::vector<std::string> names;
  for (const auto& r : write["rejected"]) names.push_back(r["strategy"]);
  return names;
}

// The reason `strategy` was refused ("" when it was not).
std::string reason_for(const json& write, const std::string& strategy) {
  for (const auto& r : write["rejected"])
    if (r["strategy"] == strategy) return r["reason"];
  return "";
}

// Exactly the documented keys and types; strategies and src modes from the known sets; every
// strategy tried before the chosen one is listed as rejected with a reason, in order, then
// producer_writes exactly when src is copied.
void expect_well_formed(const json& report, const std::string& what) {
  ASSERT_TRUE(report.is_object()) << what;
  std::set<std::string> top;
  for (const auto& [k, v] : report.items()) top.insert(k);
  EXPECT_EQ(top, (std::set<std::string>{"mode", "backend", "writes", "groups", "fusion_notes",
                                        "shared", "concatenated", "totals"}))
      << what;
  // concat_sibling_matmuls' record: the joined product, its weight, and parts whose columns
  // tile [0, total) in order.
  ASSERT_TRUE(report["concatenated"].is_array()) << what;
  for (const auto& c : report["concatenated"]) {
    std::set<std::string> keys;
    for (const auto& [k, v] : c.items()) keys.insert(k);
    EXPECT_EQ(keys, (std::set<std::string>{"node", "target", "weight", "parts"})) << what;
    EXPECT_TRUE(c["node"].is_string() && c["target"].is_string() && c["weight"].is_string())
        << what << ": " << c.dump();
    ASSERT_TRUE(c["parts"].is_array() && c["parts"].size() >= 2) << what << ": " << c.dump();
    int64_t next = 0;
    for (const auto& p : c["parts"]) {
      EXPECT_TRUE(p["node"].is_string() && p["target"] == c["target"]) << what << ": " << c.dump();
      EXPECT_EQ(p["start"], next) << what << ": " << c.dump();
      EXPECT_GT(p["end"].get<int64_t>(), p["start"].get<int64_t>()) << what << ": " << c.dump();
      next = p["end"].get<int64_t>();
    }
  }
  ASSERT_TRUE(report["fusion_notes"].is_array()) << what;
  // share_identical_computations' record: a kept node and the names of those it replaced.
  ASSERT_TRUE(report["shared"].is_array()) << what;
  int64_t shared_nodes = 0;
  for (const auto& c : report["shared"]) {
    std::set<std::string> keys;
    for (const auto& [k, v] : c.items()) keys.insert(k);
    EXPECT_EQ(keys, (std::set<std::string>{"node", "target", "duplicates"})) << what;
    EXPECT_TRUE(c["node"].is_string() && c["target"].is_string()) << what << ": " << c.dump();
    ASSERT_TRUE(c["duplicates"].is_array() && !c["duplicates"].empty()) << what << ": " << c.dump();
    shared_nodes += static_cast<int64_t>(c["duplicates"].size());
  }
  ASSERT_TRUE(report["groups"].is_array()) << what;
  for (const auto& g : report["groups"]) {
    std::set<std::string> keys;
    for (const auto& [k, v] : g.items()) keys.insert(k);
    EXPECT_EQ(keys, (std::set<std::string>{"nodes", "outputs", "kind"}))
        << what << ": " << g.dump();
    EXPECT_TRUE(g["kind"] == "pointwise" || g["kind"] == "rms_norm" || g["kind"] == "gemv_epilogue")
        << what << ": " << g.dump();
    // A group fuses at least two ops and stores at least one value.
    EXPECT_TRUE(g["nodes"].is_array() && g["nodes"].size() >= 2) << what << ": " << g.dump();
    EXPECT_TRUE(g["outputs"].is_array() && !g["outputs"].empty()) << what << ": " << g.dump();
  }
  // Naive mode runs every op on its own.
  if (report["mode"] == "naive") {
    EXPECT_TRUE(report["groups"].empty()) << what;
  }
  EXPECT_TRUE(report["mode"] == "planned" || report["mode"] == "naive") << what;
  ASSERT_TRUE(report["writes"].is_array()) << what;
  for (const auto& w : report["writes"]) {
    std::set<std::string> keys;
    for (const auto& [k, v] : w.items()) keys.insert(k);
    ASSERT_EQ(keys,
              (std::set<std::string>{"node", "target", "strategy", "src", "rejected", "bytes"}))
        << what << ": " << w.dump();
    EXPECT_TRUE(w["node"].is_string() && w["target"].is_string()) << what << ": " << w.dump();
    ASSERT_TRUE(w["strategy"].is_string() && w["src"].is_string()) << what << ": " << w.dump();
    EXPECT_TRUE(w["bytes"].is_number_integer() && w["bytes"] >= 0) << what << ": " << w.dump();
    ASSERT_TRUE(w["rejected"].is_array()) << what << ": " << w.dump();
    for (const auto& r : w["rejected"]) {
      std::set<std::string> rkeys;
      for (const auto& [k, v] : r.items()) rkeys.insert(k);
      EXPECT_EQ(rkeys, (std::set<std::string>{"strategy", "reason"})) << what << ": " << r.dump();
      EXPECT_TRUE(r["reason"].is_string() && !r["reason"].get<std::string>().empty())
          << what << ": " << r.dump();
    }
    const std::string strategy = w["strategy"], src = w["src"];
    auto chosen = std::find(kStrategies.begin(), kStrategies.end(), strategy);
    ASSERT_NE(chosen, kStrategies.end()) << what << ": unknown strategy " << strategy;
    ASSERT_TRUE(src == "producer_writes" || src == "copied") << what << ": unknown src " << src;
    std::vector<std::string> expected(kStrategies.begin(), chosen);
    if (src == "copied") expected.push_back("producer_writes");
    EXPECT_EQ(rejected_names(w), expected) << what << ": " << w.dump();
  }
  ASSERT_TRUE(report["totals"].is_object()) << what;
  std::set<std::string> totals;
  for (const auto& [k, v] : report["totals"].items()) {
    totals.insert(k);
    EXPECT_TRUE(v.is_number_integer() && v >= 0) << what << ": totals." << k;
  }
  EXPECT_EQ(totals,
            (std::set<std::string>{"steps", "kernels", "copy_bytes", "peak_bytes", "shared_nodes"}))
      << what;
  EXPECT_EQ(report["totals"]["shared_nodes"], shared_nodes) << what;
  EXPECT_LE(report["totals"]["kernels"], report["totals"]["steps"]) << what;
}

TEST_F(PlanReport, RotaryHalvesAreStoredStraightIntoTheirBase) {
  json report = plan_json(model_of("rotary_halves_into_empty_like.default"));
  ASSERT_FALSE(report.is_null());
  EXPECT_EQ(report["mode"], "planned");
  ASSERT_EQ(report["writes"].size(), 2u);
  // The archive's own node names (model/models/model.json of the .pt2).
  const std::vector<std::string> names = {"slice_scatter", "slice_scatter_1"};
  for (size_t i = 0; i < 2; ++i) {
    const json& w = report["writes"][i];
    EXPECT_EQ(w["node"], names[i]);
    EXPECT_EQ(w["target"], "aten.slice_scatter.default");
    EXPECT_EQ(w["strategy"], "reuse_base");
    EXPECT_EQ(w["src"], "producer_writes");
    EXPECT_EQ(w["bytes"], 0);
    EXPECT_EQ(reason_for(w, "in_place_state"), "the base is not a mutated state input");
    EXPECT_EQ(reason_for(w, "full_overwrite"), "the write covers only part of the base");
  }
  EXPECT_EQ(report["totals"]["copy_bytes"], 0);
  EXPECT_GT(report["totals"]["steps"], 0);
}

TEST_F(PlanReport, RotaryChainIsOneKernel) {
  // Both halves (x1 * cos - x2 * sin, x2 * cos + x1 * sin) in one loop nest that stores each
  // straight into its half of the empty_like buffer: six ops, one kernel.
  for (const std::string c :
       {"rotary_halves_into_empty_like.default", "rotary_halves_f16.default"}) {
    SCOPED_TRACE(c);
    json report = plan_json(model_of(c));
    ASSERT_FALSE(report.is_null());
    EXPECT_EQ(report["totals"]["kernels"], 1);
    EXPECT_EQ(report["totals"]["steps"], 6);
    ASSERT_EQ(report["groups"].size(), 1u);
    EXPECT_EQ(report["groups"][0]["nodes"].size(), 6u);
    EXPECT_EQ(report["groups"][0]["outputs"], json({"sub", "add"}));
    json naive = plan_json(model_of(c), {"--plan-mode", "naive"});
    EXPECT_TRUE(naive["groups"].empty());
    EXPECT_EQ(naive["totals"]["kernels"], naive["totals"]["steps"]);
  }
  const std::string text = plan_text(model_of("rotary_halves_into_empty_like.default"));
  EXPECT_NE(text.find("group 0: 6 pointwise ops as one loop nest, storing sub, add\n  mul "
                      "(aten.mul.Tensor), mul_1 (aten.mul.Tensor), sub (aten.sub.Tensor)"),
            std::string::npos)
      << text;
}

TEST_F(PlanReport, KvCacheUpdateIsWrittenIntoTheStateAndMovesOnlyTheUpdate) {
  // index_put(cache, [None, None, pos], k) and slice_scatter(cache, k, 2, u0, u0 + 1): the
  // write lands in the buffer itself; k (f32[1, 2, 1, 4]: 8 × 4 = 32 bytes) is all that moves.
  for (const auto& [c, target] : std::vector<std::pair<std::string, std::string>>{
           {"kv_cache_reads_old_state.default", "aten.index_put.default"},
           {"w_kv_item_slice_3_7_0_f32.default", "aten.slice_scatter.default"}}) {
    SCOPED_TRACE(c);
    json report = plan_json(model_of(c));
    ASSERT_FALSE(report.is_null());
    ASSERT_EQ(report["writes"].size(), 1u);
    const json& w = report["writes"][0];
    EXPECT_EQ(w["target"], target);
    EXPECT_EQ(w["strategy"], "in_place_state");
    EXPECT_EQ(w["src"], "copied");
    const int64_t k_bytes = value_bytes(model_of(c), "k");
    EXPECT_EQ(k_bytes, 32);
    EXPECT_EQ(w["bytes"], k_bytes);
    EXPECT_EQ(report["totals"]["copy_bytes"], k_bytes);
    EXPECT_EQ(rejected_names(w), std::vector<std::string>{"producer_writes"});
  }
}

TEST_F(PlanReport, BaseReadAfterTheWriteIsCopiedFirst) {
  // %slice_3 = clone[1:3]; slice_scatter(%slice_3, %s, 1, 2, 6) is read again through %clone
  // by slice_scatter_1, so its base cannot be reused.
  const std::string model = model_of("w_rank2.default");
  json report = plan_json(model);
  ASSERT_FALSE(report.is_null());
  ASSERT_EQ(report["writes"].size(), 2u);
  const json& w = report["writes"][0];
  EXPECT_EQ(w["node"], "slice_scatter");
  EXPECT_EQ(w["strategy"], "copy_then_write");
  EXPECT_EQ(w["src"], "copied");
  const std::string reason = reason_for(w, "reuse_base");
  EXPECT_NE(reason.find("'slice_scatter_1'"), std::string::npos) << reason;
  EXPECT_NE(reason.find("reads the base after the write"), std::string::npos) << reason;
  // Base and src both move: i32[2, 6] (48 bytes) + i32[2, 4] (32 bytes).
  EXPECT_EQ(w["bytes"], value_bytes(model, "slice_3") + value_bytes(model, "s"));
  EXPECT_EQ(w["bytes"], 80);
  // The later write into the clone reuses it (nothing reads it afterwards).
  EXPECT_EQ(report["writes"][1]["node"], "slice_scatter_1");
  EXPECT_EQ(report["writes"][1]["strategy"], "reuse_base");
}

TEST_F(PlanReport, WriteCoveringTheWholeBaseIsAFullOverwrite) {
  // slice_scatter(%x: i32[4, 8], %full_to_i32: i32[4, 8], 1, 0, 8, 1) covers all of x.
  json report = plan_json(model_of("w_cast_slice_scatter_op_2_7_times_3.default"));
  ASSERT_FALSE(report.is_null());
  ASSERT_EQ(report["writes"].size(), 1u);
  const json& w = report["writes"][0];
  EXPECT_EQ(w["strategy"], "full_overwrite");
  EXPECT_EQ(w["src"], "producer_writes");
  EXPECT_EQ(w["bytes"], 0);
  EXPECT_EQ(rejected_names(w), std::vector<std::string>{"in_place_state"});
}

TEST_F(PlanReport, TextFormShowsEveryWriteAndTheTotals) {
  const std::string model = model_of("w_rank2.default");
  json report = plan_json(model);
  std::string text = plan_text(model);
  ASSERT_FALSE(report.is_null());
  EXPECT_TRUE(text.starts_with("# plan (planned mode, cpu backend): 2 write(s)\n")) << text;
  for (const auto& w : report["writes"]) {
    const std::string head = w["node"].get<std::string>() + " (" + w["target"].get<std::string>() +
                             ")\n  " + w["strategy"].get<std::string>() + " + " +
                             w["src"].get<std::string>() + ", " +
                             std::to_string(w["bytes"].get<int64_t>()) + " bytes\n";
    EXPECT_NE(text.find(head), std::string::npos) << head << "\nnot in:\n" << text;
    for (const auto& r : w["rejected"]) {
      const std::string line = "  not " + r["strategy"].get<std::string>() + ": " +
                               r["reason"].get<std::string>() + "\n";
      EXPECT_NE(text.find(line), std::string::npos) << line << "\nnot in:\n" << text;
    }
  }
  const json& t = report["totals"];
  const std::string totals =
      "totals: " + std::to_string(t["steps"].get<int64_t>()) + " steps, " +
      std::to_string(t["kernels"].get<int64_t>()) + " kernels, " +
      std::to_string(t["copy_bytes"].get<int64_t>()) + " bytes copied, peak " +
      std::to_string(t["peak_bytes"].get<int64_t>()) + " bytes of intermediates; ";
  EXPECT_NE(text.find(totals), std::string::npos) << totals << "\nnot in:\n" << text;
  // The producer of a producer_writes src is named.
  std::string rotary = plan_text(model_of("rotary_halves_into_empty_like.default"));
  EXPECT_NE(rotary.find("slice_scatter (aten.slice_scatter.default)\n"
                        "  reuse_base + producer_writes, 0 bytes\n"
                        "  src is stored into the destination by 'sub'\n"),
            std::string::npos)
      << rotary;
}

TEST_F(PlanReport, EngineFileReportsTheStoredPlan) {
  for (const std::string c : {"rotary_halves_into_empty_like.default",
                              "kv_cache_reads_old_state.default", "w_rank2.default"}) {
    SCOPED_TRACE(c);
    for (const std::string mode : {"planned", "naive"}) {
      const std::string engine = (dir_ / (c + "." + mode + ".splice")).string();
      Outcome o = cli({"compile", model_of(c), "-o", engine, "--plan-mode", mode});
      ASSERT_EQ(o.exit_code, 0) << describe(o);
      json stored = plan_json(engine);
      EXPECT_EQ(stored["mode"], mode);
      EXPECT_EQ(stored, plan_json(model_of(c), {"--plan-mode", mode}));
      EXPECT_EQ(plan_text(engine), plan_text(model_of(c), {"--plan-mode", mode}));
    }
  }
}

TEST_F(PlanReport, NaiveModeCopiesEveryWrite) {
  const std::string model = model_of("rotary_halves_into_empty_like.default");
  json planned = plan_json(model), naive = plan_json(model, {"--plan-mode", "naive"});
  ASSERT_FALSE(planned.is_null() || naive.is_null());
  EXPECT_EQ(naive["mode"], "naive");
  ASSERT_EQ(naive["writes"].size(), planned["writes"].size());
  int64_t bytes = 0;
  for (size_t i = 0; i < naive["writes"].size(); ++i) {
    const json& w = naive["writes"][i];
    EXPECT_EQ(w["node"], planned["writes"][i]["node"]);
    EXPECT_EQ(w["strategy"], "copy_then_write");
    EXPECT_EQ(w["src"], "copied");
    EXPECT_EQ(reason_for(w, "reuse_base"), "naive plan mode");
    // Base x-sized f32[1, 4, 8, 16] (2048 bytes) plus a half of it (1024 bytes).
    EXPECT_EQ(w["bytes"], 3072);
    bytes += w["bytes"].get<int64_t>();
  }
  EXPECT_GE(naive["totals"]["copy_bytes"], bytes);
  EXPECT_GT(naive["totals"]["copy_bytes"], planned["totals"]["copy_bytes"]);
}

// Every .default case, in both modes: the JSON is well formed (exactly the documented keys,
// rejected strategies in the planner's order).
TEST_F(PlanReport, EveryCaseHasAWellFormedReport) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCasesDir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".default")) continue;
    ++cases;
    for (const std::string mode : {"planned", "naive"}) {
      json report = plan_json(entry.path().string() + "/model.pt2", {"--plan-mode", mode});
      expect_well_formed(report, name + " (" + mode + ")");
      EXPECT_EQ(report["mode"], mode) << name;
      if (mode == "naive") {
        for (const auto& w : report["writes"]) {
          EXPECT_TRUE(w["strategy"] == "copy_then_write" && w["src"] == "copied") << name;
        }
      }
    }
    if (HasFailure()) return;  // one broken case is enough to read
  }
  EXPECT_GE(cases, 100);
}

}  // namespace
}  // namespace splice::test
