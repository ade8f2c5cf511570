#pragma once
// Loading a .pt2 archive: zip container → schema structs → IR Program with weights.

#include <string>

#include "ir/program.h"
#include "support/error.h"

namespace splice::pt2 {

// Reads, imports and verifies the archive at `path`. Errors name the entry, node, op or
// value; every unsupported op of the archive is listed in one error.
Result<ir::Program> load_program(const std::string& path);

}  // namespace splice::pt2
