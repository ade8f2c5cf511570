// open_input_file: refuses by stat what is plainly not a regular file, opens the rest with
// O_NONBLOCK so a FIFO or device swapped in meanwhile cannot block the open, confirms with
// fstat on the descriptor itself, then clears O_NONBLOCK.
#include "support/posix_fcntl.h"  // first: see the header

#include "support/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace splice {

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

const char* file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a folder";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

namespace {

Error not_regular(const std::string& path, unsigned mode) {
  return make_error(ErrorKind::kIo, "cannot read '{}': it is {}, not a regular file", path,
                    file_type_name(mode));
}

}  // namespace

Result<FileDescriptor> open_input_file(const std::string& path) {
  // The early check spares devices even the open; the fstat below is what decides.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);

  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid())
    return make_error(ErrorKind::kIo, "cannot open '{}': {}", path, std::strerror(errno));
  if (::fstat(fd.get(), &st) != 0)
    return make_error(ErrorKind::kIo, "cannot stat '{}': {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return make_error(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(errno));
  return fd;
}

}  // namespace splice
