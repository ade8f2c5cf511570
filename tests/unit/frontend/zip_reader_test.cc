// Tests for ZipArchive over the committed fixtures in tests/fixtures/zip (written by
// make_fixtures.py): contents byte for byte, which entries are zero-copy, ZIP64, and the error
// kind and message of every malformed archive.
#include "frontend/pt2/zip_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include "tests/unit/temp_dir_test_base.h"

namespace splice::pt2 {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(SPLICE_SOURCE_DIR) + "/tests/fixtures/zip/" + name;
}

// make_fixtures.py's weight(n, seed): byte i is (i * 7 + seed) % 256.
std::string weight(size_t n, int seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + seed) % 256);
  return out;
}

const std::string kModelJson = "{\"schema_version\": {\"major\": 8, \"minor\": 17}}\n";

std::string text() {
  std::string out;
  for (int i = 0; i < 40; ++i) out += "The quick brown fox jumps over the lazy dog.\n";
  return out;
}

std::string as_string(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

ZipArchive open_ok(const std::string& name) {
  auto archive = ZipArchive::open(fixture(name));
  EXPECT_TRUE(archive.ok()) << archive.error().message();
  if (!archive.ok()) std::abort();
  return std::move(*archive);
}

std::vector<std::string> names(const ZipArchive& archive) {
  std::vector<std::string> out;
  for (const ZipEntry& entry : archive.entries()) out.push_back(entry.name);
  return out;
}

// Reads `name`, checks its contents and whether it was zero-copy, and that the buffer is
// 64-byte aligned either way.
void expect_entry(const ZipArchive& archive, const std::string& name, const std::string& expected,
                  bool zero_copy) {
  SCOPED_TRACE(name);
  const ZipEntry* entry = archive.find(name);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->size, expected.size());
  auto data = archive.read(*entry);
  ASSERT_TRUE(data.ok()) << data.error().message();
  EXPECT_EQ(as_string(data->bytes()), expected);
  EXPECT_EQ(data->zero_copy(), zero_copy);
  ASSERT_NE(data->owner(), nullptr);
  if (zero_copy) {
    EXPECT_EQ(data->owner().get(), static_cast<const void*>(archive.file().get()));
  }
  if (!expected.empty()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data->bytes().data()) % 64, 0u);
  }
}

void expect_open_error(const std::string& name, ErrorKind kind, const std::string& substring) {
  SCOPED_TRACE(name);
  auto archive = ZipArchive::open(fixture(name));
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().kind(), kind);
  EXPECT_NE(archive.error().message().find(substring), std::string::npos)
      << archive.error().message();
}

void expect_read_error(const std::string& fixture_name, const std::string& entry_name,
                       const std::string& substring) {
  SCOPED_TRACE(fixture_name);
  ZipArchive archive = open_ok(fixture_name);
  const ZipEntry* entry = archive.find(entry_name);
  ASSERT_NE(entry, nullptr);
  auto data = archive.read(*entry);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.error().kind(), ErrorKind::kBadArchive);
  EXPECT_NE(data.error().message().find(substring), std::string::npos) << data.error().message();
}

TEST(ZipReaderTest, AlignedStoredEntriesAreZeroCopy) {
  ZipArchive archive = open_ok("aligned_stored.zip");
  EXPECT_EQ(names(archive),
            (std::vector<std::string>{"kv/archive_format", "kv/models/model.json",
                                      "kv/data/weights/weight_0", "kv/data/weights/empty"}));
  for (const ZipEntry& entry : archive.entries()) {
    EXPECT_EQ(entry.method, 0);
    EXPECT_EQ(entry.data_offset % 64, 0u) << entry.name;
    EXPECT_EQ(entry.compressed_size, entry.size);
  }
  expect_entry(archive, "kv/archive_format", "pt2", true);
  expect_entry(archive, "kv/models/model.json", kModelJson, true);
  expect_entry(archive, "kv/data/weights/weight_0", weight(1000, 3), true);
  expect_entry(archive, "kv/data/weights/empty", "", true);
  EXPECT_EQ(archive.find("kv/data/weights/weight_0")->crc32, 0x17bc2a46u);

  auto prefix = archive.archive_prefix();
  ASSERT_TRUE(prefix.ok()) << prefix.error().message();
  EXPECT_EQ(*prefix, "kv/");
  EXPECT_EQ(common_root(archive.entries()), "kv/");
  auto format = archive.read_text("kv/archive_format");
  ASSERT_TRUE(format.ok());
  EXPECT_EQ(format->text(), "pt2");
}

TEST(ZipReaderTest, ZeroCopyBytesOutliveTheArchive) {
  EntryData data(std::span<const std::byte>(), nullptr, false);
  {
    ZipArchive archive = open_ok("aligned_stored.zip");
    auto read = archive.read(*archive.find("kv/data/weights/weight_0"));
    ASSERT_TRUE(read.ok());
    data = *read;
  }
  EXPECT_TRUE(data.zero_copy());
  EXPECT_EQ(as_string(data.bytes()), weight(1000, 3));
}

