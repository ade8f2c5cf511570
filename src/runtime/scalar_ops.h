#pragma once
// Evaluation of the symbolic-scalar nodes (`_operator.*`, `torch.sym_*`, `math.*`) that a
// program uses to compute sizes, positions and assert conditions at run time.

#include <string_view>
#include <variant>
#include <vector>

#include "ir/ops.h"
#include "support/error.h"

namespace splice::runtime {

// A runtime scalar: Python's int, float or bool.
using Scalar = std::variant<int64_t, double, bool>;

// Applies the Python operator `op` (OpId::py_floordiv for "_operator.floordiv", sym_max, ...) with
// Python semantics (floor division and modulo round toward -inf; int / int is a float).
Result<Scalar> eval_scalar_op(ir::OpId op, const std::vector<Scalar>& args);

bool scalar_truthy(const Scalar& s);
std::string scalar_to_string(const Scalar& s);

}  // namespace splice::runtime
