#pragma once
// Loading a .pt2 archive: zip container → schema structs → IR Program with weights.

#include <string>

#include "ir/program.h"
#include "support/error.h"

namespace splice::pt2 {

// Reads, imports and verifies the archive at `path`: every node's recorded types checked
// against its op's shape rule (conditions the ranges cannot decide become the program's shape
// checks), then the passes. Errors name the entry, node, op or value; every unsupported op of
// the archive is listed in one error.
Result<ir::Program> load_program(const std::string& path);

// The program exactly as the archive records it, weights attached: imported, not verified, no
// passes (for tests and tools that examine the recording itself).
Result<ir::Program> load_recorded_program(const std::string& path);

}  // namespace splice::pt2
