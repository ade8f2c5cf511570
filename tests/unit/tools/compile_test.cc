// `splice compile` and the engine cache through the CLI: engines compiled from tests/cases run
// the recorded calls with PyTorch's results (and exactly what in-memory planning gives), `run
// --cache-dir` creates one entry, hits it, rebuilds a damaged one and writes nothing with
// --no-cache, --plan-mode naive reaches the engine's plan, and every damaged, truncated or
// foreign engine file and every bad command line ends with exit code 2 and a message that says
// what is wrong. Every child runs with XDG_CACHE_HOME in the test's scratch folder, so no test
// reads or writes the real ~/.cache.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "plan/engine_file.h"
#include "plan/plan.h"
#include "support/dtype.h"
#include "tensor/convert.h"
#include "tests/unit/temp_dir_test_base.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

namespace fs = std::filesystem;

std::string case_file(const std::string& c, const std::string& name) {
  return kCasesDir + "/" + c + "/" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// The inode of `path`: an atomic rewrite (temporary file renamed over it) changes it, a read
// does not.
ino_t inode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

// |a - e| <= atol + rtol * |e| per float dtype (the conformance suite's bounds); integer and
// bool tensors compare exactly.
void expect_close_tensors(const std::map<std::string, Tensor>& actual,
                          const std::map<std::string, Tensor>& expected, const std::string& what) {
  std::vector<std::string> actual_keys, expected_keys;
  for (const auto& [k, v] : actual) actual_keys.push_back(k);
  for (const auto& [k, v] : expected) expected_keys.push_back(k);
  ASSERT_EQ(actual_keys, expected_keys) << what;
  for (const auto& [name, e] : expected) {
    const Tensor& a = actual.at(name);
    ASSERT_EQ(a.dtype(), e.dtype()) << what << " " << name;
    ASSERT_EQ(a.sizes(), e.sizes()) << what << " " << name;
    if (!is_floating(e.dtype())) {
      expect_same_tensors({{name, a}}, {{name, e}});
      continue;
    }
    double rtol = 1e-4, atol = 1e-5;  // f32
    if (e.dtype() == DType::kFloat16) rtol = 1e-2, atol = 1e-3;
    if (e.dtype() == DType::kBFloat16) rtol = 2e-2, atol = 1e-2;
    if (e.dtype() == DType::kFloat64) rtol = 1e-9, atol = 1e-12;
    Tensor x = convert(a, DType::kFloat64).value(), y = convert(e, DType::kFloat64).value();
    int64_t bad = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      double got = x.data<double>()[i], want = y.data<double>()[i];
      if (std::isnan(got) && std::isnan(want)) continue;
      if (!(std::fabs(got - want) <= atol + rtol * std::fabs(want)) && got != want) ++bad;
    }
    EXPECT_EQ(bad, 0) << what << " " << name << ": elements beyond rtol " << rtol << " atol "
                      << atol;
  }
}

