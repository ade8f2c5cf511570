#pragma once
// The compiler driver: .pt2 archive → the canonical Program the planner expects. The frontend
// (frontend/pt2) only reads the archive into an ir::Program; the driver checks every node's
// recorded types against its op's shape rule (conditions the ranges cannot decide become the
// program's shape checks), runs the default pass pipeline (passes/pipeline.h) and verifies the
// result. It lives above the frontend and the passes so that neither knows the other: the
// frontend depends on nothing but ir, tensor and support, and a pass never reads archives.

#include <string>

#include "ir/program.h"
#include "support/error.h"

namespace splice::compiler {

// Reads, imports and verifies the archive at `path` (pt2::load_recorded_program), then
// canonicalize(). Errors name the entry, node, op or value, prefixed with `path`; every
// unsupported op of the archive is listed in one error.
Result<ir::Program> load_program(const std::string& path);

// A program as the frontend read it → the canonical form: ir::verify, the recorded types
// checked (ir::check_types; what the ranges cannot decide goes to program.shape_checks), the
// default passes (each verified when it changed something), and a final ir::verify.
Result<void> canonicalize(ir::Program& program);

}  // namespace splice::compiler
