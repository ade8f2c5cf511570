// The engine cache: the key (the archive's digest with everything else that decides an engine),
// the digest memo that lets a warm hit skip reading the archive, and the load-or-build policy.
// A hit costs what running the engine file costs: one stat of the archive, one small memo
// read, and loading the entry (its checksum and plan check); the archive is never opened for
// its program or weights.
#include "plan/cache.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "support/file_writer.h"
#include "support/input_file.h"

namespace splice::plan {

namespace {

// Feeds fields to an XXH3-128 state. Every variable-length field is preceded by its length, so
// two different field sequences can never produce the same byte stream.
class KeyHasher {
 public:
  KeyHasher() : state_(XXH3_createState(), &XXH3_freeState) {
    SPLICE_ASSERT(state_ != nullptr);
    XXH3_128bits_reset(state_.get());
  }
  void u64(uint64_t v) { XXH3_128bits_update(state_.get(), &v, sizeof(v)); }
  void str(std::string_view s) {
    u64(s.size());
    XXH3_128bits_update(state_.get(), s.data(), s.size());
  }
  void bytes(const void* data, size_t size) { XXH3_128bits_update(state_.get(), data, size); }
  std::string hex() const {
    XXH128_hash_t h = XXH3_128bits_digest(state_.get());
    return fmt::format("{:016x}{:016x}", h.high64, h.low64);
  }

 private:
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

int64_t nanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// What identifies one version of a file without reading it: any write changes ctime (which
// no user call can set back), a replacement changes the inode.
struct FileIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

FileIdentity identity_of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)};
}

constexpr std::string_view kMemoHeader = "splice archive digest 1";

std::string memo_path(const std::string& dir, const FileIdentity& id) {
  const uint64_t pair[2] = {id.dev, id.ino};
  return (std::filesystem::path(dir) / fmt::format("{:016x}.digest", XXH3_64bits(pair, 16)))
      .string();
}

std::string memo_text(const FileIdentity& id, const std::string& digest) {
  return fmt::format("{}\n{} {} {} {} {} {}\n", kMemoHeader, id.dev, id.ino, id.size, id.mtime_ns,
                     id.ctime_ns, digest);
}

// The remembered digest of a file of identity `id`, if the memo holds exactly that identity.
std::optional<std::string> read_memo(const std::string& path, const FileIdentity& id) {
  auto file = open_input_file(path);
  if (!file.ok()) return std::nullopt;
  char buf[256];
  size_t n = 0;
  while (n < sizeof(buf)) {
    const ssize_t got = ::read(file->get(), buf + n, sizeof(buf) - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += static_cast<size_t>(got);
  }
  std::istringstream in(std::string(buf, n));
  std::string header, digest;
  FileIdentity stored;
  if (!std::getline(in, header) || header != kMemoHeader) return std::nullopt;
  if (!(in >> stored.dev >> stored.ino >> stored.size >> stored.mtime_ns >> stored.ctime_ns >>
        digest))
    return std::nullopt;
  if (stored != id || digest.size() != 32 ||
      digest.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  return digest;
}

// The build of splice this code is part of: the shared library or executable holding it, by
// device, inode, size and mtime. Two builds of one version plan differently while splice is
// developed; an entry of one must never be a hit for the other.
std::string build_identity() {
  static const std::string id = [] {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<const void*>(&build_identity), &info) == 0 ||
        info.dli_fname == nullptr)
      return std::string("?");
    // The main program may be named as it was started (relative, or bare): its own link names
    // the file whatever the working folder is now. The file, not its name, is the build.
    const std::string path = info.dli_fname[0] == '/' ? info.dli_fname : "/proc/self/exe";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return path;
    return fmt::format("{} {} {} {}", static_cast<uint64_t>(st.st_dev),
                       static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
                       nanoseconds(st.st_mtim));
  }();
  return id;
}

}  // namespace

std::string default_cache_dir() {
  if (const char* xdg = env("XDG_CACHE_HOME"))
    return (std::filesystem::path(xdg) / "splice").string();
  if (const char* home = env("HOME"))
    return (std::filesystem::path(home) / ".cache" / "splice").string();
  return ".splice-cache";
}