class SpliceCompile : public splice::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    env_ = {{"XDG_CACHE_HOME", path("xdg")}};
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // `splice ARGS` with the cache's default location inside the scratch folder.
  Outcome cli(const std::vector<std::string>& args) { return run_splice(args, env_); }

  // Runs `splice ARGS` and expects exit 2 with every one of `substrings` in stderr.
  void expect_user_error(const std::vector<std::string>& args,
                         const std::vector<std::string>& substrings) {
    Outcome o = cli(args);
    EXPECT_EQ(o.exit_code, 2) << describe(o);
    for (const auto& s : substrings)
      EXPECT_NE(o.err.find(s), std::string::npos) << "expected '" << s << "' in stderr\n"
                                                  << describe(o);
  }

  // Compiles case `c` into the scratch folder and returns the engine's path.
  std::string compile(const std::string& c, const std::vector<std::string>& extra = {}) {
    std::string engine = path(c + ".splice");
    std::vector<std::string> args = {"compile", case_file(c, "model.pt2"), "-o", engine};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = cli(args);
    EXPECT_EQ(o.exit_code, 0) << describe(o);
    EXPECT_TRUE(fs::exists(engine)) << engine;
    return engine;
  }

  // Runs `model` on call `call` of case `c`, chaining state through --state-in/--state-out
  // when the case has buffers, and returns the outputs file. `tag` keeps runs apart.
  std::string run_call(const std::string& model, const std::string& c, int call,
                       const std::string& tag, const std::vector<std::string>& extra = {}) {
    const std::string k = std::to_string(call);
    std::string out = path(tag + ".out" + k + ".safetensors");
    std::vector<std::string> args = {"run",       model,
                                     "--inputs",  case_file(c, "call" + k + ".inputs.safetensors"),
                                     "--outputs", out};
    if (has_buffers(c)) {
      args.insert(args.end(), {"--state-out", path(tag + ".state" + k + ".safetensors")});
      if (call > 0)
        args.insert(args.end(), {"--state-in",
                                 path(tag + ".state" + std::to_string(call - 1) + ".safetensors")});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = cli(args);
    EXPECT_EQ(last_.exit_code, 0) << model << " call " << call << ": " << describe(last_);
    return out;
  }

  static nlohmann::json case_json(const std::string& c) {
    return nlohmann::json::parse(read_bytes(case_file(c, "case.json")));
  }
  static bool has_buffers(const std::string& c) { return !case_json(c)["buffers"].empty(); }

  // Compiles case `c`, runs every recorded call on the engine and checks outputs (and state)
  // against PyTorch's, and bit for bit against the same calls on the .pt2 planned in memory.
  void expect_engine_runs_as_recorded(const std::string& c) {
    const std::string engine = compile(c);
    const int calls = case_json(c)["calls"].get<int>();
    ASSERT_GE(calls, 1);
    for (int call = 0; call < calls; ++call) {
      const std::string k = std::to_string(call);
      std::string out = run_call(engine, c, call, "engine");
      std::string fresh = run_call(case_file(c, "model.pt2"), c, call, "pt2", {"--no-cache"});
      if (HasFailure()) return;
      expect_close_tensors(read_tensors(out),
                           read_tensors(case_file(c, "call" + k + ".outputs.safetensors")),
                           "call " + k + " outputs");
      expect_same_tensors(read_tensors(out), read_tensors(fresh));
      if (has_buffers(c))
        expect_close_tensors(read_tensors(path("engine.state" + k + ".safetensors")),
                             read_tensors(case_file(c, "call" + k + ".state.safetensors")),
                             "call " + k + " state");
    }
    EXPECT_FALSE(fs::exists(path("xdg"))) << "running an engine file must not use the cache";
  }

  // The *.splice files directly in `dir` (nothing else may sit there but the archives' digest
  // memos, *.digest).
  static std::vector<std::string> cache_entries(const std::string& dir) {
    std::vector<std::string> entries;
    if (!fs::exists(dir)) return entries;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".digest") continue;
      EXPECT_EQ(e.path().extension(), ".splice") << "stray file in the cache: " << e.path();
      entries.push_back(e.path().string());
    }
    std::sort(entries.begin(), entries.end());
    return entries;
  }

  Environment env_;
  Outcome last_;  // of the last run_call
};

// ---- compiled engines run the recorded calls ----

TEST_F(SpliceCompile, EngineOfTwoProducerWritesRunsAsRecorded) {
  expect_engine_runs_as_recorded("rotary_halves_into_empty_like.default");
}

TEST_F(SpliceCompile, EngineWithABufferChainsStateAsRecorded) {
  expect_engine_runs_as_recorded("kv_cache_reads_old_state.default");  // buffer cache, 3 calls
}

TEST_F(SpliceCompile, EngineWithDynamicShapesRunsEveryRecordedShape) {
  // x, y: f32[2, s] with s bound to 6, 9 and 4 in the three calls.
  expect_engine_runs_as_recorded("dyn_symbolic_slice_bounds.default");
}

TEST_F(SpliceCompile, EngineWithADataDependentWriteRunsAsRecorded) {
  // pos.item() → u0 in [0, 7] decides where k lands in the buffer.
  expect_engine_runs_as_recorded("w_kv_item_slice_3_7_0_f32.default");
}

TEST_F(SpliceCompile, CompilingTwiceGivesTheSameBytes) {
  const std::string c = "rotary_halves_into_empty_like.default";
  std::string first = read_bytes(compile(c));
  std::string second = read_bytes(compile(c));
  EXPECT_FALSE(first.empty());
  EXPECT_TRUE(first == second);
  EXPECT_EQ(first.substr(0, 8), std::string(plan::kEngineMagic));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
}

