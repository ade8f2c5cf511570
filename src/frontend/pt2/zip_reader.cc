// ZipArchive: parses a zip file's end-of-central-directory record (classic and ZIP64), its
// central directory and each entry's local file header from a memory map, checking every field
// against the file before use, and reads entries in place (stored, 64-byte aligned), by copy
// (stored, unaligned) or by raw inflate (deflate) with CRC-32 checks on the copied bytes. Layouts
// follow PKWARE's APPNOTE.TXT sections 4.3.7 (local header), 4.3.12 (central directory header),
// 4.3.14-16 (ZIP64 end records) and 4.5.3 (ZIP64 extra field).
#include "frontend/pt2/zip_reader.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "support/checked_math.h"

namespace splice::pt2 {

namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEocdSignature = 0x06054b50;
constexpr uint32_t kZip64EocdSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;

constexpr uint64_t kLocalHeaderSize = 30;
constexpr uint64_t kCentralHeaderSize = 46;
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kZip64EocdSize = 56;
constexpr uint64_t kMaxCommentSize = 65535;

constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kFlagEncrypted = 0x0001;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;

// zlib documents deflate's largest possible expansion on inflate as 1032:1; a declared size
// beyond that cannot be honest and is refused before anything is allocated for it.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Little-endian loads; callers have checked that the bytes are inside the file.
uint16_t load_u16(const std::byte* p) {
  return static_cast<uint16_t>(std::to_integer<uint16_t>(p[0]) |
                               (std::to_integer<uint16_t>(p[1]) << 8));
}
uint32_t load_u32(const std::byte* p) {
  return static_cast<uint32_t>(load_u16(p)) | (static_cast<uint32_t>(load_u16(p + 2)) << 16);
}
uint64_t load_u64(const std::byte* p) {
  return static_cast<uint64_t>(load_u32(p)) | (static_cast<uint64_t>(load_u32(p + 4)) << 32);
}

// True when [offset, offset + length) lies inside [0, limit), without overflow.
bool range_within(uint64_t offset, uint64_t length, uint64_t limit) {
  std::optional<uint64_t> end = checked_add_u(offset, length);
  return end.has_value() && *end <= limit;
}

template <typename... Args>
Error bad_archive(fmt::format_string<Args...> format, Args&&... args) {
  return Error(ErrorKind::kBadArchive,
               "bad archive: " + fmt::format(format, std::forward<Args>(args)...));
}

// Where the central directory is, from the end records.
struct DirectoryLocation {
  uint64_t entry_count = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
  // The directory must end at or before this offset (the first end record).
  uint64_t limit = 0;
};

// Finds the end-of-central-directory record: it is the last 22 bytes of the file unless a
// comment (at most 65535 bytes) follows it, so the search looks back no further than that.
Result<uint64_t> find_eocd(std::span<const std::byte> file) {
  const uint64_t file_size = file.size();
  if (file_size < kEocdSize) {
    return make_error(ErrorKind::kBadArchive,
                      "not a zip archive: the file is {} bytes, smaller than the {}-byte "
                      "end-of-central-directory record",
                      file_size, kEocdSize);
  }
  const uint64_t last = file_size - kEocdSize;
  const uint64_t first = last - std::min(last, kMaxCommentSize);
  for (uint64_t pos = last + 1; pos-- > first;) {
    const std::byte* p = file.data() + pos;
    if (load_u32(p) != kEocdSignature) continue;
    // A signature-like run inside a comment or data is skipped unless its comment fits.
    if (range_within(pos + kEocdSize, load_u16(p + 20), file_size)) return pos;
  }
  return make_error(ErrorKind::kBadArchive,
                    "not a zip archive: no end-of-central-directory record in the last {} bytes "
                    "of the {}-byte file",
                    file_size - first, file_size);
}

// Reads the ZIP64 end record that the locator just before the classic record points to.
Result<DirectoryLocation> read_zip64_end(std::span<const std::byte> file, uint64_t locator_pos) {
  const std::byte* loc = file.data() + locator_pos;
  const uint32_t record_disk = load_u32(loc + 4);
  const uint64_t record_pos = load_u64(loc + 8);
  const uint32_t disk_count = load_u32(loc + 16);
  if (record_disk != 0 || disk_count > 1) {
    return bad_archive(
        "multi-disk zip archives are not supported (ZIP64 locator: record on "
        "disk {}, {} disks)",
        record_disk, disk_count);
  }
  if (!range_within(record_pos, kZip64EocdSize, locator_pos)) {
    return bad_archive(
        "ZIP64 end-of-central-directory offset {} does not leave room for its "
        "{}-byte record before the locator at offset {}",
        record_pos, kZip64EocdSize, locator_pos);
  }
  const std::byte* rec = file.data() + record_pos;
  if (load_u32(rec) != kZip64EocdSignature) {
    return bad_archive(
        "no ZIP64 end-of-central-directory record at offset {} (signature "
        "0x{:08x})",
        record_pos, load_u32(rec));
  }
  const uint32_t disk = load_u32(rec + 16);
  const uint32_t directory_disk = load_u32(rec + 20);
  const uint64_t disk_entries = load_u64(rec + 24);
  DirectoryLocation dir;
  dir.entry_count = load_u64(rec + 32);
  dir.size = load_u64(rec + 40);
  dir.offset = load_u64(rec + 48);
  dir.limit = record_pos;
  if (disk != 0 || directory_disk != 0 || disk_entries != dir.entry_count) {
    return bad_archive(
        "multi-disk zip archives are not supported (ZIP64 record: disk {}, "
        "directory on disk {}, {} of {} entries on this disk)",
        disk, directory_disk, disk_entries, dir.entry_count);
  }
  return dir;
}

Result<DirectoryLocation> locate_directory(std::span<const std::byte> file) {
  SPLICE_ASSIGN_OR_RETURN(uint64_t eocd_pos, find_eocd(file));
  const uint64_t file_size = file.size();
  DirectoryLocation dir;
  // A ZIP64 locator sits right before the classic record when the writer needed (or chose)
  // 64-bit fields; its values then replace the classic record's (which may be 0xFFFF...).
  if (eocd_pos >= kZip64LocatorSize &&
      load_u32(file.data() + eocd_pos - kZip64LocatorSize) == kZip64LocatorSignature) {
    SPLICE_ASSIGN_OR_RETURN(dir, read_zip64_end(file, eocd_pos - kZip64LocatorSize));
  } else {
    const std::byte* p = file.data() + eocd_pos;
    const uint16_t disk = load_u16(p + 4);
    const uint16_t directory_disk = load_u16(p + 6);
    const uint16_t disk_entries = load_u16(p + 8);
    dir.entry_count = load_u16(p + 10);
    dir.size = load_u32(p + 12);
    dir.offset = load_u32(p + 16);
    dir.limit = eocd_pos;
    if (disk != 0 || directory_disk != 0 || disk_entries != dir.entry_count) {
      return bad_archive(
          "multi-disk zip archives are not supported (disk {}, directory on "
          "disk {}, {} of {} entries on this disk)",
          disk, directory_disk, disk_entries, dir.entry_count);
    }
  }
  if (dir.offset > file_size) {
    return bad_archive("central directory offset {} is past the end of the {}-byte file",
                       dir.offset, file_size);
  }
  if (!range_within(dir.offset, dir.size, dir.limit)) {
    return bad_archive(
        "central directory of {} bytes at offset {} runs past its end record at "
        "offset {} (file size {})",
        dir.size, dir.offset, dir.limit, file_size);
  }
  // Every entry takes at least a fixed-size header, which bounds the count before any
  // allocation is sized from it.
  if (dir.entry_count > dir.size / kCentralHeaderSize) {
    return bad_archive(
        "end-of-central-directory record claims {} entries but the {}-byte "
        "central directory holds at most {}",
        dir.entry_count, dir.size, dir.size / kCentralHeaderSize);
  }
  return dir;
}

// The 32-bit central-directory fields that ZIP64 may widen; each field marked 0xFFFFFFFF
// (0xFFFF for the disk) is replaced, in this order, from the ZIP64 extra field.
struct WideFields {
  uint64_t size;
  uint64_t compressed_size;
  uint64_t local_offset;
  uint64_t disk;
};

Result<void> apply_zip64_extra(std::span<const std::byte> extra, const std::string& name,
                               WideFields& fields) {
  uint64_t pos = 0;
  while (extra.size() - pos >= 4) {
    const uint16_t id = load_u16(extra.data() + pos);
    const uint16_t length = load_u16(extra.data() + pos + 2);
    pos += 4;
    if (length > extra.size() - pos) {
      return bad_archive(
          "entry '{}': extra field 0x{:04x} of {} bytes runs past the {}-byte "
          "extra data",
          name, id, length, extra.size());
    }
    if (id == kZip64ExtraId) {
      const std::byte* p = extra.data() + pos;
      uint64_t used = 0;
      auto take = [&](uint64_t& field, uint64_t marker, uint64_t width) -> Result<void> {
        if (field != marker) return ok_result();
        if (length - used < width) {
          return bad_archive(
              "entry '{}': ZIP64 extra field of {} bytes is too short for the "
              "fields marked as 64-bit",
              name, length);
        }
        field = width == 8 ? load_u64(p + used) : load_u32(p + used);
        used += width;
        return ok_result();
      };
      SPLICE_TRY(take(fields.size, 0xFFFFFFFF, 8));
      SPLICE_TRY(take(fields.compressed_size, 0xFFFFFFFF, 8));
      SPLICE_TRY(take(fields.local_offset, 0xFFFFFFFF, 8));
      SPLICE_TRY(take(fields.disk, 0xFFFF, 4));
      return ok_result();
    }
    pos += length;
  }
  return ok_result();
}

// Reads the local header of `entry` (whose local header offset is `local_offset`) to find where
// its data starts, and checks that the data ends before the central directory.
Result<void> resolve_data_offset(std::span<const std::byte> file, uint64_t local_offset,
                                 uint64_t directory_offset, ZipEntry& entry) {
  if (!range_within(local_offset, kLocalHeaderSize, directory_offset)) {
    return bad_archive(
        "entry '{}': local header offset {} is not before the central directory "
        "at offset {}",
        entry.name, local_offset, directory_offset);
  }
  const std::byte* p = file.data() + local_offset;
  if (load_u32(p) != kLocalHeaderSignature) {
    return bad_archive("entry '{}': no local file header at offset {} (signature 0x{:08x})",
                       entry.name, local_offset, load_u32(p));
  }
  const uint16_t name_length = load_u16(p + 26);
  const uint16_t extra_length = load_u16(p + 28);
  if (name_length != entry.name.size()) {
    return bad_archive(
        "entry '{}': local header name length {} differs from the central "
        "directory's {}",
        entry.name, name_length, entry.name.size());
  }
  // local_offset + 30 fits (checked above); adding two 16-bit lengths cannot overflow 64 bits.
  const uint64_t name_offset = local_offset + kLocalHeaderSize;
  entry.data_offset = name_offset + name_length + extra_length;
  if (!range_within(name_offset, name_length, directory_offset) ||
      std::memcmp(p + kLocalHeaderSize, entry.name.data(), name_length) != 0) {
    return bad_archive("entry '{}': local header at offset {} names a different entry", entry.name,
                       local_offset);
  }
  if (!range_within(entry.data_offset, entry.compressed_size, directory_offset)) {
    return bad_archive(
        "entry '{}': {} bytes of data at offset {} run past the central "
        "directory at offset {} (file size {})",
        entry.name, entry.compressed_size, entry.data_offset, directory_offset, file.size());
  }
  return ok_result();
}

Result<std::vector<ZipEntry>> read_directory(std::span<const std::byte> file,
                                             const DirectoryLocation& dir) {
  std::vector<ZipEntry> entries;
  entries.reserve(dir.entry_count);  // bounded by dir.size / 46 in locate_directory
  const uint64_t end = dir.offset + dir.size;
  uint64_t pos = dir.offset;
  for (uint64_t i = 0; i < dir.entry_count; ++i) {
    if (end - pos < kCentralHeaderSize) {
      return bad_archive(
          "central directory entry {} at offset {} runs past the end of the "
          "central directory at offset {}",
          i, pos, end);
    }
    const std::byte* p = file.data() + pos;
    if (load_u32(p) != kCentralHeaderSignature) {
      return bad_archive(
          "central directory entry {} at offset {} has signature 0x{:08x}, "
          "expected 0x{:08x}",
          i, pos, load_u32(p), kCentralHeaderSignature);
    }
    const uint16_t name_length = load_u16(p + 28);
    const uint16_t extra_length = load_u16(p + 30);
    const uint16_t comment_length = load_u16(p + 32);
    const uint64_t record_size =
        kCentralHeaderSize + uint64_t{name_length} + extra_length + comment_length;
    if (end - pos < record_size) {
      return bad_archive(
          "central directory entry {} at offset {} ({} bytes with its name, "
          "extra field and comment) runs past the end of the central directory "
          "at offset {}",
          i, pos, record_size, end);
    }
    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(p + kCentralHeaderSize), name_length);
    entry.flags = load_u16(p + 8);
    entry.method = load_u16(p + 10);
    entry.crc32 = load_u32(p + 16);
    WideFields wide{load_u32(p + 24), load_u32(p + 20), load_u32(p + 42), load_u16(p + 34)};
    SPLICE_TRY(apply_zip64_extra(file.subspan(pos + kCentralHeaderSize + name_length, extra_length),
                                 entry.name, wide));
    if (wide.disk != 0) {
      return bad_archive(
          "entry '{}' starts on disk {}; multi-disk zip archives are not "
          "supported",
          entry.name, wide.disk);
    }
    entry.size = wide.size;
    entry.compressed_size = wide.compressed_size;
    SPLICE_TRY(resolve_data_offset(file, wide.local_offset, dir.offset, entry));
    entries.push_back(std::move(entry));
    pos += record_size;
  }
  return entries;
}

