#pragma once
// The one way splice writes a file: outputs, state, engine files and cache entries all go
// through here (scripts/check_writers.sh fails the build's tests if any other source creates
// or renames a file), so each promise below holds for every file splice writes.
//
// - A destination only ever holds one writer's complete data. Bytes go to a temporary file in
//   the destination's folder, created exclusively (O_EXCL, never following a link) under a short
//   random name (".splice.tmp." + 12 characters, so destinations with names up to the system's
//   limit work), flushed to disk with fsync, then renamed over the destination. Concurrent
//   writers of one destination each have their own temporary; the last rename wins, whole.
// - The destination must be a regular file or absent. A folder, FIFO, device, socket or
//   symbolic link there is an error (ErrorKind::kIo, exit code 2) and is left as it was.
// - Replacing a file keeps its permission bits (and, where the system allows, its owner).
//   A new file gets 0666 minus the umask, as any program's new file does.
// - Several files of one call are committed together (commit_files): every temporary is
//   written and flushed before the first rename, so a failure up to then leaves every
//   destination untouched; a failure while renaming says which destinations were already
//   replaced.
// - Each temporary is flock'ed by its writer for as long as it exists. A temporary whose lock
//   nobody holds belongs to a writer that died (killed, power lost); the engine cache removes
//   those when it opens (remove_abandoned_temporaries).
// - Any failure removes the temporaries; nothing half-written is ever left under a
//   destination's name.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"
#include "support/input_file.h"

namespace splice {

// Every temporary's name starts with this (then 12 random letters and digits).
inline constexpr std::string_view kTempFilePrefix = ".splice.tmp.";

// A file being written: the temporary beside its destination. Removed when the object goes
// away unless commit_files renamed it into place.
class PendingFile {
 public:
  // Checks that `destination` is a regular file or absent and creates (and locks) its
  // temporary. Errors are kIo and name the destination.
  static Result<PendingFile> create(const std::string& destination);

  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&& other) noexcept;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();

  // Appends bytes to the temporary.
  Result<void> write(const void* data, size_t size);
  Result<void> write(std::string_view bytes) { return write(bytes.data(), bytes.size()); }
  // Overwrites bytes already written (a checksum patched in last).
  Result<void> write_at(uint64_t offset, const void* data, size_t size);

  const std::string& destination() const { return destination_; }
  // The temporary's path (the destination's folder plus the temporary's name).
  std::string temp_path() const;

 private:
  PendingFile() = default;
  void discard();
  friend Result<void> commit_files(std::span<PendingFile> files);

  std::string destination_;  // as the caller gave it, for messages
  std::string folder_;       // the destination's folder, for messages
  std::string name_;         // the destination's name in that folder
  std::string temp_name_;    // the temporary's name in that folder
  FileDescriptor folder_fd_;
  FileDescriptor file_fd_;  // holds the flock
  bool renamed_ = false;
};

// Flushes every file to disk, checks again that every destination is a regular file or
// absent, then renames each temporary over its destination, in order. Two files for the same
// destination are refused (kBadUsage) before anything is written. If a rename fails, the
// message names the destinations already replaced; the other temporaries are removed.
Result<void> commit_files(std::span<PendingFile> files);
inline Result<void> commit_file(PendingFile& file) { return commit_files({&file, 1}); }

// Writes `bytes` to `path` through a PendingFile.
Result<void> write_file(const std::string& path, std::string_view bytes);

// Removes the temporaries in `folder` whose writer is gone: names containing ".splice.tmp."
// (this writer's, and those of splice versions before it, which named them
// "DESTINATION.splice.tmp.XXXXXX") that are regular files nobody holds a lock on. A live
// writer's temporary is locked and left alone. Best effort: returns how many were removed and
// never fails.
size_t remove_abandoned_temporaries(const std::string& folder);

}  // namespace splice
