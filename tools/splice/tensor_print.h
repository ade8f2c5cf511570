#pragma once
// Short human-readable rendering of a tensor for the CLI: dtype, shape and the first values.

#include <map>
#include <string>

#include "tensor/tensor.h"

namespace splice::tools {

// "f32[2, 3] [1, 2.5, -3, 4, 5, 6]" (at most `max_values` values, then "...").
std::string format_tensor(const Tensor& t, int max_values = 12);

// For each key of `actual`: splice's values, the same key's values in `expected` and the
// largest absolute difference (or why they cannot be compared).
std::string format_comparison(const std::map<std::string, Tensor>& actual,
                              const std::map<std::string, Tensor>& expected);

}  // namespace splice::tools