// An uninitialised 64-byte-aligned heap buffer, freed when its last shared_ptr goes.
Result<std::shared_ptr<std::byte>> allocate_aligned(uint64_t size, const std::string& name) {
  // size is at most the file size or kMaxInflatedSize here, so rounding up cannot overflow.
  const uint64_t rounded = std::max<uint64_t>(
      ZipArchive::kDataAlignment, (size + ZipArchive::kDataAlignment - 1) /
                                      ZipArchive::kDataAlignment * ZipArchive::kDataAlignment);
  void* data = std::aligned_alloc(ZipArchive::kDataAlignment, rounded);
  if (data == nullptr) {
    return make_error(ErrorKind::kIo, "cannot allocate {} bytes to read entry '{}'", size, name);
  }
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(data),
                                    [](std::byte* p) { std::free(p); });
}

uint32_t compute_crc32(std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(
      crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// Raw-inflates `in` into exactly `out`; anything but a complete stream of exactly out.size()
// bytes is an error. zlib counts in 32-bit uInt, so large entries are fed in chunks.
Result<void> inflate_exact(std::span<const std::byte> in, std::span<std::byte> out,
                           const std::string& name) {
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
    return make_error(ErrorKind::kInternal, "zlib inflateInit2 failed for entry '{}'", name);
  }
  struct StreamEnd {
    z_stream* stream;
    ~StreamEnd() { inflateEnd(stream); }
  } stream_end{&stream};

  uint64_t in_pos = 0;
  uint64_t out_pos = 0;
  std::byte overflow_probe[1];
  while (true) {
    const uint64_t in_chunk = std::min<uint64_t>(in.size() - in_pos, UINT_MAX);
    const uint64_t out_chunk = std::min<uint64_t>(out.size() - out_pos, UINT_MAX);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + in_pos));
    stream.avail_in = static_cast<uInt>(in_chunk);
    // Once the output is full, one spare byte tells a finished stream from a longer one.
    const bool probing = out_chunk == 0;
    stream.next_out = reinterpret_cast<Bytef*>(probing ? overflow_probe : out.data() + out_pos);
    stream.avail_out = probing ? 1 : static_cast<uInt>(out_chunk);
    const uInt avail_out_before = stream.avail_out;
    const int status = inflate(&stream, Z_NO_FLUSH);
    in_pos += in_chunk - stream.avail_in;
    const uint64_t produced = avail_out_before - stream.avail_out;
    if (probing && produced > 0) {
      return bad_archive("entry '{}' inflates to more than its declared {} bytes", name,
                         out.size());
    }
    out_pos += probing ? 0 : produced;
    if (status == Z_STREAM_END) break;
    if (status == Z_OK) continue;
    if (status == Z_BUF_ERROR && in_pos == in.size()) {
      return bad_archive(
          "entry '{}': deflate stream ends early after {} of {} compressed "
          "bytes ({} bytes inflated, {} declared)",
          name, in_pos, in.size(), out_pos, out.size());
    }
    return bad_archive("entry '{}': corrupt deflate stream at compressed byte {}: {}", name, in_pos,
                       stream.msg != nullptr ? stream.msg : "zlib error");
  }
  if (out_pos != out.size()) {
    return bad_archive("entry '{}' inflates to {} bytes but declares {}", name, out_pos,
                       out.size());
  }
  return ok_result();
}

