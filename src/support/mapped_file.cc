// MappedFile: opens a file through open_input_file (regular files only, never blocking on a
// FIFO or device) and maps all of it read-only with mmap. The descriptor is closed right after
// mapping (the map keeps the file alive).
#include "support/mapped_file.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "support/input_file.h"

namespace splice {

namespace {

Error io_error(const std::string& what, const std::string& path, int err) {
  return make_error(ErrorKind::kIo, "cannot {} '{}': {}", what, path, std::strerror(err));
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  return map(path, false);
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open_copy_on_write(const std::string& path) {
  return map(path, true);
}

std::byte* MappedFile::writable_data() const {
  SPLICE_ASSERT(writable_ || data_ == nullptr);
  return const_cast<std::byte*>(data_);
}

Result<std::shared_ptr<const MappedFile>> MappedFile::map(const std::string& path, bool writable) {
  SPLICE_ASSIGN_OR_RETURN(const FileDescriptor file, open_input_file(path));
  const int fd = file.get();
  struct stat st;
  if (::fstat(fd, &st) != 0) return io_error("stat", path, errno);
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > std::numeric_limits<size_t>::max()) {
    return make_error(ErrorKind::kIo, "cannot map '{}': file size {} is not addressable", path,
                      static_cast<int64_t>(st.st_size));
  }
  size_t size = static_cast<size_t>(st.st_size);
  // mmap of length 0 fails with EINVAL; an empty file is simply an empty span.
  if (size == 0) {
    return std::shared_ptr<const MappedFile>(new MappedFile(path, nullptr, 0, writable));
  }
  // MAP_PRIVATE either way: a copy-on-write map's writes stay in this process.
  void* data =
      ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return io_error("map", path, errno);
  return std::shared_ptr<const MappedFile>(
      new MappedFile(path, static_cast<const std::byte*>(data), size, writable));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace splice
