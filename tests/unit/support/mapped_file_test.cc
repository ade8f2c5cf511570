// Tests for MappedFile: contents, empty files, and the errors for missing files and
// directories.
#include "support/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include "tests/unit/temp_dir_test_base.h"

namespace splice {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class MappedFileTest : public splice::testing::TempDirTest {};

TEST_F(MappedFileTest, MapsWholeFile) {
  std::string contents = "hello, mapped world";
  contents.push_back('\0');
  contents += "\xff\x01";
  auto file = MappedFile::open(write("a.bin", contents));
  ASSERT_TRUE(file.ok()) << file.error().message();
  std::span<const std::byte> bytes = (*file)->bytes();
  ASSERT_EQ(bytes.size(), 22u);
  EXPECT_EQ((*file)->size(), 22u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), contents);
  // The map starts on a page boundary.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % 4096, 0u);
}

TEST_F(MappedFileTest, EmptyFileIsEmptySpan) {
  auto file = MappedFile::open(write("empty.bin", ""));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_TRUE((*file)->bytes().empty());
  EXPECT_EQ((*file)->size(), 0u);
}

TEST_F(MappedFileTest, BytesOutliveTheFileName) {
  std::string path = write("gone.bin", "still here");
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message();
  fs::remove(path);
  std::span<const std::byte> bytes = (*file)->bytes();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "still here");
}

TEST_F(MappedFileTest, MissingFileIsIoErrorNamingPathAndReason) {
  std::string path = (dir_ / "missing.pt2").string();
  auto file = MappedFile::open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(file.error().message(), "cannot open '" + path + "': No such file or directory");
}

TEST_F(MappedFileTest, DirectoryIsRefused) {
  auto file = MappedFile::open(dir_.string());
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().kind(), ErrorKind::kIo);
  EXPECT_EQ(file.error().message(),
            "cannot read '" + dir_.string() + "': it is a folder, not a regular file");
}

}  // namespace
}  // namespace splice