TEST_F(SpliceCompile, NaivePlanModeIsStoredInTheEngine) {
  const std::string c = "rotary_halves_into_empty_like.default";
  std::string engine = compile(c, {"--plan-mode", "naive"});
  Outcome o = cli({"inspect", "--plan", "--json", engine});
  ASSERT_EQ(o.exit_code, 0) << describe(o);
  nlohmann::json report = nlohmann::json::parse(o.out);
  EXPECT_EQ(report["mode"], "naive");
  ASSERT_EQ(report["writes"].size(), 2u);
  for (const auto& w : report["writes"]) {
    EXPECT_EQ(w["strategy"], "copy_then_write") << w.dump();
    EXPECT_EQ(w["src"], "copied") << w.dump();
  }
  // The same report as planning the archive in naive mode; and it still computes the same.
  Outcome direct =
      cli({"inspect", "--plan", "--json", "--plan-mode", "naive", case_file(c, "model.pt2")});
  ASSERT_EQ(direct.exit_code, 0) << describe(direct);
  EXPECT_EQ(nlohmann::json::parse(direct.out), report);
  std::string out = run_call(engine, c, 0, "naive");
  if (HasFailure()) return;
  expect_close_tensors(read_tensors(out), read_tensors(case_file(c, "call0.outputs.safetensors")),
                       "naive engine outputs");
}

// ---- the engine cache behind `run` on a .pt2 ----

TEST_F(SpliceCompile, CacheMissCreatesOneEntryAndTheSecondRunHitsIt) {
  const std::string c = "kv_cache_reads_old_state.default";
  const std::string cache = path("cache");
  const std::string model = case_file(c, "model.pt2");
  std::string out0 = run_call(model, c, 0, "miss", {"--cache-dir", cache});
  EXPECT_EQ(last_.err, "") << "a miss is silent";
  auto entries = cache_entries(cache);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(fs::path(entries[0]).stem().string().size(), 32u) << "the key is 32 hex digits";
  const ino_t inode = inode_of(entries[0]);
  const std::string bytes = read_bytes(entries[0]);

  std::string out1 = run_call(model, c, 0, "hit", {"--cache-dir", cache});
  if (HasFailure()) return;
  EXPECT_EQ(last_.err, "") << "a hit is silent";
  EXPECT_EQ(cache_entries(cache), entries);
  EXPECT_EQ(inode_of(entries[0]), inode) << "a hit must not rewrite the entry";
  EXPECT_TRUE(read_bytes(entries[0]) == bytes);
  auto miss = read_tensors(out0), hit = read_tensors(out1);
  EXPECT_EQ(hit.size(), miss.size());
  expect_same_tensors(hit, miss);
  expect_close_tensors(hit, read_tensors(case_file(c, "call0.outputs.safetensors")), "hit");
  EXPECT_FALSE(fs::exists(path("xdg"))) << "--cache-dir replaces the default location";
}

TEST_F(SpliceCompile, CacheKeyIsTheArchivesBytesNotThePath) {
  const std::string c = "rotary_halves_into_empty_like.default";
  const std::string cache = path("cache");
  run_call(case_file(c, "model.pt2"), c, 0, "a", {"--cache-dir", cache});
  fs::copy_file(case_file(c, "model.pt2"), path("renamed.pt2"));
  run_call(path("renamed.pt2"), c, 0, "b", {"--cache-dir", cache});
  EXPECT_EQ(cache_entries(cache).size(), 1u);
  // The plan mode is part of the key: naive gets its own entry.
  run_call(case_file(c, "model.pt2"), c, 0, "n", {"--cache-dir", cache, "--plan-mode", "naive"});
  EXPECT_EQ(cache_entries(cache).size(), 2u);
  // And another program gets its own entry.
  const std::string other = "kv_cache_reads_old_state.default";
  run_call(case_file(other, "model.pt2"), other, 0, "o", {"--cache-dir", cache});
  EXPECT_EQ(cache_entries(cache).size(), 3u);
}

