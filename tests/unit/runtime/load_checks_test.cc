// What Model::load refuses before anything runs (issue 34, items 6 and 7): mutation outputs
// whose value does not fit the buffer or input they mutate, static sizes that overflow int64
// or exceed splice's 2^44-byte limit, and size symbols with no valid value. The CLI's side is
// tests/fixtures/corrupt/expectations.txt (tests/unit/tools/cli_test.cc) and
// tests/unit/tools/limits_test.cc.
#include <gtest/gtest.h>

#include "splice/splice.h"

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

}  // namespace
}  // namespace splice
