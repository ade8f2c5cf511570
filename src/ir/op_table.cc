// The op table: every supported op (op_list.inc) parsed once from its ATen schema, looked up
// by export target or by OpId. Adding an op: one entry in op_list.inc, a kernel in each
// backend, and a case in tests/cases. find_op also finds the in-place twins (inplace_ops.h),
// which have no OpId.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "ir/inplace_ops.h"
#include "ir/ops.h"

namespace splice::ir {

namespace {

// The factory keyword arguments every ATen factory shares.
#define SPLICE_FACTORY_KW \
  "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
#define SPLICE_FACTORY_KW_MF SPLICE_FACTORY_KW ", MemoryFormat? memory_format=None"

struct Entry {
  OpId id;
  std::string_view target;
  OpClass op_class;
  std::string_view schema;
};

constexpr Entry kEntries[] = {
#define SPLICE_OP(id, target, op_class, ...) {OpId::id, target, OpClass::op_class, __VA_ARGS__},
#include "ir/op_list.inc"
#undef SPLICE_OP
};
static_assert(std::size(kEntries) == static_cast<size_t>(OpId::kCount));

#undef SPLICE_FACTORY_KW_MF
#undef SPLICE_FACTORY_KW

struct Table {
  std::vector<std::unique_ptr<OpSchema>> owned;  // by OpId
  std::map<std::string, const OpSchema*, std::less<>> by_target;
  std::vector<const OpSchema*> ordered;
};

const Table& table() {
  static const Table t = [] {
    Table built;
    for (const Entry& e : kEntries) {
      auto parsed = parse_op_schema(e.target, e.schema, e.op_class);
      // The table is splice's own source: a schema that does not parse is a splice bug.
      if (!parsed.ok()) {
        std::fprintf(stderr, "splice: %s\n", parsed.error().message().c_str());
        std::abort();
      }
      parsed->id = e.id;
      // kEntries is in OpId order (the enum and the array come from one list).
      if (static_cast<size_t>(e.id) != built.owned.size()) std::abort();
      built.owned.push_back(std::make_unique<OpSchema>(std::move(*parsed)));
      const OpSchema* op = built.owned.back().get();
      built.by_target.emplace(op->target, op);
      built.ordered.push_back(op);
    }
    return built;
  }();
  return t;
}

}  // namespace

const OpSchema* find_op(std::string_view target) {
  const auto& t = table();
  auto it = t.by_target.find(target);
  // The in-place twins (inplace_ops.h) are found too: the training IR holds them until the
  // functionalize pass rewrites them.
  return it == t.by_target.end() ? find_inplace_op(target) : it->second;
}

const std::vector<const OpSchema*>& all_ops() { return table().ordered; }

const OpSchema& op_schema(OpId id) { return *table().owned.at(static_cast<size_t>(id)); }

std::string_view op_target(OpId id) { return op_schema(id).target; }

}  // namespace splice::ir
