// The host memory limits a process runs under (see host_memory.h), read from /proc, the
// cgroup v2 file system and getrlimit.
#include "support/host_memory.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string>

namespace splice {

namespace {

// Reads a /proc or /sys file whole (they are small, and their size reads as 0 or 4096, so
// they are read to the end rather than mapped).
std::optional<std::string> read_small_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return std::nullopt;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return std::nullopt;
  return text;
}

std::optional<int64_t> parse_int(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() || v < 0) return std::nullopt;
  return v;
}

void keep_smaller(std::optional<MemoryLimit>& best, int64_t bytes, std::string source) {
  bytes = std::max<int64_t>(bytes, 0);
  if (!best || bytes < best->bytes) best = MemoryLimit{bytes, std::move(source)};
}

// The tightest cgroup v2 headroom over the process's cgroup and its ancestors (a limit set on
// a parent binds its children too).
void cgroup_limit(std::optional<MemoryLimit>& best) {
  auto self = read_small_file("/proc/self/cgroup");
  if (!self) return;
  auto path = parse_cgroup_v2_path(*self);
  if (!path) return;
  std::string dir = *path;
  while (true) {
    const std::string base = "/sys/fs/cgroup" + (dir == "/" ? std::string() : dir);
    auto max_text = read_small_file(base + "/memory.max");
    auto current_text = read_small_file(base + "/memory.current");
    if (max_text && current_text) {
      auto max = parse_cgroup_bytes(*max_text);
      auto current = parse_cgroup_bytes(*current_text);
      if (max && current)
        keep_smaller(best, *max - *current,
                     fmt::format("the cgroup's memory.max ({} bytes, {}) less its memory.current "
                                 "({} bytes)",
                                 *max, base + "/memory.max", *current));
    }
    if (dir == "/" || dir.empty()) break;
    const size_t slash = dir.rfind('/');
    dir = slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
  }
}

// RLIMIT_AS less the address space already mapped (/proc/self/statm's first field, in pages):
// what `ulimit -v` leaves for new mappings.
void address_space_limit(std::optional<MemoryLimit>& best) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  auto statm = read_small_file("/proc/self/statm");
  if (!statm) return;
  auto pages = parse_int(*statm);
  const long page = sysconf(_SC_PAGESIZE);
  if (!pages || page <= 0) return;
  const int64_t in_use = *pages * page;
  const auto cap = static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, INT64_MAX));
  keep_smaller(best, cap - in_use,
               fmt::format("RLIMIT_AS (ulimit -v: {} bytes) less the {} bytes of address space "
                           "in use",
                           cap, in_use));
}

}  // namespace

std::optional<int64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const size_t at = meminfo.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = meminfo.substr(at + kKey.size());
  rest = rest.substr(0, rest.find('\n'));
  auto kib = parse_int(rest);
  if (!kib || *kib > INT64_MAX / 1024) return std::nullopt;
  return *kib * 1024;  // /proc/meminfo counts kB (KiB)
}

std::optional<std::string> parse_cgroup_v2_path(std::string_view text) {
  // One line per hierarchy, "ID:CONTROLLERS:PATH"; cgroup v2's is "0::PATH".
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.substr(0, 3) == "0::") return std::string(line.substr(3));
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<int64_t> parse_cgroup_bytes(std::string_view text) {
  if (text.substr(0, 3) == "max") return std::nullopt;
  return parse_int(text);
}

std::optional<MemoryLimit> host_memory_limit() {
  std::optional<MemoryLimit> best;
  if (auto meminfo = read_small_file("/proc/meminfo"))
    if (auto available = parse_mem_available(*meminfo))
      keep_smaller(best, *available, "MemAvailable in /proc/meminfo");
  cgroup_limit(best);
  address_space_limit(best);
  return best;
}

}  // namespace splice
