#pragma once
// Short human-readable rendering of a tensor for the CLI: dtype, shape and the first values.

#include <string>

#include "tensor/tensor.h"

namespace splice::tools {

// "f32[2, 3] [1, 2.5, -3, 4, 5, 6]" (at most `max_values` values, then "...").
std::string format_tensor(const Tensor& t, int max_values = 12);

}  // namespace splice::tools
