// The CLI's command boundary (tools/splice/guard.h): every exception that escapes a command
// becomes an Error with its exit code; running out of memory is exit 2 and says so (issue 34
// item 2: the CLI once ended in std::bad_alloc, SIGABRT and exit 134).
#include "tools/splice/guard.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace splice::tools {
namespace {

TEST(CommandGuard, ResultsPassThrough) {
  EXPECT_TRUE(run_guarded([]() -> Result<void> { return ok_result(); }).ok());
  Result<void> r = run_guarded(
      []() -> Result<void> { return make_error(ErrorKind::kBadInput, "no such input"); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "no such input");
}

TEST(CommandGuard, OutOfMemoryIsExitTwoAndSaysSo) {
  Result<void> r = run_guarded([]() -> Result<void> { throw std::bad_alloc(); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 2);
  EXPECT_EQ(r.error().message(), "out of memory (std::bad_alloc)");
  // A container asked for more than it can hold.
  r = run_guarded([]() -> Result<void> {
    std::vector<double> v;
    v.reserve(v.max_size() + 1);
    return ok_result();
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 2);
  EXPECT_EQ(r.error().message().rfind("out of memory: a size too large to allocate", 0), 0u)
      << r.error().message();
}

TEST(CommandGuard, OtherExceptionsAreInternalErrors) {
  Result<void> r = run_guarded([]() -> Result<void> { throw std::runtime_error("boom"); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 1);
  EXPECT_EQ(r.error().message(), "unexpected exception: boom");
  r = run_guarded([]() -> Result<void> { throw 42; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 1);
  EXPECT_EQ(r.error().message(), "unexpected exception of an unknown type");
}

}  // namespace
}  // namespace splice::tools
