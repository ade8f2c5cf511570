// Tests for support/shared_library.h: a library opened by soname (libm, there on every Linux),
// its symbols resolved into a typed table with the first missing name kept, and a library that
// is not there reported with the loader's reason instead of opened.
#include "support/shared_library.h"

#include <gtest/gtest.h>

#include <string>

namespace splice {
namespace {

TEST(SharedLibrary, OpensBySonameAndResolvesTypedSymbols) {
  std::string reason;
  void* libm = open_shared_library("libm.so.6", "", reason);
  ASSERT_NE(libm, nullptr) << reason;
  double (*cosine)(double) = nullptr;
  double (*nothing)(double) = nullptr;
  std::string missing;
  resolve_symbol(libm, "cos", cosine, missing);
  EXPECT_TRUE(missing.empty());
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  resolve_symbol(libm, "splice_no_such_symbol", nothing, missing);
  resolve_symbol(libm, "splice_nor_this_one", nothing, missing);
  EXPECT_EQ(nothing, nullptr);
  EXPECT_EQ(missing, "splice_no_such_symbol") << "the first missing name is the one kept";
}

TEST(SharedLibrary, AMissingLibraryIsNullWithTheLoadersReason) {
  std::string reason;
  EXPECT_EQ(open_shared_library("libsplice_no_such_library.so.1", "/nonexistent/", reason),
            nullptr);
  EXPECT_NE(reason.find("libsplice_no_such_library.so.1"), std::string::npos) << reason;
}

}  // namespace
}  // namespace splice