Result<void> check_crc(std::span<const std::byte> bytes, const ZipEntry& entry) {
  const uint32_t actual = compute_crc32(bytes);
  if (actual != entry.crc32) {
    return bad_archive(
        "entry '{}' has CRC-32 0x{:08x} but the central directory records "
        "0x{:08x}",
        entry.name, actual, entry.crc32);
  }
  return ok_result();
}

}  // namespace

Result<ZipArchive> ZipArchive::open(const std::string& path) {
  SPLICE_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::open(path));
  return from_file(std::move(file));
}

Result<ZipArchive> ZipArchive::from_file(std::shared_ptr<const MappedFile> file) {
  SPLICE_CHECK_OR_RETURN(file != nullptr, ErrorKind::kBadUsage,
                         "ZipArchive::from_file needs a mapped file");
  std::span<const std::byte> bytes = file->bytes();
  auto dir = locate_directory(bytes);
  if (!dir.ok()) return dir.error().with_context(file->path());
  auto entries = read_directory(bytes, *dir);
  if (!entries.ok()) return entries.error().with_context(file->path());

  std::map<std::string, size_t, std::less<>> index;
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string& name = (*entries)[i].name;
    if (!index.emplace(name, i).second) {
      return bad_archive("entry '{}' appears more than once", name).with_context(file->path());
    }
  }
  return ZipArchive(std::move(file), std::move(*entries), std::move(index));
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Result<EntryData> ZipArchive::read(const ZipEntry& entry) const {
  std::span<const std::byte> file = file_->bytes();
  // Entries from entries() were checked at open; this guards ones built by hand.
  if (!range_within(entry.data_offset, entry.compressed_size, file.size())) {
    return bad_archive("entry '{}': {} bytes at offset {} run past the end of the {}-byte file",
                       entry.name, entry.compressed_size, entry.data_offset, file.size());
  }
  if ((entry.flags & kFlagEncrypted) != 0) {
    return bad_archive("entry '{}' is encrypted; splice reads only unencrypted archives",
                       entry.name);
  }
  std::span<const std::byte> stored = file.subspan(entry.data_offset, entry.compressed_size);

  if (entry.method == kMethodStored) {
    if (entry.compressed_size != entry.size) {
      return bad_archive("stored entry '{}' has {} bytes of data but declares size {}", entry.name,
                         entry.compressed_size, entry.size);
    }
    // The map starts on a page boundary, so an aligned file offset is an aligned address.
    if (entry.data_offset % kDataAlignment == 0) {
      return EntryData(stored, file_, /*zero_copy=*/true);
    }
    SPLICE_ASSIGN_OR_RETURN(std::shared_ptr<std::byte> buffer,
                            allocate_aligned(entry.size, entry.name));
    std::span<std::byte> out(buffer.get(), entry.size);
    std::copy(stored.begin(), stored.end(), out.begin());
    SPLICE_TRY(check_crc(out, entry));
    return EntryData(out, std::move(buffer), /*zero_copy=*/false);
  }

  if (entry.method == kMethodDeflate) {
    if (entry.size > kMaxInflatedSize) {
      return bad_archive(
          "deflated entry '{}' declares {} bytes, more than the {}-byte limit "
          "for compressed entries; store it uncompressed",
          entry.name, entry.size, kMaxInflatedSize);
    }
    std::optional<uint64_t> max_size = checked_mul_u(entry.compressed_size, kMaxDeflateRatio);
    if (max_size.has_value() && entry.size > 1024 && entry.size - 1024 > *max_size) {
      return bad_archive(
          "deflated entry '{}' declares {} bytes from {} compressed bytes, more "
          "than deflate can expand to",
          entry.name, entry.size, entry.compressed_size);
    }
    SPLICE_ASSIGN_OR_RETURN(std::shared_ptr<std::byte> buffer,
                            allocate_aligned(entry.size, entry.name));
    std::span<std::byte> out(buffer.get(), entry.size);
    SPLICE_TRY(inflate_exact(stored, out, entry.name));
    SPLICE_TRY(check_crc(out, entry));
    return EntryData(out, std::move(buffer), /*zero_copy=*/false);
  }

  return bad_archive(
      "entry '{}' uses compression method {}; splice reads only stored (0) and "
      "deflate (8) entries",
      entry.name, entry.method);
}

