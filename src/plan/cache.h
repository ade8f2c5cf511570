#pragma once
// The engine cache: compiled engines stored under a key of everything that decides them, so a
// second run of the same archive maps the engine file (weights in place) without importing the
// archive or running a pass. An entry is <dir>/<key>.splice, an engine file whose trailer
// records its key (engine_file.h); entries are written atomically (support/file_writer.h), so
// concurrent processes building the same model at worst both build it; an entry is used only
// when it loads (checksum, plan re-derived) and its trailer holds its name's key, and anything
// else there (corrupt, foreign, another key's) is rebuilt.
//
// The key is made from the archive's bytes, never from its import: one XXH3-128 pass over the
// file, remembered in <dir>/<id>.digest beside the entries against the file's identity (device,
// inode, size, mtime and ctime, nanoseconds), so a warm hit reads neither the archive's
// program nor its weights.

#include <functional>
#include <string>
#include <string_view>

#include "ir/program.h"
#include "plan/engine_file.h"
#include "plan/plan.h"
#include "support/error.h"

namespace splice::plan {

// $XDG_CACHE_HOME/splice, else $HOME/.cache/splice, else ".splice-cache" (empty variables
// count as unset, as the XDG spec says).
std::string default_cache_dir();

// 32 hex digits: XXH3-128 of the archive file's bytes (one streamed pass, no import). When
// `dir` is not empty, the digest is remembered there against the file's identity (device,
// inode, size, mtime, ctime) and a later call for a file of the same identity returns it
// without reading the file. A file changed within the last 2 seconds is hashed but not
// remembered: a second change within the clock's granularity could keep its times. A memo that
// cannot be read or written is ignored (the cache only saves time). `read` (when given) is set
// to whether the file's bytes were read. An unreadable archive is kIo naming it.
Result<std::string> archive_digest(const std::string& dir, const std::string& path,
                                   bool* read = nullptr);

// 32 hex digits: XXH3-128 over the engine format version, kSpliceVersion, the identity of the
// splice build (the binary holding this code: device, inode, size and mtime, so a rebuilt splice
// never reads an entry of another build), the plan mode, the backend's name and kernel capabilities
// (its Target), `device` (the backend's Backend::identity(): the GPU's name, multiprocessors,
// driver and library versions; empty on the CPU) and the archive's digest. Any change to what
// the engine would hold changes one of these.
std::string cache_key(std::string_view archive_digest, PlanMode mode, const backend::Target& target,
                      std::string_view device = {});

// What a miss builds: the imported program (after the passes) and its plan.
struct BuiltEngine {
  ir::Program program;
  Plan plan;
};

// Returns the engine stored under `key` in `dir`, building it with `build` on a miss (build
// imports the archive: a hit never calls it). The cache folder is created if needed (failure:
// kIo naming it), and temporaries left there by writers that died are removed
// (remove_abandoned_temporaries). An entry that fails to load (corrupt, truncated, from another
// version) or whose trailer holds another key (another engine copied or linked under this name)
// is rebuilt and replaced. Something other than a regular file at the entry's name is never
// opened as one nor replaced: that is a kIo error. A miss writes the entry, drops what `build`
// returned (so the archive's map is released) and loads the entry back, so a hit and a miss
// return the same thing: the program and plan as the engine file holds them, weights mapped
// from it. `hit`, when given, says whether the entry was used. When the entry cannot be written
// after a build, the error is returned and, when `built` is given, what the build made is
// moved there, so the caller can run it without importing again (an entry written but not
// loading back is an error without it). An error of `build` itself is returned as it is.
Result<LoadedEngine> load_or_build(const std::string& dir, const std::string& key,
                                   const backend::Target& target,
                                   const std::function<Result<BuiltEngine>()>& build,
                                   bool* hit = nullptr,
                                   std::optional<BuiltEngine>* built = nullptr);

}  // namespace splice::plan