TEST_F(SpliceCompile, DefaultCacheIsUnderXdgCacheHome) {
  const std::string c = "rotary_halves_into_empty_like.default";
  run_call(case_file(c, "model.pt2"), c, 0, "default");
  EXPECT_EQ(cache_entries(path("xdg") + "/splice").size(), 1u);
}

TEST_F(SpliceCompile, CorruptCacheEntryIsRebuilt) {
  const std::string c = "kv_cache_reads_old_state.default";
  const std::string cache = path("cache");
  const std::string model = case_file(c, "model.pt2");
  run_call(model, c, 0, "first", {"--cache-dir", cache});
  auto entries = cache_entries(cache);
  ASSERT_EQ(entries.size(), 1u);
  const std::string good = read_bytes(entries[0]);
  ASSERT_GT(good.size(), 200u);

  // A damaged middle, then a truncated file: each run rebuilds the entry and succeeds.
  std::string damaged = good;
  for (size_t i = damaged.size() / 2; i < damaged.size() / 2 + 8; ++i) damaged[i] ^= 0x5a;
  for (const std::string& broken : {damaged, good.substr(0, good.size() / 3)}) {
    write_bytes(entries[0], broken);
    ASSERT_NE(cli({"inspect", "--plan", entries[0]}).exit_code, 0) << "the entry is not broken";
    std::string out = run_call(model, c, 0, "rebuilt", {"--cache-dir", cache});
    if (HasFailure()) return;
    EXPECT_EQ(last_.err, "") << "a rebuilt entry is no reason to warn";
    expect_close_tensors(read_tensors(out), read_tensors(case_file(c, "call0.outputs.safetensors")),
                         "after a rebuild");
    EXPECT_EQ(cache_entries(cache), entries);
    EXPECT_TRUE(read_bytes(entries[0]) == good) << "the entry was not rebuilt";
    Outcome o = cli({"inspect", "--plan", entries[0]});
    EXPECT_EQ(o.exit_code, 0) << describe(o);
  }
}

TEST_F(SpliceCompile, NoCacheWritesNothing) {
  const std::string c = "kv_cache_reads_old_state.default";
  const std::string cache = path("cache");
  std::string out =
      run_call(case_file(c, "model.pt2"), c, 0, "nocache", {"--cache-dir", cache, "--no-cache"});
  run_call(case_file(c, "model.pt2"), c, 1, "nocache", {"--no-cache"});
  if (HasFailure()) return;
  expect_close_tensors(read_tensors(out), read_tensors(case_file(c, "call0.outputs.safetensors")),
                       "--no-cache");
  EXPECT_FALSE(fs::exists(cache));
  EXPECT_FALSE(fs::exists(path("xdg")));
}

TEST_F(SpliceCompile, UnwritableCacheFallsBackToPlanningInMemory) {
  // A cache that cannot be written only costs the planning time (src/runtime/api.cc), with a
  // warning: here the cache folder is a regular file.
  const std::string c = "rotary_halves_into_empty_like.default";
  std::string file = write("not_a_folder", "x");
  std::string out = run_call(case_file(c, "model.pt2"), c, 0, "fallback", {"--cache-dir", file});
  if (HasFailure()) return;
  EXPECT_NE(last_.err.find("warning: engine cache not used"), std::string::npos) << describe(last_);
  EXPECT_NE(last_.err.find(file), std::string::npos) << "names the cache path\n" << describe(last_);
  expect_close_tensors(read_tensors(out), read_tensors(case_file(c, "call0.outputs.safetensors")),
                       "planned in memory");
  EXPECT_EQ(read_bytes(file), "x");
  EXPECT_FALSE(fs::exists(path("xdg")));
}

// ---- damaged and foreign engine files ----

class SpliceEngineErrors : public SpliceCompile {
 protected:
  const std::string case_ = "rotary_halves_into_empty_like.default";
  // Compiles the case, lets `damage` change the bytes, and returns the damaged file's path.
  std::string damaged_engine(const std::function<void(std::string&)>& damage) {
    std::string bytes = read_bytes(compile(case_));
    damage(bytes);
    std::string broken = path("broken.splice");
    write_bytes(broken, bytes);
    return broken;
  }
  std::vector<std::string> run_args(const std::string& engine) const {
    return {"run", engine, "--inputs", case_file(case_, "call0.inputs.safetensors")};
  }
  // "written by splice V (engine format F), but this is splice ... (engine format ...)".
  static std::string version_message(const std::string& version, uint32_t format) {
    return "written by splice " + version + " (engine format " + std::to_string(format) +
           "), but this is splice " + std::string(plan::kSpliceVersion) + " (engine format " +
           std::to_string(plan::kPlanFormatVersion) +
           "); recompile the model with `splice compile`";
  }
};

