#pragma once
// The text form of the IR (printer side; parser.h reads it back). A program prints as an
// optional `symbols { ... }` block (ranges and hints), an optional `signature { ... }` block, an
// optional `checks { "s1 == 8": "message" }` block (Program::shape_checks, the conditions the
// load-time type check left for the runtime) and one `graph(...) { ... return (...) }` block
// with one node per line:
//
//   %a: f32[2, 8], _ = aten.split_with_sizes.default(%x, [2, 2], 0)
//   %cp: f16[s0, 4] = aten._to_copy.default(%a, dtype=f16, layout=None, ...)
//   aten._assert_scalar.default(%ge, "Runtime assertion failed")
//
// Schema-positional arguments print positionally and kwarg-only ones as `name=value`; every
// argument prints. A node whose name is not its default (its first used output's name, or its
// target when it has none) carries a trailing `@name`. The format is stable: golden files of
// pass tests are written in it, and parse_program(print_program(p)) rebuilds p.

#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/program.h"

namespace splice::ir {

std::string print_program(const Program& program);
// Only the `graph(...) { ... }` block.
std::string print_graph(const Graph& graph);

// Pieces of the format, shared with the parser, the verifier's messages and `splice inspect`.
// A double in its shortest exact form, always with '.' or an exponent ("1.0", "1e+20",
// "-0.0", "inf", "-inf", "nan").
std::string format_double(double v);
// A JSON string literal with escapes.
std::string quote_string(std::string_view s);
// `%name`, or `%"..."` when the name has characters other than letters, digits, '_' and '.'.
std::string format_value_name(std::string_view name);
// "f32[s0, 8]", "SymInt", "SymInt(s0 + 1)", "SymBool(u0 >= 0)", "SymFloat".
std::string format_value_type(const Value& value);
// One argument or graph output literal.
std::string format_arg(const Arg& arg);
// The node's name when nothing overrides it: its first non-null output's, else its target.
std::string default_node_name(const Node& node);

}  // namespace splice::ir
