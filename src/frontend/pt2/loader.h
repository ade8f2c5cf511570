#pragma once
// Loading a .pt2 archive: zip container → schema structs → IR Program with weights.

#include <string>

#include "ir/program.h"
#include "support/error.h"

namespace splice::pt2 {

// The program exactly as the archive records it, weights attached: imported, not verified, no
// passes. compiler::load_program (compiler/driver.h) checks it and runs the passes; tests and
// tools that examine the recording itself use it as it is. Errors name the entry, node, op or
// value, prefixed with `path`; every unsupported op of the archive is listed in one error.
Result<ir::Program> load_recorded_program(const std::string& path);

}  // namespace splice::pt2
