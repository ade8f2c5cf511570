// PendingFile, commit_files and remove_abandoned_temporaries (the guarantees are in the
// header). Every call on a file inside the destination's folder goes through a descriptor of
// that folder (openat, fstatat, renameat, unlinkat), so the folder the checks looked at is the
// folder that is written, even if its path is renamed meanwhile.
#include "support/posix_fcntl.h"  // first: see the header

#include "support/file_writer.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>

namespace splice {

namespace {

constexpr int kTempNameLength = 12;
constexpr int kCreateAttempts = 100;

Error write_error(const std::string& destination, const std::string& what, int err) {
  return make_error(ErrorKind::kIo, "cannot write '{}': {}: {}", destination, what,
                    std::strerror(err));
}

// 12 random letters and digits: 62^12 names, so O_EXCL collisions are retried, not expected.
std::string random_temp_name() {
  static constexpr std::string_view kAlphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), static_cast<unsigned>(::getpid())};
    return std::mt19937_64(seed);
  }();
  std::string name(kTempFilePrefix);
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  for (int i = 0; i < kTempNameLength; ++i) name += kAlphabet[pick(rng)];
  return name;
}

// What lies at `name` in the folder: nothing (ENOENT) or a regular file is fine; anything else
// is refused without being touched. `existing` receives a regular file's stat.
Result<bool> check_destination(int folder_fd, const std::string& name,
                               const std::string& destination, struct stat* existing) {
  struct stat st;
  if (::fstatat(folder_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    return write_error(destination, "cannot look at it", errno);
  }
  if (!S_ISREG(st.st_mode))
    return make_error(ErrorKind::kIo,
                      "cannot write '{}': it is {}; splice only replaces regular files",
                      destination, file_type_name(st.st_mode));
  if (existing != nullptr) *existing = st;
  return true;
}

Result<void> write_fully(int fd, const char* p, size_t size, uint64_t* offset,
                         const std::string& destination) {
  while (size > 0) {
    // Linux moves at most ~2 GiB per call; larger requests come back partial anyway.
    const size_t chunk = std::min<size_t>(size, size_t{1} << 30);
    const ssize_t n = offset != nullptr ? ::pwrite(fd, p, chunk, static_cast<off_t>(*offset))
                                        : ::write(fd, p, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return write_error(destination, "writing its temporary file failed", n < 0 ? errno : EIO);
    p += n;
    size -= static_cast<size_t>(n);
    if (offset != nullptr) *offset += static_cast<uint64_t>(n);
  }
  return ok_result();
}

int flock_retrying(int fd, int operation) {
  int r;
  do {
    r = ::flock(fd, operation);
  } while (r != 0 && errno == EINTR);
  return r;
}

}  // namespace

Result<PendingFile> PendingFile::create(const std::string& destination) {
  PendingFile file;
  file.destination_ = destination;
  const std::filesystem::path path(destination);
  file.name_ = path.filename().string();
  if (file.name_.empty() || file.name_ == "." || file.name_ == "..")
    return make_error(ErrorKind::kIo, "cannot write '{}': it names a folder, not a file",
                      destination);
  file.folder_ = path.has_parent_path() ? path.parent_path().string() : ".";

  file.folder_fd_ =
      FileDescriptor(::open(file.folder_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!file.folder_fd_.valid())
    return write_error(destination, fmt::format("cannot open its folder '{}'", file.folder_),
                       errno);

  struct stat existing;
  SPLICE_ASSIGN_OR_RETURN(const bool exists, check_destination(file.folder_fd_.get(), file.name_,
                                                               destination, &existing));

  for (int attempt = 0;; ++attempt) {
    if (attempt == kCreateAttempts)
      return write_error(destination, "no free temporary file name", EEXIST);
    std::string temp = random_temp_name();
    // O_EXCL: a name someone else made (a planted symbolic link included) is never opened;
    // O_NOFOLLOW says the same for links once more.
    FileDescriptor fd(::openat(file.folder_fd_.get(), temp.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (!fd.valid()) {
      if (errno == EEXIST) continue;
      return write_error(
          destination, fmt::format("cannot create a temporary file in '{}'", file.folder_), errno);
    }
    // Locked for as long as it exists: an unlocked temporary is an abandoned one. Between the
    // create and the lock, remove_abandoned_temporaries may take the file for abandoned and
    // unlink it (it locks it first, so this waits for it); then this name is gone, try another.
    // On a filesystem without locks the file stays unlocked: the cleaner cannot lock it either
    // and leaves it alone.
    (void)flock_retrying(fd.get(), LOCK_EX);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
      const int err = errno;
      ::unlinkat(file.folder_fd_.get(), temp.c_str(), 0);
      return write_error(destination, "cannot stat its temporary file", err);
    }
    if (st.st_nlink == 0) continue;
    file.temp_name_ = std::move(temp);
    file.file_fd_ = std::move(fd);
    break;
  }

  if (exists) {
    // Only the permission bits: set-user-ID and the like are not copied onto new contents.
    if (::fchmod(file.file_fd_.get(), existing.st_mode & 0777) != 0)
      return write_error(destination, "cannot give its temporary file the file's permissions",
                         errno);
    // Best effort: only a privileged process can give a file to another user.
    if (existing.st_uid != ::geteuid() || existing.st_gid != ::getegid())
      (void)::fchown(file.file_fd_.get(), existing.st_uid, existing.st_gid);
  }
  return file;
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : destination_(std::move(other.destination_)),
      folder_(std::move(other.folder_)),
      name_(std::move(other.name_)),
      temp_name_(std::move(other.temp_name_)),
      folder_fd_(std::move(other.folder_fd_)),
      file_fd_(std::move(other.file_fd_)),
      renamed_(other.renamed_) {
  other.renamed_ = true;  // nothing left for the moved-from object to remove
}

PendingFile& PendingFile::operator=(PendingFile&& other) noexcept {
  if (this != &other) {
    discard();
    destination_ = std::move(other.destination_);
    folder_ = std::move(other.folder_);
    name_ = std::move(other.name_);
    temp_name_ = std::move(other.temp_name_);
    folder_fd_ = std::move(other.folder_fd_);
    file_fd_ = std::move(other.file_fd_);
    renamed_ = other.renamed_;
    other.renamed_ = true;
  }
  return *this;
}

PendingFile::~PendingFile() { discard(); }

void PendingFile::discard() {
  // Unlink while still holding the lock, so no cleaner is racing for the same name.
  if (!renamed_ && folder_fd_.valid() && !temp_name_.empty())
    ::unlinkat(folder_fd_.get(), temp_name_.c_str(), 0);
  renamed_ = true;
  file_fd_ = FileDescriptor();
}

std::string PendingFile::temp_path() const {
  return (std::filesystem::path(folder_) / temp_name_).string();
}

Result<void> PendingFile::write(const void* data, size_t size) {
  SPLICE_ASSERT(file_fd_.valid());
  return write_fully(file_fd_.get(), static_cast<const char*>(data), size, nullptr, destination_);
}

Result<void> PendingFile::write_at(uint64_t offset, const void* data, size_t size) {
  SPLICE_ASSERT(file_fd_.valid());
  return write_fully(file_fd_.get(), static_cast<const char*>(data), size, &offset, destination_);
}

Result<void> commit_files(std::span<PendingFile> files) {
  // Two temporaries for one destination would leave only the second: refuse before anything.
  std::vector<std::tuple<dev_t, ino_t, std::string, size_t>> names;
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat folder;
    if (::fstat(files[i].folder_fd_.get(), &folder) != 0)
      return write_error(files[i].destination_, "cannot stat its folder", errno);
    names.emplace_back(folder.st_dev, folder.st_ino, files[i].name_, i);
  }
  std::sort(names.begin(), names.end());
  for (size_t i = 1; i < names.size(); ++i)
    if (std::get<0>(names[i]) == std::get<0>(names[i - 1]) &&
        std::get<1>(names[i]) == std::get<1>(names[i - 1]) &&
        std::get<2>(names[i]) == std::get<2>(names[i - 1]))
      return make_error(ErrorKind::kBadUsage,
                        "'{}' and '{}' are the same file: only one can be "
                        "written",
                        files[std::get<3>(names[i - 1])].destination_,
                        files[std::get<3>(names[i])].destination_);

  // Everything on disk before any name changes.
  for (PendingFile& f : files) {
    int r;
    do {
      r = ::fsync(f.file_fd_.get());
    } while (r != 0 && errno == EINTR);
    if (r != 0)
      return write_error(f.destination_, "flushing its temporary file to disk failed", errno);
  }
  // The destinations again: one may have become a folder or a FIFO since it was checked.
  for (PendingFile& f : files)
    SPLICE_TRY(check_destination(f.folder_fd_.get(), f.name_, f.destination_, nullptr));

  std::vector<std::string> replaced;
  for (PendingFile& f : files) {
    if (::renameat(f.folder_fd_.get(), f.temp_name_.c_str(), f.folder_fd_.get(), f.name_.c_str()) !=
        0) {
      const int err = errno;
      std::string done = "no other file was written";
      if (!replaced.empty()) {
        done = "already replaced: ";
        for (size_t i = 0; i < replaced.size(); ++i)
          done += fmt::format("{}'{}'", i ? ", " : "", replaced[i]);
      }
      return make_error(ErrorKind::kIo,
                        "cannot write '{}': renaming its temporary file '{}' "
                        "over it failed: {} ({})",
                        f.destination_, f.temp_path(), std::strerror(err), done);
    }
    f.renamed_ = true;
    replaced.push_back(f.destination_);
  }
  // Make the renames durable too. Best effort: some filesystems refuse fsync on a folder, and
  // the data itself is already on disk.
  for (PendingFile& f : files) {
    ::fsync(f.folder_fd_.get());
    f.file_fd_ = FileDescriptor();  // releases the lock
  }
  return ok_result();
}

Result<void> write_file(const std::string& path, std::string_view bytes) {
  SPLICE_ASSIGN_OR_RETURN(PendingFile file, PendingFile::create(path));
  SPLICE_TRY(file.write(bytes));
  return commit_file(file);
}

size_t remove_abandoned_temporaries(const std::string& folder) {
  FileDescriptor folder_fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!folder_fd.valid()) return 0;
  // fdopendir takes its own descriptor: the listing must not close the one used below.
  DIR* listing = ::fdopendir(::dup(folder_fd.get()));
  if (listing == nullptr) return 0;
  std::vector<std::string> candidates;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name(entry->d_name);
    if (name.find(kTempFilePrefix) != std::string_view::npos) candidates.emplace_back(name);
  }
  ::closedir(listing);

  size_t removed = 0;
  for (const std::string& name : candidates) {
    FileDescriptor fd(::openat(folder_fd.get(), name.c_str(),
                               O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid()) continue;
    struct stat opened, now;
    if (::fstat(fd.get(), &opened) != 0 || !S_ISREG(opened.st_mode)) continue;
    // A live writer holds the lock; getting it means the writer is gone.
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
    // Still the same file under that name (not renamed into place and replaced meanwhile)?
    if (::fstatat(folder_fd.get(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 ||
        now.st_dev != opened.st_dev || now.st_ino != opened.st_ino)
      continue;
    if (::unlinkat(folder_fd.get(), name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

}  // namespace splice
