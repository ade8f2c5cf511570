// `splice inspect` on the corrupted archives of tests/fixtures/corrupt (made by make_corrupt.py):
// each must end with the exit code and the message that expectations.txt gives for it, within
// 20 seconds, and never crash. One test per fixture; another checks that every fixture has an
// expectation.
//
// A line may end with `pending:CASE`: the corruption is a recorded size that only a run can
// refute (the loader keeps it as a shape check for when the symbols are bound). While `inspect`
// accepts such an archive, the test runs it on CASE's recorded inputs instead, and the run must
// fail with the same exit code and message (the node's name). Issue 12's reproduction must
// fail at inspect, compile and run alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/unit/temp_dir_test_base.h"
#include "tests/unit/tools/cli_test_util.h"

namespace splice::test {
namespace {

const std::string kFixtureDir = SPLICE_SOURCE_DIR "/tests/fixtures/corrupt";

struct Expectation {
  std::string file;
  int exit_code = 0;
  std::string substring;
  std::string pending_case;  // empty unless the line is marked pending:CASE
};

// gtest prints a test's parameter in its name; the file says which fixture it is.
void PrintTo(const Expectation& e, std::ostream* os) { *os << e.file; }

// Parsed at static-initialisation time (gtest needs the parameters then); a malformed line
// becomes an expectation that fails with the line's text.
std::vector<Expectation> read_expectations() {
  std::vector<Expectation> result;
  std::ifstream in(kFixtureDir + "/expectations.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t')) fields.push_back(field);
    Expectation e;
    e.file = fields[0];
    if (fields.size() < 3 || fields.size() > 4) {
      e.exit_code = -1;
      e.substring = "malformed expectations line: " + line;
    } else {
      e.exit_code = std::atoi(fields[1].c_str());
      e.substring = fields[2];
      if (fields.size() == 4) {
        if (fields[3].starts_with("pending:"))
          e.pending_case = fields[3].substr(8);
        else
          e.exit_code = -1, e.substring = "bad fourth field: " + line;
      }
    }
    result.push_back(std::move(e));
  }
  return result;
}

class CorruptArchive : public ::testing::TestWithParam<Expectation> {};

TEST_P(CorruptArchive, InspectFailsWithTheDocumentedError) {
  const Expectation& e = GetParam();
  ASSERT_NE(e.exit_code, -1) << e.substring;
  std::string path = kFixtureDir + "/" + e.file;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  Outcome o = run_splice({"inspect", path});
  ASSERT_FALSE(o.timed_out) << describe(o);
  if (!e.pending_case.empty() && o.exit_code == 0) {
    std::cout << "[ pending  ] the loader accepts " << e.file
              << "; checking that `splice run` rejects it\n";
    std::string inputs = kCasesDir + "/" + e.pending_case + "/call0.inputs.safetensors";
    o = run_splice({"run", path, "--inputs", inputs});
    ASSERT_FALSE(o.timed_out) << describe(o);
  }
  EXPECT_EQ(o.exit_code, e.exit_code) << describe(o);
  EXPECT_NE(o.err.find(e.substring), std::string::npos)
      << "expected '" << e.substring << "' in stderr\n"
      << describe(o);
  // Errors are one line starting "splice: error:" (a crash or an exception would not be).
  EXPECT_TRUE(o.err.starts_with("splice: error: ")) << describe(o);
  // The archive's path is named once, not once per layer that adds context.
  size_t first = o.err.find(path);
  EXPECT_TRUE(first == std::string::npos || o.err.find(path, first + 1) == std::string::npos)
      << describe(o);
}

std::string fixture_test_name(const ::testing::TestParamInfo<Expectation>& info) {
  std::string name = info.param.file.substr(0, info.param.file.find('.'));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name.empty() ? "line" + std::to_string(info.index) : name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CorruptArchive, ::testing::ValuesIn(read_expectations()),
                         fixture_test_name);

TEST(CorruptArchiveList, EveryFixtureHasOneExpectation) {
  std::set<std::string> listed;
  for (const auto& e : read_expectations())
    EXPECT_TRUE(listed.insert(e.file).second) << e.file << " is listed twice";
  std::set<std::string> present;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDir))
    if (entry.path().extension() == ".pt2") present.insert(entry.path().filename().string());
  EXPECT_EQ(listed, present);
  EXPECT_GE(present.size(), 17u);
}

