#pragma once
// How much host memory this process may still allocate: the smallest of the kernel's
// MemAvailable (/proc/meminfo), the headroom of its cgroup v2 (`memory.max` less
// `memory.current`, of its cgroup and every ancestor that sets one) and its address-space limit
// (RLIMIT_AS, `ulimit -v`) less the address space it already maps. The runtime asks before a
// call so that a call which cannot fit is refused before it allocates anything (an OOM kill or
// a `bad_alloc` halfway through a call is what that avoids). Linux only; elsewhere nothing is
// known.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace splice {

// A limit on what can still be allocated, and which one it is, for messages:
// "MemAvailable in /proc/meminfo (22 GB)".
struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;
};

// The smallest of the limits above, or nullopt when none can be read.
std::optional<MemoryLimit> host_memory_limit();

// Parsers, for tests: MemAvailable of /proc/meminfo's text in bytes; the cgroup v2 path of
// /proc/self/cgroup's text (the "0::/path" line; nullopt on a v1-only system); a cgroup
// `memory.max` or `memory.current` file's value ("max" is nullopt).
std::optional<int64_t> parse_mem_available(std::string_view meminfo);
std::optional<std::string> parse_cgroup_v2_path(std::string_view proc_self_cgroup);
std::optional<int64_t> parse_cgroup_bytes(std::string_view text);

}  // namespace splice
