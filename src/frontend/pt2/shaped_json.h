#pragma once
// Internal to the schema parsers (schema.cc): the archive's JSON parsed with its layout
// checked as it streams, so a hostile document is refused where it goes wrong instead of
// being built in full first. Not for use outside src/frontend/pt2.
//
// A Shape mirrors what the typed readers (schema_json.h) will ask of a value: a list, a map of
// named values, a record with known fields, a one-key union, or a scalar. While nlohmann's SAX
// parser streams the text, the builder keeps the shape of the value it is inside and
//   - refuses a list or object where the shape wants something else as soon as it opens
//     (a 10^8-element array in a node's metadata is never materialised);
//   - refuses a string longer than kMaxJsonStringBytes, a document nested deeper than
//     kMaxJsonDepth, an integer too large for 64 bits where an integer is expected, and any
//     number beyond a double's range (each named as such, not as invalid JSON);
//   - drops the fields of a record the readers never look at (module_call_graph, future
//     fields), and keeps an unknown union kind only as its key (its value becomes {}), so
//     the readers still report "unknown argument kind 'x'".
// Scalars of the wrong scalar type are kept: the readers report them with the node's name.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "support/error.h"

namespace splice::pt2::detail {

enum class ShapeKind : uint8_t {
  kScalar,   // a string, number, boolean or null
  kInteger,  // a scalar; a number too large for 64 bits is an error here
  kList,     // an array of `element`
  kMap,      // an object of any keys, each value an `element`
  kRecord,   // an object with known `fields`; other fields are dropped unread
  kUnion,    // an object whose one key names one of `fields`; unknown kinds keep only the key
  kIgnored,  // read by no one (as_none's payload): dropped, kept as null
};

struct Shape;

struct ShapeField {
  std::string_view name;
  const Shape* shape;
};

struct Shape {
  ShapeKind kind;
  const char* what;  // for messages: "a list", "a string", "an object (Node)"
  const Shape* element = nullptr;
  std::span<const ShapeField> fields = {};
};

// The longest string (value or key) kept, well above the longest stack trace or sympy
// expression an export writes.
inline constexpr size_t kMaxJsonStringBytes = size_t{4} << 20;
// The deepest nesting kept: arguments nest at most 32 levels (schema_json.cc), each a few
// JSON levels deep.
inline constexpr size_t kMaxJsonDepth = 1024;

// The shapes of models/<name>.json and of the weights and constants configs.
extern const Shape kExportedProgramShape;
extern const Shape kPayloadConfigShape;

// Parses `text` against `shape`. Errors are kBadArchive, "<what> is not valid JSON ..." or
// "<path>: <problem>" with the document path (graph_module.graph.nodes[3].metadata['k']).
Result<nlohmann::json> parse_shaped_json(std::string_view text, const Shape& shape,
                                         const char* what);

}  // namespace splice::pt2::detail
