// Golden tests of the shape rules and the load-time type check (ir/type_check.h) over
// tests/shape_rules/*.txt. Blocks are separated by `// -----`; a block is `// RUN <label>`, a
// program in the text IR, then one of:
//   // OK              the program verifies and leaves no run-time shape check;
//   // CHECKS          the program verifies; the lines after it are the shape checks it leaves,
//                      as the text IR's checks block prints them (`"cond": "message"`);
//   // ERROR: <text>   verification fails with a kBadArchive error containing <text> (labels
//                      of such blocks start with `invalid_`).
// pytorch_cases.txt is generated from PyTorch's meta functions (tests/shape_rules/generate.py):
// each block's recorded output types are what PyTorch gives, so an OK there is a rule agreeing
// with PyTorch. Comment lines inside the program are skipped.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/type_check.h"
#include "ir/verifier.h"
#include "tests/unit/ir/rule_agreement.h"

namespace splice::ir {
namespace {

namespace fs = std::filesystem;

struct Block {
  std::string file;
  int line = 0;
  std::string label;
  std::string program;
  enum class Expect { kNone, kOk, kChecks, kError } expect = Expect::kNone;
  std::string expected;  // checks text or error substring
};

void PrintTo(const Block& b, std::ostream* os) { *os << b.file << ":" << b.line; }

std::vector<Block> read_blocks(const fs::path& path) {
  std::vector<Block> blocks;
  std::ifstream in(path);
  std::string line;
  int n = 0;
  Block cur;
  bool open = false, in_checks = false;
  auto finish = [&] {
    if (open) blocks.push_back(cur);
    cur = Block{};
    open = in_checks = false;
  };
  while (std::getline(in, line)) {
    ++n;
    if (line == "// -----") {
      finish();
      continue;
    }
    if (line.rfind("// RUN ", 0) == 0) {
      cur.file = path.filename().string();
      cur.line = n;
      cur.label = line.substr(7);
      open = true;
      continue;
    }
    if (!open) continue;
    if (line == "// OK") {
      cur.expect = Block::Expect::kOk;
    } else if (line == "// CHECKS") {
      cur.expect = Block::Expect::kChecks;
      in_checks = true;
    } else if (line.rfind("// ERROR: ", 0) == 0) {
      cur.expect = Block::Expect::kError;
      cur.expected = line.substr(10);
    } else if (in_checks) {
      if (!line.empty()) cur.expected += line + "\n";
    } else if (line.rfind("//", 0) != 0) {
      cur.program += line + "\n";
    }
  }
  finish();
  return blocks;
}

std::vector<Block> all_blocks() {
  std::vector<Block> all;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(SPLICE_SOURCE_DIR) / "tests/shape_rules"))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto more = read_blocks(f);
    all.insert(all.end(), more.begin(), more.end());
  }
  return all;
}

Result<void> verify_block(const Program& p) {
  if (p.signature.inputs.empty() && p.signature.outputs.empty())
    return verify_graph(p.graph, p.ranges);
  return verify(p);
}

class ShapeRuleBlock : public testing::TestWithParam<Block> {};

TEST_P(ShapeRuleBlock, Holds) {
  const Block& b = GetParam();
  SCOPED_TRACE(testing::Message() << b.file << ":" << b.line << " (" << b.label << ")");
  ASSERT_NE(b.expect, Block::Expect::kNone) << "block has no // OK, // CHECKS or // ERROR:";
  auto parsed = parse_program(b.program);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  auto verified = verify_block(*parsed);
  if (b.expect == Block::Expect::kError) {
    EXPECT_EQ(b.label.rfind("invalid_", 0), 0u) << "error blocks are labelled invalid_*";
    ASSERT_FALSE(verified.ok()) << "expected an error";
    EXPECT_EQ(verified.error().kind(), ErrorKind::kBadArchive);
    EXPECT_NE(verified.error().message().find(b.expected), std::string::npos)
        << verified.error().message() << "\nexpected to contain: " << b.expected;
    return;
  }
  ASSERT_TRUE(verified.ok()) << verified.error().message();
  if (b.expect == Block::Expect::kOk) {
    // The rules themselves agree with the recorded types (not only the type check's verdict).
    const std::string differs = test::rule_disagreements(*parsed);
    EXPECT_TRUE(differs.empty()) << differs;
  }
  auto checks = check_types(*parsed);
  ASSERT_TRUE(checks.ok()) << checks.error().message();
  std::string text;
  for (const ShapeCheck& c : *checks)
    text += quote_string(c.condition.to_string()) + ": " + quote_string(c.message) + "\n";
  EXPECT_EQ(text, b.expect == Block::Expect::kOk ? "" : b.expected);
}

std::string block_name(const testing::TestParamInfo<Block>& info) {
  std::string name = info.param.file.substr(0, info.param.file.find('.')) + "_" + info.param.label;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name + "_L" + std::to_string(info.param.line);
}

INSTANTIATE_TEST_SUITE_P(Files, ShapeRuleBlock, testing::ValuesIn(all_blocks()), block_name);

}  // namespace
}  // namespace splice::ir
