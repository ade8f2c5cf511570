#pragma once
// Opening the files splice reads (models, engines, inputs, state, comparison files, cache
// entries): every one goes through open_input_file, so none can block or be read as something
// it is not.
//
// The file is opened with O_NONBLOCK (opening a FIFO without a writer, or a device, can
// otherwise wait forever), then fstat on that same descriptor must say "regular file" (so
// nothing can be swapped in between a check and the open), then O_NONBLOCK is cleared for
// ordinary reads. A path that stat already shows to be something else is refused without being
// opened at all, so a device node is never opened.

#include <string>

#include "support/error.h"

namespace splice {

// An open file descriptor, closed when the object goes away.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// Opens the regular file at `path` for reading (close-on-exec). Errors are ErrorKind::kIo:
// "cannot open 'PATH': REASON" when the system refuses, and "cannot read 'PATH': it is a
// FIFO, not a regular file" (a folder, a device, a socket, ...) for anything else.
Result<FileDescriptor> open_input_file(const std::string& path);

// "a folder", "a FIFO", "a character device", ... for a stat mode: how messages name what was
// found where a regular file was expected.
const char* file_type_name(unsigned mode);

}  // namespace splice
