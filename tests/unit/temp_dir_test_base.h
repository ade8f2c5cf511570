#pragma once
// A gtest fixture base that gives each test its own scratch folder (made by mkdtemp, so no
// other process or earlier run can own it; removed afterwards) and a helper to write a file
// into it; shared by the tests that need real files on disk.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace splice::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("splice_test_") + info->test_suite_name() + "_" + info->name();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    std::string templ = (std::filesystem::temp_directory_path() / (name + "_XXXXXX")).string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr) << templ << ": " << std::strerror(errno);
    dir_ = templ;
  }
  void TearDown() override {
    // Only the folder mkdtemp made (a fresh name under the temp folder) is removed.
    std::error_code ec;
    if (!dir_.empty() && dir_.filename().string().rfind("splice_test_", 0) == 0 &&
        std::filesystem::equivalent(dir_.parent_path(), std::filesystem::temp_directory_path(), ec))
      std::filesystem::remove_all(dir_, ec);
  }

  // Writes `contents` to `name` inside the scratch folder and returns its path.
  std::string write(const std::string& name, const std::string& contents) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

  std::filesystem::path dir_;
};

}  // namespace splice::testing
