// Golden tests for the passes: every tests/passes/<pass>.txt holds blocks separated by a line
// `// -----`. A block is `// RUN <label>`, an input program in the text IR, then either
// `// CHECK` and the program the pass must print, or `// ERROR: <substring>` (labels of such
// blocks start with `invalid_`), matched against "<error kind>: <message>". Each block runs
// exactly the pass its file names, on a verified input; a rewritten program must verify,
// round-trip through the parser, report `changed` exactly when it differs from the input,
// and be a fixed point of a second run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"

namespace splice::passes {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string pass;
  std::string label;
  std::string file;
  int line = 0;  // of the `// RUN` line
  std::string input;
  std::optional<std::string> expected;  // CHECK text
  std::optional<std::string> error;     // ERROR substring
  std::string format_problem;           // a malformed block, reported by its test
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == ':')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == ':')) ++i;
  return s.substr(i);
}

// Joins lines and drops trailing blank ones; the result ends with one newline.
std::string join_text(const std::vector<std::string>& lines) {
  size_t n = lines.size();
  while (n > 0 && lines[n - 1].empty()) --n;
  std::string out;
  for (size_t i = 0; i < n; ++i) out += lines[i] + "\n";
  return out;
}

std::vector<GoldenCase> read_cases(const fs::path& path) {
  std::vector<GoldenCase> cases;
  std::ifstream in(path);
  std::string line;
  int line_no = 0;
  GoldenCase cur;
  enum class Part { kBefore, kInput, kExpected, kDone } part = Part::kBefore;
  std::vector<std::string> input, expected;
  auto finish = [&] {
    if (part == Part::kBefore) return;  // an empty block (e.g. before the first separator)
    cur.input = join_text(input);
    if (part == Part::kExpected) cur.expected = join_text(expected);
    if (part == Part::kInput) cur.format_problem = "block has neither // CHECK nor // ERROR:";
    cases.push_back(cur);
  };
  const std::string pass = path.stem().string();
  while (std::getline(in, line)) {
    ++line_no;
    if (line == "// -----") {
      finish();
      cur = GoldenCase{};
      part = Part::kBefore;
      input.clear();
      expected.clear();
      continue;
    }
    if (line.rfind("// RUN", 0) == 0) {
      cur.pass = pass;
      cur.file = path.filename().string();
      cur.line = line_no;
      cur.label = trim(line.substr(6));
      if (part != Part::kBefore) cur.format_problem = "two // RUN lines in one block";
      part = Part::kInput;
      continue;
    }
    if (line.rfind("// CHECK", 0) == 0 && part == Part::kInput) {
      part = Part::kExpected;
      continue;
    }
    if (line.rfind("// ERROR:", 0) == 0 && part == Part::kInput) {
      cur.error = trim(line.substr(9));
      part = Part::kDone;
      continue;
    }
    if (part == Part::kBefore) continue;  // comments before // RUN
    // A comment in the input (the text IR itself has none) says what the block tests.
    if (part == Part::kInput && line.rfind("//", 0) == 0) continue;
    if (part == Part::kInput) input.push_back(line);
    if (part == Part::kExpected) expected.push_back(line);
    if (part == Part::kDone && !line.empty() && line.rfind("//", 0) != 0)
      cur.format_problem = "text after // ERROR:";
  }
  finish();
  return cases;
}

fs::path golden_dir() { return fs::path(SPLICE_SOURCE_DIR) / "tests" / "passes"; }