Result<std::string> archive_digest(const std::string& dir, const std::string& path, bool* read) {
  if (read != nullptr) *read = false;
  SPLICE_ASSIGN_OR_RETURN(const FileDescriptor file, open_input_file(path));
  struct stat st {};
  if (::fstat(file.get(), &st) != 0)
    return make_error(ErrorKind::kIo, "cannot stat '{}': {}", path, std::strerror(errno));
  const FileIdentity id = identity_of(st);
  if (!dir.empty())
    if (auto known = read_memo(memo_path(dir, id), id)) return *known;

  if (read != nullptr) *read = true;
  KeyHasher h;
  // Streamed through a fixed buffer: the archive is read once and never held.
  std::vector<char> buf(size_t{4} << 20);
  for (;;) {
    const ssize_t got = ::read(file.get(), buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return make_error(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(errno));
    if (got == 0) break;
    h.bytes(buf.data(), static_cast<size_t>(got));
  }
  const std::string digest = h.hex();

  // The identity is checked again after the read, and remembered only for a file that has
  // not changed for 2 seconds: a write landing in the same clock tick as an earlier one can
  // leave mtime and ctime as they were, and only then could a memo name other bytes.
  struct stat after {};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  constexpr int64_t kSettledNs = 2'000'000'000;
  if (!dir.empty() && ::fstat(file.get(), &after) == 0 && identity_of(after) == id &&
      now_ns - std::max(id.mtime_ns, id.ctime_ns) > kSettledNs) {
    // Best effort; the folder may not exist yet on a cold cache's first run.
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    (void)write_file(memo_path(dir, id), memo_text(id, digest));
  }
  return digest;
}

std::string cache_key(std::string_view archive_digest, PlanMode mode, const backend::Target& target,
                      std::string_view device) {
  KeyHasher h;
  h.u64(kPlanFormatVersion);
  h.str(kSpliceVersion);
  h.str(build_identity());
  h.str(plan_mode_name(mode));
  // The plan depends on the backend's kernel capabilities, not only on its name.
  h.str(target.name);
  h.u64(target.caps.size());
  for (size_t i = 0; i < target.caps.size(); ++i)
    h.u64((uint64_t{target.kernels[i]} << 32) | target.caps[i]);
  h.u64(target.pointwise_classes.size());
  for (uint8_t c : target.pointwise_classes) h.u64(c);
  h.str(device);
  h.str(archive_digest);
  return h.hex();
}

Result<LoadedEngine> load_or_build(const std::string& dir, const std::string& key,
                                   const backend::Target& target,
                                   const std::function<Result<BuiltEngine>()>& build, bool* hit,
                                   std::optional<BuiltEngine>* built) {
  if (hit != nullptr) *hit = false;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(ErrorKind::kIo, "cannot create the engine cache folder '{}': {}", dir,
                      ec.message());
  // Temporaries of runs that were killed mid-write would otherwise stay forever.
  remove_abandoned_temporaries(dir);
  const std::string path = (std::filesystem::path(dir) / (key + ".splice")).string();
  // In an optional so that a stale entry's map can be released before the build maps the
  // archive (reset(); a moved-from local tripped GCC 12's -Wmaybe-uninitialized).
  std::optional<Result<LoadedEngine>> loaded(load_engine_file(path, target));
  // The name is only a claim: an entry is used when its checksummed trailer holds this key
  // (another engine copied or linked under this name, or one `splice compile` wrote, is not
  // this entry). Anything else that fails to load -- a missing entry, a crash mid-write on a
  // filesystem without atomic rename, a disk error, a file damaged by hand -- is not the
  // user's problem either: it is rebuilt below and replaced.
  if (loaded->ok() && (*loaded)->cache_key == key) {
    if (hit != nullptr) *hit = true;
    return std::move(*loaded);
  }
  loaded.reset();
  SPLICE_ASSIGN_OR_RETURN(BuiltEngine fresh, build());
  auto written = write_engine_file(fresh.program, fresh.plan, path, key);
  if (!written.ok()) {
    if (built != nullptr) built->emplace(std::move(fresh));
    return written.error();
  }
  // What the build holds (the archive's map, under its weights) goes before the entry is
  // mapped, so the weights are never resident twice.
  fresh = BuiltEngine{};
  return load_engine_file(path, target);
}

}  // namespace splice::plan
