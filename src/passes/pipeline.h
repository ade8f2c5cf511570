#pragma once
// The default pass pipeline that turns an imported Program into the canonical form the
// planner expects (write-semantics.md): bounds normalised, select and where-mask writes turned
// into slice_scatter, copies of slices folded, writes validated, casts made explicit.

#include <memory>
#include <vector>

#include "passes/pass.h"

namespace splice::passes {

// A fresh instance of every default pass, in the order run_pipeline runs them.
std::vector<std::unique_ptr<Pass>> default_passes();

// The default pass called `name`, or nullptr.
std::unique_ptr<Pass> find_pass(std::string_view name);

// Verifies the program, then runs the default passes in order and ir::verify after each one
// that changed the program. An error from a pass is prefixed with "pass '<name>': ", one from
// the verifier with "verifier after pass '<name>': " or "verifier before the passes: ".
Result<void> run_pipeline(ir::Program& program);

}  // namespace splice::passes
