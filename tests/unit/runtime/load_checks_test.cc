// What Model::load refuses before anything runs (issue 34, items 6 and 7): mutation outputs
// whose value does not fit the buffer or input they mutate, static sizes that overflow int64
// or exceed splice's 2^44-byte limit, and size symbols with no valid value. The CLI's side is
// tests/fixtures/corrupt/expectations.txt (tests/unit/tools/cli_test.cc) and
// tests/unit/tools/limits_test.cc.
#include <gtest/gtest.h>

#include <string_view>

#include "ir/parser.h"
#include "runtime/executor.h"
#include "splice/splice.h"
#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

const std::string kCorrupt = SPLICE_SOURCE_DIR "/tests/fixtures/corrupt/";

void expect_load_error(const std::string& path, const std::string& message) {
  auto model = Model::load(path);
  ASSERT_FALSE(model.ok()) << path;
  EXPECT_EQ(model.error().kind(), ErrorKind::kBadArchive) << model.error().message();
  EXPECT_EQ(model.error().message(), path + ": " + message);
}

TEST(LoadChecks, MutationOutputsMustFitWhatTheyMutate) {
  expect_load_error(kCorrupt + "buffer_mutation_misfit.pt2",
                    "signature output 0 (buffer_mutation \"cache\"): its value %k is "
                    "f32[1, 2, 1, 4], but the input it mutates, %b_cache, is f32[1, 2, 8, 4]");
  expect_load_error(kCorrupt + "user_input_mutation_misfit.pt2",
                    "signature output 0 (user_input_mutation \"k\"): its value %index_put is "
                    "f32[1, 2, 8, 4], but the input it mutates, %k, is f32[1, 2, 1, 4]");
}

// Through Model::load and Model::compile alike: nothing is written for a refused archive.
class LoadChecksCompile : public testing::TempDirTest {};

TEST_F(LoadChecksCompile, StaticSizesPastTheLimitAndSizeSymbolsWithNoValue) {
  const std::pair<std::string, std::string> cases[] = {
      {"expand_overflow.pt2",
       "value %expand is f32[3, 4611686018427387904, 5]: its size in bytes overflows int64"},
      {"repeat_48_tib.pt2",
       "value %repeat is f32[4194304, 3145728]: 52776558133248 bytes, more than splice's limit "
       "of 2^44 bytes (16 TiB) for one tensor"},
      {"negative_size_symbol.pt2",
       "symbol s77 is a size of %x but its range [-10, -2] holds no size (every value is "
       "negative)"},
  };
  for (const auto& [file, message] : cases) {
    expect_load_error(kCorrupt + file, message);
    const std::string engine = (dir_ / "out.splice").string();
    auto compiled = Model::compile(kCorrupt + file, engine);
    ASSERT_FALSE(compiled.ok()) << file;
    EXPECT_EQ(compiled.error().message(), kCorrupt + file + ": " + message);
    EXPECT_FALSE(std::filesystem::exists(engine));
  }
}

// Five intermediates of 8 TiB each (the expanded view is free): the naive plan fuses nothing and
// gives each its own buffer, which a session holds for the whole call: 40 TiB at once, though
// no tensor alone passes the limit.
constexpr std::string_view kStaticPeak = R"(signature {
  input %x: user_input
  output 0: user_output
}
graph(%x: f32[1]) {
  %e: f32[2199023255552] = aten.expand.default(%x, [2199023255552])
  %a: f32[2199023255552] = aten.add.Tensor(%e, %e)
  %b: f32[2199023255552] = aten.mul.Tensor(%e, %e)
  %c: f32[2199023255552] = aten.sub.Tensor(%e, %e)
  %d: f32[2199023255552] = aten.add.Tensor(%a, %b)
  %f: f32[2199023255552] = aten.add.Tensor(%d, %c)
  %g: f32[] = aten.sum.default(%f)
  return (%g)
}
)";

TEST(LoadChecks, AStaticPlanPeakPastTheLimitIsRefused) {
  auto program = ir::parse_program(kStaticPeak);
  ASSERT_TRUE(program.ok()) << program.error().message();
  runtime::PrepareOptions options;
  options.mode = PlanMode::kNaive;
  auto model = runtime::prepare(std::move(*program), options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(model.error().message(),
            "the plan holds 43980465111040 bytes of intermediates at once, more than splice's "
            "limit of 2^44 bytes (16 TiB)");
}

}  // namespace
}  // namespace splice
