// Tensor rendering for `splice run --print`: values are converted to float64 (or int64 for
// integer types) through the CPU backend's casts so every dtype prints the same way.
#include "tools/splice/tensor_print.h"

#include <fmt/format.h>

#include "backends/cpu/cast.h"
#include "support/dtype.h"

namespace splice::tools {

std::string format_tensor(const Tensor& t, int max_values) {
  std::string s = fmt::format("{}{} [", dtype_name(t.dtype()), shape_string(t.sizes()));
  const bool integral = is_integral(t.dtype()) || t.dtype() == DType::kBool;
  Tensor flat = cpu::cast_copy(t, integral ? DType::kInt64 : DType::kFloat64);
  const int64_t n = flat.numel();
  for (int64_t i = 0; i < n && i < max_values; ++i) {
    if (i) s += ", ";
    if (integral)
      s += std::to_string(flat.data<int64_t>()[i]);
    else
      s += fmt::format("{:.6g}", flat.data<double>()[i]);
  }
  if (n > max_values) s += ", ...";
  return s + "]";
}

}  // namespace splice::tools