// The source archives the fixtures derive from load, so each fixture's failure comes from its
// corruption.
TEST(CorruptArchiveList, SourcesAreValid) {
  for (const char* c :
       {"slice_scatter_basic.default", "slice_scatter_basic.keep", "select_scatter_last.keep",
        "kv_cache_index_copy.default", "add_broadcast_dynamic.default"}) {
    Outcome o = run_splice({"inspect", kCasesDir + "/" + c + "/model.pt2", "--no-graph"});
    EXPECT_EQ(o.exit_code, 0) << c << ": " << describe(o);
  }
}

// Issue 12: `slice_scatter(mul(x, 1), s, 1, 2, 7)` with mul's recorded size edited to [6, 9].
// Every command that loads it refuses it with exit 2, naming the node, what was recorded and
// what the op gives — before anything runs.
class Issue12Reproduction : public splice::testing::TempDirTest {};

TEST_F(Issue12Reproduction, InspectCompileAndRunAllExitTwoNamingTheNode) {
  const std::string archive = kFixtureDir + "/mul_size_edited.pt2";
  const std::string inputs = kFixtureDir + "/mul_size_edited.inputs.safetensors";
  const std::string expected =
      "node 'mul' (aten.mul.Tensor): output 'mul' is recorded as f32[6, 9], but the op gives "
      "f32[6, 10]";
  const Environment env = {{"XDG_CACHE_HOME", (dir_ / "xdg").string()}};
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", archive},
      {"compile", archive, "-o", (dir_ / "model.splice").string()},
      {"run", archive, "--inputs", inputs},
      {"run", archive, "--inputs", inputs, "--no-cache", "--outputs",
       (dir_ / "out.safetensors").string()},
  };
  for (const auto& args : commands) {
    Outcome o = run_program(kSpliceBinary, args, std::chrono::seconds(20), env);
    EXPECT_EQ(o.exit_code, 2) << args[0] << ": " << describe(o);
    EXPECT_NE(o.err.find(expected), std::string::npos) << args[0] << ": " << describe(o);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "model.splice"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.safetensors"));
}

// A recorded size only the bound symbols can refute: the run stops with exit 2 before any
// kernel when they refute it, and runs when they agree (s77 = 6 in call1).
TEST_F(Issue12Reproduction, ShapeChecksRunWhenTheSymbolsAreBound) {
  const std::string archive = kFixtureDir + "/add_size_recorded_static.pt2";
  const Environment env = {{"XDG_CACHE_HOME", (dir_ / "xdg").string()}};
  Outcome inspect = run_program(kSpliceBinary, {"inspect", archive}, std::chrono::seconds(20), env);
  EXPECT_EQ(inspect.exit_code, 0) << describe(inspect);
  EXPECT_NE(inspect.out.find("checks {\n  \"6 == s77\""), std::string::npos) << inspect.out;
  const std::string engine = (dir_ / "model.splice").string();
  Outcome compile =
      run_program(kSpliceBinary, {"compile", archive, "-o", engine}, std::chrono::seconds(20), env);
  ASSERT_EQ(compile.exit_code, 0) << describe(compile);
  for (const std::string& model : {archive, engine}) {
    Outcome bad =
        run_program(kSpliceBinary,
                    {"run", model, "--inputs",
                     kCasesDir + "/add_broadcast_dynamic.default/call0.inputs.safetensors"},
                    std::chrono::seconds(20), env);
    EXPECT_EQ(bad.exit_code, 2) << describe(bad);
    EXPECT_NE(bad.err.find("output 'add' is recorded as f32[6, 4], but the op gives f32[s77, 4] "
                           "(dim 0) (with s77 = 2)"),
              std::string::npos)
        << describe(bad);
    Outcome good =
        run_program(kSpliceBinary,
                    {"run", model, "--inputs",
                     kCasesDir + "/add_broadcast_dynamic.default/call1.inputs.safetensors"},
                    std::chrono::seconds(20), env);
    EXPECT_EQ(good.exit_code, 0) << describe(good);
  }
}

// The runner's deadline works, so a hanging fixture fails instead of stalling the suite.
TEST(CorruptArchiveList, RunnerKillsAChildPastItsDeadline) {
  auto start = std::chrono::steady_clock::now();
  Outcome o = run_program("/bin/sleep", {"30"}, std::chrono::seconds(1));
  EXPECT_TRUE(o.timed_out);
  EXPECT_EQ(o.exit_code, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace splice::test
