// `splice compile MODEL.pt2 -o MODEL.splice`: plan once and write an engine file that
// `splice run` loads without re-planning (docs/engine.md). Also home of the planning options
// that compile, run and inspect share.
#include "support/file_identity.h"
#include "tools/splice/commands.h"

namespace splice::tools {

Result<LoadOptions> to_load_options(const PlanOptions& planning, int threads) {
  LoadOptions options;
  options.device = planning.device;
  options.threads = threads;
  if (planning.plan_mode == "naive") {
    options.plan_mode = PlanMode::kNaive;
  } else if (planning.plan_mode != "planned") {
    return make_error(ErrorKind::kBadUsage, "--plan-mode must be 'planned' or 'naive', got '{}'",
                      planning.plan_mode);
  }
  if (!planning.no_cache)
    options.cache_dir = planning.cache_dir.empty() ? default_cache_dir() : planning.cache_dir;
  return options;
}

Result<void> run_compile(const CompileOptions& options) {
  SPLICE_TRY(check_distinct_files({{"the model", options.model}}, {{"-o", options.output}}));
  // Compiling always builds afresh: the cache only serves loads.
  PlanOptions planning = options.planning;
  planning.no_cache = true;
  SPLICE_ASSIGN_OR_RETURN(LoadOptions load_options, to_load_options(planning, 1));
  return Model::compile(options.model, options.output, load_options);
}

}  // namespace splice::tools
