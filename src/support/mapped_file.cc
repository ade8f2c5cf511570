// MappedFile: opens a file, checks that it is a regular file, and maps all of it read-only with
// mmap. The file is closed right after mapping (the map keeps the file alive). It is opened with
// fopen rather than open(2): <fcntl.h> declares glibc's ::splice(), which clashes with namespace
// splice.
#include "support/mapped_file.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace splice {

namespace {

Error io_error(const std::string& what, const std::string& path, int err) {
  return make_error(ErrorKind::kIo, "cannot {} '{}': {}", what, path, std::strerror(err));
}

// Closes the file on every return path.
class FileCloser {
 public:
  explicit FileCloser(std::FILE* file) : file_(file) {}
  ~FileCloser() { std::fclose(file_); }
  FileCloser(const FileCloser&) = delete;
  FileCloser& operator=(const FileCloser&) = delete;

 private:
  std::FILE* file_;
};

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  // "e" is glibc's O_CLOEXEC: the descriptor must not leak into child processes.
  std::FILE* stream = std::fopen(path.c_str(), "rbe");
  if (stream == nullptr) return io_error("open", path, errno);
  FileCloser closer(stream);
  const int fd = ::fileno(stream);

  struct stat st;
  if (::fstat(fd, &st) != 0) return io_error("stat", path, errno);
  // Directories, pipes and devices cannot be mapped as a whole file with a known size.
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorKind::kIo, "cannot map '{}': not a regular file", path);
  }
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > std::numeric_limits<size_t>::max()) {
    return make_error(ErrorKind::kIo, "cannot map '{}': file size {} is not addressable", path,
                      static_cast<int64_t>(st.st_size));
  }
  size_t size = static_cast<size_t>(st.st_size);
  // mmap of length 0 fails with EINVAL; an empty file is simply an empty span.
  if (size == 0) {
    return std::shared_ptr<const MappedFile>(new MappedFile(path, nullptr, 0));
  }
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return io_error("map", path, errno);
  return std::shared_ptr<const MappedFile>(
      new MappedFile(path, static_cast<const std::byte*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace splice
