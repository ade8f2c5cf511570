#pragma once
// ZipArchive: a reader for the zip container of .pt2 files, written for untrusted input.
//
// The archive is memory-mapped once. Opening parses the end-of-central-directory record (with
// its ZIP64 locator and record when present), every central-directory entry (with ZIP64 extra
// fields) and every entry's local file header, checking each count, size and offset against the
// file with overflow-safe arithmetic before it is used. After a successful open, every entry's
// data range [data_offset, data_offset + compressed_size) lies inside the file, before the
// central directory.
//
// Reading an entry:
//   - stored (method 0) and 64-byte aligned in the file: the bytes are returned in place from
//     the map (zero_copy() is true; the owner is the MappedFile). The CRC-32 is NOT verified for
//     these: doing so would touch every page of gigabytes of weights at load time.
//   - stored but unaligned: copied into a fresh 64-byte-aligned buffer; CRC-32 verified.
//   - deflate (method 8): inflated into a 64-byte-aligned buffer of exactly the declared size
//     (at most kMaxInflatedSize); a stream that inflates to any other size is refused; CRC-32
//     verified.
//   - any other method, or an encrypted entry: refused, naming the entry and the method.
// Errors are ErrorKind::kBadArchive (a malformed archive) or kIo (the file cannot be read).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"
#include "support/mapped_file.h"

namespace splice::pt2 {

struct ZipEntry {
  std::string name;
  uint64_t data_offset = 0;      // file offset of the entry's (possibly compressed) data
  uint64_t compressed_size = 0;  // bytes at data_offset
  uint64_t size = 0;             // uncompressed size
  uint16_t method = 0;           // 0 = stored, 8 = deflate
  uint16_t flags = 0;            // general purpose bit flags (bit 0 = encrypted)
  uint32_t crc32 = 0;            // CRC-32 of the uncompressed data, from the central directory
};

// The bytes of one entry and whatever keeps them alive (the MappedFile for in-place entries, a
// private aligned buffer otherwise). Copying an EntryData shares the owner.
class EntryData {
 public:
  EntryData(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, bool zero_copy)
      : bytes_(bytes), owner_(std::move(owner)), zero_copy_(zero_copy) {}

  std::span<const std::byte> bytes() const { return bytes_; }
  std::string_view text() const {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }
  // Keeps bytes() valid for as long as it is held (also after the ZipArchive is gone).
  const std::shared_ptr<const void>& owner() const { return owner_; }
  // True when bytes() points into the file's memory map (no copy was made).
  bool zero_copy() const { return zero_copy_; }

 private:
  std::span<const std::byte> bytes_;
  std::shared_ptr<const void> owner_;
  bool zero_copy_ = false;
};

class ZipArchive {
 public:
  // Largest uncompressed size splice inflates for one deflated entry.
  static constexpr uint64_t kMaxInflatedSize = uint64_t{16} << 30;
  // Largest JSON or text entry read (read_text): parsed into a tree several times its size,
  // so far below kMaxInflatedSize, and well above the largest real program's model.json
  // (SmolVLA's is 47 MB after run_decompositions()).
  static constexpr uint64_t kMaxTextSize = uint64_t{256} << 20;
  // Data starting at a multiple of this (in the file) is used in place.
  static constexpr uint64_t kDataAlignment = 64;

  // Maps the file at `path` and parses its directory.
  static Result<ZipArchive> open(const std::string& path);
  // Parses the directory of an already-mapped file.
  static Result<ZipArchive> from_file(std::shared_ptr<const MappedFile> file);

  // Entries in central-directory order. Names are unique (duplicates are refused at open).
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry with exactly this name, or nullptr.
  const ZipEntry* find(std::string_view name) const;

  // The uncompressed bytes of `entry` (see the file comment for when they are copied).
  Result<EntryData> read(const ZipEntry& entry) const;
  // The entry called `name` as text, its bytes viewed in the map or in an inflated buffer
  // (EntryData); an error names the missing entry, or the entry and kMaxTextSize when it is
  // larger, checked before anything is inflated.
  Result<EntryData> read_text(std::string_view name) const;

  // The folder all .pt2 entries live under, with its trailing '/' ("kv/"), or "" for archives
  // written before PyTorch added the root folder. Found from the entry named
  // `<prefix>archive_format`, else from the first entry containing `<prefix>models/`, where
  // prefix is empty or ends in '/'. kBadArchive when neither exists.
  Result<std::string> archive_prefix() const;

  const std::shared_ptr<const MappedFile>& file() const { return file_; }

 private:
  ZipArchive(std::shared_ptr<const MappedFile> file, std::vector<ZipEntry> entries,
             std::map<std::string, size_t, std::less<>> index)
      : file_(std::move(file)), entries_(std::move(entries)), index_(std::move(index)) {}

  std::shared_ptr<const MappedFile> file_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // name → position in entries_
};

// The longest folder prefix ("kv/", "a/b/") shared by every entry name; "" when there is none
// or there are no entries.
std::string common_root(const std::vector<ZipEntry>& entries);

}  // namespace splice::pt2