TEST_F(SpliceEngineErrors, FlippedByteFailsTheChecksum) {
  std::string engine = damaged_engine([](std::string& b) { b[b.size() / 2] ^= 0x01; });
  expect_user_error(run_args(engine),
                    {"engine file '" + engine + "'", "checksum mismatch", "the file is corrupt"});
  // inspect reads the same file the same way.
  expect_user_error({"inspect", "--plan", engine}, {"checksum mismatch"});
}

TEST_F(SpliceEngineErrors, TruncatedEngine) {
  size_t full = 0;
  std::string engine = damaged_engine([&](std::string& b) {
    full = b.size();
    b.resize(b.size() - 100);
  });
  expect_user_error(run_args(engine),
                    {"engine file '" + engine + "'",
                     "truncated or corrupt: the file has " + std::to_string(full - 100) +
                         " bytes but its sections end at byte " + std::to_string(full)});
  // Cut inside the header (after the magic, so it is still taken for an engine file).
  engine = damaged_engine([](std::string& b) { b.resize(60); });
  expect_user_error(run_args(engine), {"truncated: 60 bytes, fewer than the 120-byte header"});
}

TEST_F(SpliceEngineErrors, OtherFormatVersion) {
  // Offset 8: the format version, a little-endian u32.
  const uint32_t other = plan::kPlanFormatVersion + 1;
  std::string engine = damaged_engine([&](std::string& b) {
    for (int i = 0; i < 4; ++i) b[8 + i] = static_cast<char>((other >> (8 * i)) & 0xff);
  });
  expect_user_error(run_args(engine), {"engine file '" + engine + "'",
                                       version_message(std::string(plan::kSpliceVersion), other)});
}

TEST_F(SpliceEngineErrors, OtherSpliceVersion) {
  // Offset 16: the splice version, 16 bytes NUL-padded.
  std::string engine = damaged_engine(
      [](std::string& b) { b.replace(16, 16, std::string("0.0.1") + std::string(11, '\0')); });
  expect_user_error(run_args(engine), {"engine file '" + engine + "'",
                                       version_message("0.0.1", plan::kPlanFormatVersion)});
}

TEST_F(SpliceEngineErrors, CompileErrors) {
  const std::string model = case_file(case_, "model.pt2");
  std::string missing = path("missing.pt2");
  expect_user_error({"compile", missing, "-o", path("x.splice")},
                    {"cannot open '" + missing + "'"});
  expect_user_error({"compile", model}, {"--output is required"});
  expect_user_error({"compile", "-o", path("x.splice")}, {"model is required"});
  // An engine is not a .pt2: compile does not take one.
  std::string engine = compile(case_);
  Outcome o = cli({"compile", engine, "-o", path("again.splice")});
  EXPECT_EQ(o.exit_code, 2) << describe(o);
  // An output that cannot be written names it and leaves no temporary file behind.
  fs::create_directories(path("a_folder"));
  expect_user_error({"compile", model, "-o", path("a_folder")}, {path("a_folder")});
  expect_user_error({"compile", model, "-o", path("no_such_dir/x.splice")},
                    {path("no_such_dir/x.splice")});
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
  EXPECT_FALSE(fs::exists(path("x.splice")));
}

TEST_F(SpliceEngineErrors, BadPlanMode) {
  const std::string model = case_file(case_, "model.pt2");
  const std::string message = "--plan-mode: fast not in {planned,naive}";
  expect_user_error({"compile", model, "-o", path("x.splice"), "--plan-mode", "fast"}, {message});
  expect_user_error({"run", model, "--plan-mode", "fast"}, {message});
  expect_user_error({"inspect", "--plan", model, "--plan-mode", "fast"}, {message});
  EXPECT_FALSE(fs::exists(path("x.splice")));
}

}  // namespace
}  // namespace splice::test
