#pragma once
// Step two of loading: schema structs → IR. Values are created from the archive's recorded
// metadata (dtype and symbolic sizes), node arguments are matched to the op table's schema by
// name (position as a fallback) and PyTorch's defaults fill what the archive left out.

#include "frontend/pt2/schema.h"
#include "ir/program.h"

namespace splice::pt2 {

// Imports graph, signature and symbol ranges (not weights). Every unsupported op is listed in
// one error; a training-IR archive (in-place ops) is refused with how to re-export.
Result<ir::Program> import_program(const ExportedProgram& ep);

}  // namespace splice::pt2
