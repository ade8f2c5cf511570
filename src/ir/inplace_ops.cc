// The in-place ops (inplace_ops.h): inplace_list.inc parsed once from its ATen schemas, each
// with the OpId of its functional twin.
#include "ir/inplace_ops.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

namespace splice::ir {

namespace {

struct Entry {
  std::string_view target;
  OpId functional;
  std::string_view schema;
};

constexpr Entry kEntries[] = {
#define SPLICE_INPLACE(target, functional, ...) {target, OpId::functional, __VA_ARGS__},
#include "ir/inplace_list.inc"
#undef SPLICE_INPLACE
};

struct Table {
  std::vector<std::unique_ptr<OpSchema>> owned;
  std::map<std::string, const OpSchema*, std::less<>> by_target;
  std::map<const OpSchema*, OpId> functional;
  std::vector<const OpSchema*> ordered;
};

const Table& table() {
  static const Table t = [] {
    Table built;
    for (const Entry& e : kEntries) {
      // An op of ir/ops/pointwise/ that PyTorch gives no in-place twin ("" in its entry).
      if (e.target.empty()) continue;
      auto parsed = parse_op_schema(e.target, e.schema);
      // The list is splice's own source: a schema that does not parse is a splice bug.
      if (!parsed.ok()) {
        std::fprintf(stderr, "splice: %s\n", parsed.error().message().c_str());
        std::abort();
      }
      built.owned.push_back(std::make_unique<OpSchema>(std::move(*parsed)));
      const OpSchema* op = built.owned.back().get();
      built.by_target.emplace(op->target, op);
      built.functional.emplace(op, e.functional);
      built.ordered.push_back(op);
    }
    return built;
  }();
  return t;
}

}  // namespace

const OpSchema* find_inplace_op(std::string_view target) {
  const auto& t = table();
  auto it = t.by_target.find(target);
  return it == t.by_target.end() ? nullptr : it->second;
}

std::optional<OpId> functional_of(const OpSchema& op) {
  const auto& t = table();
  auto it = t.functional.find(&op);
  if (it == t.functional.end()) return std::nullopt;
  return it->second;
}

const std::vector<const OpSchema*>& inplace_ops() { return table().ordered; }

}  // namespace splice::ir
