#pragma once
// The in-place twins of the op table's ops (inplace_list.inc): the training IR's add_, copy_,
// index_copy_, ... Their schemas are found by target like the table's ops (ir::find_op), so an
// archive that holds them imports, type-checks (each takes its functional twin's shape rule)
// and prints; they have no OpId (Node::op_id() is OpId::kCount) and no kernel, because the
// functionalize pass rewrites every one into its functional twin before any planner or backend
// sees the program.

#include <optional>
#include <string_view>
#include <vector>

#include "ir/ops.h"

namespace splice::ir {

// The in-place op of `target` ("aten.add_.Tensor"), or nullptr.
const OpSchema* find_inplace_op(std::string_view target);

// The functional twin of an in-place op (aten.add_.Tensor → OpId::add_Tensor); nullopt for
// every other op.
std::optional<OpId> functional_of(const OpSchema& op);

// Every in-place op, in inplace_list.inc's order.
const std::vector<const OpSchema*>& inplace_ops();

}  // namespace splice::ir
