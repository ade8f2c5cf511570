#pragma once
// MappedFile: a read-only memory map of a whole file, shared by everything that views its bytes.
//
// Archive readers hand out spans that point into the map (weights used in place), so the map is
// always held through a std::shared_ptr: whoever keeps a span alive keeps the shared_ptr too.
// The map is private: read-only, or copy-on-write (open_copy_on_write); if another process
// truncates the file while it is mapped, touching the lost pages raises SIGBUS, as with any mmap —
// splice does not guard against that.

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "support/error.h"

namespace splice {

class MappedFile {
 public:
  // Maps the regular file at `path`, opened with open_input_file (support/input_file.h: anything
  // but a regular file is refused, and a FIFO never blocks). An empty file maps to an empty span
  // (no mapping is made). Errors are ErrorKind::kIo and name the path and the system's reason.
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
  // The same map, but writable copy-on-write: a page written is the process's own copy from
  // then on, and nothing ever reaches the file. For inputs a call may update in place.
  static Result<std::shared_ptr<const MappedFile>> open_copy_on_write(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // The whole file. The pointer is page-aligned (so any 64-byte-aligned file offset is a
  // 64-byte-aligned address); empty for an empty file.
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  // The bytes as writable memory: only for a map made by open_copy_on_write (asserted).
  std::byte* writable_data() const;
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const std::byte* data, size_t size, bool writable)
      : path_(std::move(path)), data_(data), size_(size), writable_(writable) {}
  static Result<std::shared_ptr<const MappedFile>> map(const std::string& path, bool writable);

  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool writable_ = false;
};

}  // namespace splice
