#pragma once
// The engine cache: compiled engines stored under a key of everything that decides them, so a
// second run of the same model skips planning and loads the engine file (weights mapped in
// place). An entry is <dir>/<key>.splice; entries are written atomically (support/
// file_writer.h), so concurrent processes building the same model at worst both build it; an
// entry is used only when its own program and weights give its key, and anything else there
// (corrupt, foreign, from other weights) is rebuilt.

#include <functional>
#include <string>

#include "ir/program.h"
#include "plan/engine_file.h"
#include "plan/plan.h"
#include "support/error.h"

namespace splice::plan {

// $XDG_CACHE_HOME/splice, else $HOME/.cache/splice, else ".splice-cache" (empty variables
// count as unset, as the XDG spec says).
std::string default_cache_dir();

// 32 hex digits: XXH3-128 over the engine format version, kSpliceVersion, the plan mode, the
// backend's name and kernel capabilities (its Target), the program's text IR (graph with every
// argument, signature, ranges and hints), the hints again, and for each weight by name its dtype,
// shape and an XXH3-64 of its bytes. Any change to what the engine would hold changes the key.
std::string cache_key(const ir::Program& program, PlanMode mode, const backend::Target& target);

// Returns the engine for `program` from `dir`, building it with `build` on a miss. The cache
// folder is created if needed (failure: kIo naming it), and temporaries left there by writers
// that died are removed (remove_abandoned_temporaries). On a hit the key is computed again
// from the loaded entry's own program, plan mode and weights and must equal the entry's name;
// an entry that fails to load (corrupt, truncated, from another version) or holds another
// program or other weights is rebuilt and replaced. Something other than a regular file at the
// entry's name is never opened as one nor replaced: that is a kIo error. A miss writes the entry
// and then loads it back, so a hit and a miss return the same thing: the program and plan as
// the engine file holds them. `hit`, when given, says whether the entry was used.
Result<LoadedEngine> load_or_build(const std::string& dir, const ir::Program& program,
                                   PlanMode mode, const backend::Target& target,
                                   const std::function<Result<Plan>(const ir::Program&)>& build,
                                   bool* hit = nullptr);

}  // namespace splice::plan
