#pragma once
// The generator's tables (pointwise_codegen.cc uses them): the preamble every generated source
// starts with (storage types, c10 conversions, the error-word helpers, the helper functions the
// expressions call), the expression of each PointwiseFn per compute class, and the expression
// converting a value between two dtypes.

#include <optional>
#include <string>

#include "ir/pointwise.h"

namespace splice::cuda {

// The self-contained preamble (no #include: NVRTC's built-ins cover the math).
const std::string& pointwise_preamble();

// The expression template of `fn` computing in `compute`, or nullopt when the function is not
// defined there. Placeholders: {x} {y} {z} {w} the operands (already converted, plain variable
// names), {T} the compute type, {f} the float suffix of math functions ("f" for float32, "" for
// float64), {err} the error-word arguments ("p.err, p.site").
std::optional<std::string> pointwise_expression(ir::PointwiseFn fn, DType compute);

// An expression converting `expr` (of dtype `from`) to dtype `to` with c10's rules.
std::string convert_expression(DType from, DType to, const std::string& expr);

// A C++ literal of type `type` (a compute type name) holding `value` exactly ("(float)0x1p-1").
std::string float_literal(const char* type, double value);

}  // namespace splice::cuda