Result<EntryData> ZipArchive::read_text(std::string_view name) const {
  const ZipEntry* entry = find(name);
  if (entry == nullptr) return bad_archive("archive has no entry '{}'", name);
  if (entry->size > kMaxTextSize) {
    return bad_archive(
        "entry '{}' is {} bytes, more than the {}-byte ({} MiB) limit for a JSON entry",
        entry->name, entry->size, kMaxTextSize, kMaxTextSize >> 20);
  }
  return read(*entry);
}

Result<std::string> ZipArchive::archive_prefix() const {
  // A prefix is either empty or a folder path ending in '/'.
  auto is_prefix = [](std::string_view name, size_t length) {
    return length == 0 || name[length - 1] == '/';
  };
  constexpr std::string_view kFormatEntry = "archive_format";
  for (const ZipEntry& entry : entries_) {
    std::string_view name = entry.name;
    if (name.ends_with(kFormatEntry) && is_prefix(name, name.size() - kFormatEntry.size())) {
      return std::string(name.substr(0, name.size() - kFormatEntry.size()));
    }
  }
  constexpr std::string_view kModelsFolder = "models/";
  for (const ZipEntry& entry : entries_) {
    std::string_view name = entry.name;
    for (size_t at = name.find(kModelsFolder); at != std::string_view::npos;
         at = name.find(kModelsFolder, at + 1)) {
      if (is_prefix(name, at)) return std::string(name.substr(0, at));
    }
  }
  return bad_archive(
      "no 'archive_format' entry and no 'models/' folder among the {} entries; "
      "is this a torch.export .pt2 archive?",
      entries_.size());
}

std::string common_root(const std::vector<ZipEntry>& entries) {
  if (entries.empty()) return "";
  // Start from the first name's folder part and shorten it to a shared folder boundary.
  std::string_view root = entries.front().name;
  size_t slash = root.rfind('/');
  root = slash == std::string_view::npos ? std::string_view() : root.substr(0, slash + 1);
  for (const ZipEntry& entry : entries) {
    while (!root.empty() && !std::string_view(entry.name).starts_with(root)) {
      root.remove_suffix(1);
      size_t previous = root.rfind('/');
      root = previous == std::string_view::npos ? std::string_view() : root.substr(0, previous + 1);
    }
  }
  return std::string(root);
}

}  // namespace splice::pt2