TEST(ZipReaderTest, UnalignedStoredEntriesAreCopiedAligned) {
  ZipArchive archive = open_ok("unaligned_stored.zip");
  EXPECT_EQ(names(archive),
            (std::vector<std::string>{"models/model.json", "data/weights/weight_0"}));
  for (const ZipEntry& entry : archive.entries()) EXPECT_NE(entry.data_offset % 64, 0u);
  expect_entry(archive, "models/model.json", kModelJson, false);
  expect_entry(archive, "data/weights/weight_0", weight(777, 11), false);
  // No root folder (pre-2025 layout): the prefix is empty, found through models/.
  auto prefix = archive.archive_prefix();
  ASSERT_TRUE(prefix.ok()) << prefix.error().message();
  EXPECT_EQ(*prefix, "");
  EXPECT_EQ(common_root(archive.entries()), "");
}

TEST(ZipReaderTest, DeflatedEntriesAreInflated) {
  ZipArchive archive = open_ok("deflated.zip");
  EXPECT_EQ(names(archive), (std::vector<std::string>{"text.txt", "weight", "empty"}));
  EXPECT_EQ(archive.find("text.txt")->method, 8);
  EXPECT_LT(archive.find("text.txt")->compressed_size, 200u);
  expect_entry(archive, "text.txt", text(), false);
  expect_entry(archive, "weight", weight(3000, 5), false);
  expect_entry(archive, "empty", "", false);
  // Neither archive_format nor models/: not a .pt2 layout.
  auto prefix = archive.archive_prefix();
  ASSERT_FALSE(prefix.ok());
  EXPECT_EQ(prefix.error().kind(), ErrorKind::kBadArchive);
  EXPECT_NE(prefix.error().message().find("no 'archive_format' entry and no 'models/' folder"),
            std::string::npos);
}

TEST(ZipReaderTest, Zip64LocalHeaders) {
  ZipArchive archive = open_ok("zip64_local.zip");
  EXPECT_EQ(names(archive), (std::vector<std::string>{"big/weight", "big/text.txt"}));
  expect_entry(archive, "big/weight", weight(2048, 1), false);
  expect_entry(archive, "big/text.txt", text(), false);
  EXPECT_EQ(common_root(archive.entries()), "big/");
}

TEST(ZipReaderTest, Zip64EndRecordAndExtraFields) {
  ZipArchive archive = open_ok("zip64_full.zip");
  EXPECT_EQ(names(archive), (std::vector<std::string>{"a/weight", "a/text.txt"}));
  const ZipEntry* weight_entry = archive.find("a/weight");
  ASSERT_NE(weight_entry, nullptr);
  EXPECT_EQ(weight_entry->size, 500u);
  EXPECT_EQ(weight_entry->compressed_size, 500u);
  expect_entry(archive, "a/weight", weight(500, 9), weight_entry->data_offset % 64 == 0);
  expect_entry(archive, "a/text.txt", text(), false);
}