std::vector<fs::path> golden_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(golden_dir()))
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<GoldenCase> all_cases() {
  std::vector<GoldenCase> cases;
  for (const fs::path& file : golden_files()) {
    auto more = read_cases(file);
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

// gtest prints a parameter with this instead of its bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.file << ":" << c.line; }

// A block without a `signature { ... }` tests the graph alone.
Result<void> verify_block(const ir::Program& p) {
  if (p.signature.inputs.empty() && p.signature.outputs.empty())
    return ir::verify_graph(p.graph, p.ranges);
  return ir::verify(p);
}

std::string error_text(const Error& e) {
  return std::string(error_kind_name(e.kind())) + ": " + e.message();
}

class Golden : public testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, Block) {
  const GoldenCase& c = GetParam();
  SCOPED_TRACE(testing::Message() << c.file << ":" << c.line << " (" << c.label << ")");
  ASSERT_TRUE(c.format_problem.empty()) << c.format_problem;
  std::unique_ptr<Pass> pass = find_pass(c.pass);
  ASSERT_NE(pass, nullptr) << "no default pass is called '" << c.pass << "'";

  auto parsed = ir::parse_program(c.input);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  ir::Program program = std::move(*parsed);
  // Passes run on verified programs (run_pipeline verifies first).
  auto input_ok = verify_block(program);
  ASSERT_TRUE(input_ok.ok()) << input_ok.error().message();
  const std::string before = ir::print_program(program);

  auto changed = pass->run(program);
  if (c.error) {
    EXPECT_EQ(c.label.rfind("invalid_", 0), 0u) << "error blocks are labelled invalid_*";
    ASSERT_FALSE(changed.ok()) << "expected an error, got:\n" << ir::print_program(program);
    EXPECT_NE(error_text(changed.error()).find(*c.error), std::string::npos)
        << "error: " << error_text(changed.error()) << "\nexpected to contain: " << *c.error;
    return;
  }
  ASSERT_TRUE(changed.ok()) << error_text(changed.error());
  const std::string after = ir::print_program(program);
  EXPECT_EQ(after, *c.expected);
  EXPECT_EQ(*changed, after != before)
      << "run() must report exactly whether it changed the program";
  auto verified = verify_block(program);
  EXPECT_TRUE(verified.ok()) << verified.error().message();

  auto reparsed = ir::parse_program(after);
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().message();
  EXPECT_EQ(ir::print_program(*reparsed), after);

  // No state between runs, and a second run finds nothing more to do.
  auto again = find_pass(c.pass)->run(program);
  ASSERT_TRUE(again.ok()) << error_text(again.error());
  EXPECT_FALSE(*again);
  EXPECT_EQ(ir::print_program(program), after);
}

std::string case_name(const testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.pass + "_" + info.param.label;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name + "_L" + std::to_string(info.param.line);
}

INSTANTIATE_TEST_SUITE_P(Passes, Golden, testing::ValuesIn(all_cases()), case_name);

TEST(GoldenFiles, EveryDefaultPassHasAFileWithValidAndInvalidBlocks) {
  std::vector<GoldenCase> cases = all_cases();
  for (const auto& pass : default_passes()) {
    SCOPED_TRACE(std::string(pass->name()));
    EXPECT_TRUE(fs::exists(golden_dir() / (std::string(pass->name()) + ".txt")));
    int checks = 0;
    for (const GoldenCase& c : cases) checks += c.pass == pass->name() && c.expected;
    EXPECT_GE(checks, 2);
  }
  for (const fs::path& file : golden_files())
    EXPECT_NE(find_pass(file.stem().string()), nullptr) << file << " names no default pass";
}

// Every op decompose_composites rewrites has a golden block showing what it becomes.
TEST(GoldenFiles, EveryDecompositionHasABlock) {
  std::ifstream in(golden_dir() / "decompose_composites.txt");
  std::stringstream text;
  text << in.rdbuf();
  for (std::string_view target : decomposed_targets())
    EXPECT_NE(text.str().find(" = " + std::string(target) + "("), std::string::npos)
        << target << " has no block in decompose_composites.txt";
  EXPECT_GE(decomposed_targets().size(), 30u);
}

TEST(Pipeline, PassesHaveUniqueNamesAndDescriptions) {
  std::vector<std::string> names;
  for (const auto& pass : default_passes()) {
    EXPECT_FALSE(pass->description().empty()) << pass->name();
    names.emplace_back(pass->name());
  }
  ASSERT_EQ(names.size(), 14u);
  EXPECT_EQ(names.front(), "functionalize");
  EXPECT_EQ(names.back(), "insert_write_casts");
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace splice::passes
