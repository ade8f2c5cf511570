// Tensor rendering for `splice run --print`: values are converted to float64 (or int64 for
// integer types) with the host conversions (tensor/convert.h) so every dtype prints the same
// way.
#include "tools/splice/tensor_print.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "support/dtype.h"
#include "tensor/convert.h"

namespace splice::tools {

std::string format_tensor(const Tensor& t, int max_values) {
  std::string s = fmt::format("{}{} [", dtype_name(t.dtype()), shape_string(t.sizes()));
  const bool integral = is_integral(t.dtype()) || t.dtype() == DType::kBool;
  auto converted = convert(t, integral ? DType::kInt64 : DType::kFloat64);
  if (!converted.ok()) return s + "(out of memory)]";
  const Tensor& flat = *converted;
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

std::string format_comparison(const std::map<std::string, Tensor>& actual,
                              const std::map<std::string, Tensor>& expected) {
  std::string s;
  for (const auto& [name, a] : actual) {
    s += fmt::format("{}\n  splice:  {}\n", name, format_tensor(a));
    auto it = expected.find(name);
    if (it == expected.end()) {
      s += "  (no such key in the comparison file)\n";
      continue;
    }
    const Tensor& e = it->second;
    s += fmt::format("  PyTorch: {}\n", format_tensor(e));
    if (e.sizes() != a.sizes()) {
      s += "  shapes differ\n";
      continue;
    }
    auto xr = convert(a, DType::kFloat64), yr = convert(e, DType::kFloat64);
    if (!xr.ok() || !yr.ok()) {
      s += "  (out of memory)\n";
      continue;
    }
    const Tensor& x = *xr;
    const Tensor& y = *yr;
    // A NaN on one side only is a difference no number measures (fabs of it is NaN, which
    // max() would skip): counted and reported as nan. NaN on both sides is equal, as in the
    // conformance suite's comparison.
    double worst = 0;
    int64_t nan_on_one_side = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double xv = x.data<double>()[i], yv = y.data<double>()[i];
      if (std::isnan(xv) || std::isnan(yv)) {
        nan_on_one_side += std::isnan(xv) != std::isnan(yv);
        continue;
      }
      worst = std::max(worst, std::fabs(xv - yv));
    }
    const char* dtypes = e.dtype() == a.dtype() ? "" : " (dtypes differ)";
    if (nan_on_one_side > 0) {
      s += fmt::format(
          "  max |splice - PyTorch| = nan (NaN on one side only at {} of {} "
          "positions){}\n",
          nan_on_one_side, x.numel(), dtypes);
    } else {
      s += fmt::format("  max |splice - PyTorch| = {:.3g}{}\n", worst, dtypes);
    }
  }
  return s;
}

}  // namespace splice::tools
