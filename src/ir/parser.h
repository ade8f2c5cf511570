#pragma once
// The text IR parser: reads what printer.h writes (and hand-written tests in the same form)
// back into a Program. Nodes and values are created through Graph's API and ops are looked up
// in the op table; arguments are matched by position and name against the op's schema, and an
// argument left out takes the schema's default. Literals take their schema's variant (an int
// given to a `float` argument becomes a double; a Scalar keeps int or float as written).
//
// Errors: kBadInput "line L, col C: ..." for malformed text, undefined or redefined values,
// unknown or missing arguments; kUnsupportedOp (with the line) for a target not in the op
// table. The parser checks syntax and names, not types: run verify() for that.

#include <string_view>

#include "ir/program.h"
#include "support/error.h"

namespace splice::ir {

// Weights stay empty.
Result<Program> parse_program(std::string_view text);
// Parses a single `graph(...) { ... }` block (no symbols or signature) into `graph`, which
// should be empty.
Result<void> parse_graph_into(std::string_view text, Graph& graph);

}  // namespace splice::ir