TEST(ZipReaderTest, CommentAfterEndRecord) {
  ZipArchive archive = open_ok("comment.zip");
  EXPECT_EQ(names(archive), (std::vector<std::string>{"models/model.json"}));
  auto json = archive.read_text("models/model.json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->text(), kModelJson);
}

TEST(ZipReaderTest, FindAndReadTextOfMissingEntry) {
  ZipArchive archive = open_ok("aligned_stored.zip");
  EXPECT_EQ(archive.find("kv/models"), nullptr);
  EXPECT_EQ(archive.find(""), nullptr);
  auto missing = archive.read_text("kv/models/other.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(missing.error().message(), "bad archive: archive has no entry 'kv/models/other.json'");
}

TEST(ZipReaderTest, HandBuiltEntryOutsideTheFileIsRefused) {
  ZipArchive archive = open_ok("aligned_stored.zip");
  ZipEntry entry = *archive.find("kv/data/weights/weight_0");
  entry.data_offset = archive.file()->size() - 10;
  auto data = archive.read(entry);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.error().kind(), ErrorKind::kBadArchive);
  EXPECT_NE(data.error().message().find("1000 bytes at offset"), std::string::npos);
  entry.data_offset = UINT64_MAX - 5;  // offset + size overflows
  EXPECT_FALSE(archive.read(entry).ok());
}

TEST(ZipReaderTest, TruncatedArchive) {
  expect_open_error("truncated.zip", ErrorKind::kBadArchive,
                    "not a zip archive: no end-of-central-directory record in the last 1035 "
                    "bytes of the 1035-byte file");
}

TEST(ZipReaderTest, RandomBytes) {
  expect_open_error("random.bin", ErrorKind::kBadArchive,
                    "not a zip archive: no end-of-central-directory record");
}

TEST(ZipReaderTest, CentralDirectorySizeLargerThanFile) {
  expect_open_error("cd_size_too_large.zip", ErrorKind::kBadArchive,
                    "bad archive: central directory of 2147483632 bytes at offset");
  expect_open_error("cd_size_too_large.zip", ErrorKind::kBadArchive, "(file size 1073)");
}

TEST(ZipReaderTest, CentralDirectoryOffsetPastEnd) {
  expect_open_error(
      "cd_offset_past_end.zip", ErrorKind::kBadArchive,
      "bad archive: central directory offset 123456 is past the end of the 1073-byte file");
}

TEST(ZipReaderTest, MoreEntriesThanTheDirectoryHolds) {
  expect_open_error("too_many_entries.zip", ErrorKind::kBadArchive,
                    "end-of-central-directory record claims 1000 entries but the");
}

TEST(ZipReaderTest, BadLocalHeaderSignature) {
  expect_open_error("bad_local_header.zip", ErrorKind::kBadArchive,
                    "entry 'data/weights/weight_0': no local file header at offset 93 "
                    "(signature 0x08074b50)");
}

TEST(ZipReaderTest, DuplicateNamesAreRefused) {
  expect_open_error("duplicate_name.zip", ErrorKind::kBadArchive,
                    "entry 'models/model.json' appears more than once");
}

TEST(ZipReaderTest, UnsupportedMethodNamesEntryAndMethod) {
  expect_read_error("method_bzip2.zip", "data/weights/weight_0",
                    "entry 'data/weights/weight_0' uses compression method 12");
  // The other entries of the archive stay readable.
  ZipArchive archive = open_ok("method_bzip2.zip");
  expect_entry(archive, "models/model.json", kModelJson, false);
}

TEST(ZipReaderTest, CrcMismatchOnCopiedEntry) {
  expect_read_error("crc_mismatch.zip", "data/weights/weight_0",
                    "entry 'data/weights/weight_0' has CRC-32 0x");
}

TEST(ZipReaderTest, DeflateShorterThanDeclared) {
  expect_read_error("deflate_size_short.zip", "text.txt",
                    "entry 'text.txt' inflates to 1800 bytes but declares 1801");
}

TEST(ZipReaderTest, DeflateLongerThanDeclared) {
  expect_read_error("deflate_size_long.zip", "text.txt",
                    "entry 'text.txt' inflates to more than its declared 1799 bytes");
}

TEST(ZipReaderTest, DeflateOverSizeLimit) {
  expect_read_error("zip64_huge_deflate.zip", "a/text.txt",
                    "deflated entry 'a/text.txt' declares 18253611008 bytes, more than the "
                    "17179869184-byte limit");
}

// Issue 34: JSON entries are capped far below kMaxInflatedSize (the text becomes a tree several
// times its size), checked from the directory before a byte is inflated.
TEST(ZipReaderTest, ReadTextRefusesEntriesOverTheJsonCap) {
  ZipArchive archive = open_ok("zip64_huge_deflate.zip");
  auto text = archive.read_text("a/text.txt");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(text.error().message(),
            "bad archive: entry 'a/text.txt' is 18253611008 bytes, more than the 268435456-byte "
            "(256 MiB) limit for a JSON entry");
  static_assert(ZipArchive::kMaxTextSize > 47'000'000 * 4, "SmolVLA's model.json must load");
}

class ZipReaderTempFileTest : public splice::testing::TempDirTest {};

TEST_F(ZipReaderTempFileTest, EmptyFileIsRejected) {
  auto archive = ZipArchive::open(write("empty.pt2", ""));
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().kind(), ErrorKind::kBadArchive);
  EXPECT_NE(archive.error().message().find("not a zip archive: the file is 0 bytes, smaller "
                                           "than the 22-byte end-of-central-directory record"),
            std::string::npos)
      << archive.error().message();
}

TEST_F(ZipReaderTempFileTest, TenByteFileIsRejected) {
  std::string path = write("ten.pt2",
                           "PK\x05\x06"
                           "abcdef");
  auto archive = ZipArchive::open(path);
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().kind(), ErrorKind::kBadArchive);
  EXPECT_EQ(archive.error().message(), path +
                                           ": not a zip archive: the file is 10 bytes, smaller "
                                           "than the 22-byte end-of-central-directory record");
}

TEST_F(ZipReaderTempFileTest, MissingFileIsIoError) {
  auto archive = ZipArchive::open((dir_ / "missing.pt2").string());
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().kind(), ErrorKind::kIo);
}

TEST(ZipReaderTest, CommonRoot) {
  auto entries = [](std::vector<std::string> names) {
    std::vector<ZipEntry> out;
    for (std::string& name : names) out.push_back(ZipEntry{.name = std::move(name)});
    return out;
  };
  EXPECT_EQ(common_root(entries({})), "");
  EXPECT_EQ(common_root(entries({"a/b/x", "a/b/y"})), "a/b/");
  EXPECT_EQ(common_root(entries({"a/bc", "a/bd"})), "a/");
  EXPECT_EQ(common_root(entries({"kv/a/x", "kv/b"})), "kv/");
  EXPECT_EQ(common_root(entries({"ab/x", "ac/y"})), "");
  EXPECT_EQ(common_root(entries({"x"})), "");
  EXPECT_EQ(common_root(entries({"kv/x", "kvx/y"})), "");
}

}  // namespace
}  // namespace splice::pt2
