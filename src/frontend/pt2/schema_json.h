#pragma once
// Internal to the schema parsers (schema_json.cc, schema.cc): a cheap path to the JSON value
// being read, for error messages, and typed readers over nlohmann::json that return errors
// instead of throwing. Not for use outside src/frontend/pt2.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/pt2/schema.h"
#include "support/error.h"

namespace splice::pt2::detail {

using Json = nlohmann::json;

// Where a value sits in the document: a chain of segments living on the caller's stack,
// rendered only when an error is reported (model.json holds millions of values, so building a
// string for each would be wasteful). A Path must not outlive its parent.
class Path {
 public:
  Path() = default;

  // Children point at their parent, so they cannot be made from a temporary (which would
  // leave them dangling); the deleted && overloads enforce that.
  // `.name`
  Path field(std::string_view name) const& { return Path(this, Kind::kField, name, nullptr, 0); }
  // `[i]`
  Path index(size_t i) const& { return Path(this, Kind::kIndex, {}, nullptr, i); }
  // `['key']`
  Path key(std::string_view key) const& { return Path(this, Kind::kKey, key, nullptr, 0); }
  // ` what 'name'`, e.g. node 'add' input 'other'
  Path named(const char* what, std::string_view name) const& {
    return Path(this, Kind::kNamed, name, what, 0);
  }
  // ` what #i`, e.g. node #3
  Path numbered(const char* what, size_t i) const& {
    return Path(this, Kind::kNumbered, {}, what, i);
  }
  Path field(std::string_view) const&& = delete;
  Path index(size_t) const&& = delete;
  Path key(std::string_view) const&& = delete;
  Path named(const char*, std::string_view) const&& = delete;
  Path numbered(const char*, size_t) const&& = delete;

  std::string str() const;

 private:
  enum class Kind { kRoot, kField, kIndex, kKey, kNamed, kNumbered };
  Path(const Path* parent, Kind kind, std::string_view text, const char* what, size_t index)
      : parent_(parent), kind_(kind), text_(text), what_(what), index_(index) {}
  void append_to(std::string& out) const;

  const Path* parent_ = nullptr;
  Kind kind_ = Kind::kRoot;
  std::string_view text_;
  const char* what_ = nullptr;
  size_t index_ = 0;
};

// A kBadArchive error "<path>: <message>".
Error schema_error(const Path& path, std::string_view message);

// A short description of a JSON value for messages: `string "abc"`, `number 1.5`, `array`.
std::string describe(const Json& j);

// Scalars.
Result<int64_t> read_int(const Json& j, const Path& path);
Result<int32_t> read_int32(const Json& j, const Path& path);  // enum codes
Result<double> read_float(const Json& j, const Path& path);   // numbers, "Infinity", "NaN"
Result<bool> read_bool(const Json& j, const Path& path);
Result<std::string> read_string(const Json& j, const Path& path);

Result<void> expect_object(const Json& j, const Path& path, const char* what);

// A required field of an object (checked to be one): missing → "missing field 'key'".
Result<const Json*> require_field(const Json& object, std::string_view key, const Path& path);
// An optional field: nullptr when absent or null.
const Json* optional_field(const Json& object, std::string_view key);

// A union value: an object with exactly one key. Returns the key and its value.
struct UnionEntry {
  std::string_view kind;
  const Json* value;
};
Result<UnionEntry> read_union(const Json& j, const Path& path, const char* union_name);

// Reads the required field `key` of `object` with `read(const Json&, const Path&)` into `out`.
template <typename T, typename F>
Result<void> field_into(const Json& object, std::string_view key, const Path& path, F&& read,
                        T& out) {
  SPLICE_ASSIGN_OR_RETURN(const Json* j, require_field(object, key, path));
  SPLICE_ASSIGN_OR_RETURN(out, read(*j, path.field(key)));
  return ok_result();
}

// Like field_into, but an absent or null field leaves `out` as it was (the schema default).
template <typename T, typename F>
Result<void> optional_field_into(const Json& object, std::string_view key, const Path& path,
                                 F&& read, T& out) {
  const Json* j = optional_field(object, key);
  if (j == nullptr) return ok_result();
  SPLICE_ASSIGN_OR_RETURN(out, read(*j, path.field(key)));
  return ok_result();
}

// Lists and string-keyed maps of values read by `read(const Json&, const Path&)`.
template <typename T, typename F>
Result<std::vector<T>> read_list(const Json& j, const Path& path, F&& read) {
  if (!j.is_array()) return schema_error(path, "expected a list, got " + describe(j));
  std::vector<T> out;
  out.reserve(j.size());
  size_t i = 0;
  for (const Json& element : j) {
    auto value = read(element, path.index(i));
    if (!value.ok()) return value.error();
    out.push_back(std::move(value).value());
    ++i;
  }
  return out;
}

template <typename T, typename F>
Result<std::map<std::string, T>> read_map(const Json& j, const Path& path, F&& read) {
  if (!j.is_object()) return schema_error(path, "expected an object, got " + describe(j));
  std::map<std::string, T> out;
  // iter_impl::key() refers to the stored key, so the Path's view stays valid.
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    auto value = read(it.value(), path.key(key));
    if (!value.ok()) return value.error();
    out.emplace(key, std::move(value).value());
  }
  return out;
}

// Readers for the value types shared by the program and the payload configs.
Result<Device> read_device(const Json& j, const Path& path);
Result<SymExpr> read_sym_expr(const Json& j, const Path& path);
Result<SymInt> read_sym_int(const Json& j, const Path& path);
Result<SymFloat> read_sym_float(const Json& j, const Path& path);
Result<SymBool> read_sym_bool(const Json& j, const Path& path);
Result<TensorMeta> read_tensor_meta(const Json& j, const Path& path);
Result<TensorArgument> read_tensor_argument(const Json& j, const Path& path);
Result<TokenArgument> read_token_argument(const Json& j, const Path& path);
Result<CustomObjArgument> read_custom_obj_argument(const Json& j, const Path& path);
Result<Argument> read_argument(const Json& j, const Path& path);
// An argument inside `depth` levels of nesting (a subgraph's node's argument counts the levels
// of the graphs around it), bounded so a hostile file cannot exhaust the stack.
Result<Argument> read_nested_argument(const Json& j, const Path& path, int depth);
// A graph (the program's, depth 0, or a higher-order op's subgraph one level deeper).
Result<Graph> read_graph(const Json& j, const Path& path, int depth);

}  // namespace splice::pt2::detail
