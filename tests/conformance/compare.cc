// Tensor comparison for the conformance suite (see compare.h).
#include "tests/conformance/compare.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tensor/convert.h"

namespace splice::testing {

Tolerance tolerance_for(DType dtype, std::string_view device) {
  if (device == "cuda") {
    switch (dtype) {
      case DType::kFloat32:
        return {1e-3, 1e-4};
      case DType::kFloat16:
        return {2e-2, 5e-3};
      case DType::kBFloat16:
        return {5e-2, 2e-2};
      case DType::kFloat64:
        return {1e-7, 1e-10};
      default:
        return {0, 0};
    }
  }
  switch (dtype) {
    case DType::kFloat32:
      return {1e-4, 1e-5};
    case DType::kFloat16:
      return {1e-2, 1e-3};
    case DType::kBFloat16:
      return {2e-2, 1e-2};
    case DType::kFloat64:
      return {1e-9, 1e-12};
    default:
      return {0, 0};
  }
}

std::string compare_tensors(const Tensor& expected, const Tensor& actual, std::string_view device,
                            std::optional<DType> compute) {
  if (expected.dtype() != actual.dtype())
    return fmt::format("dtype {} but PyTorch gives {}", dtype_name(actual.dtype()),
                       dtype_name(expected.dtype()));
  if (expected.sizes() != actual.sizes())
    return fmt::format("shape {} but PyTorch gives {}", shape_string(actual.sizes()),
                       shape_string(expected.sizes()));
  const int64_t n = expected.numel();
  if (!is_floating(expected.dtype())) {
    Tensor e = convert(expected, DType::kInt64).value();
    Tensor a = convert(actual, DType::kInt64).value();
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (e.data<int64_t>()[i] != a.data<int64_t>()[i]) {
        if (first < 0) first = i;
        ++bad;
      }
    }
    if (bad == 0) return "";
    return fmt::format("{} of {} elements differ; first at flat index {}: {} vs PyTorch {}", bad, n,
                       first, a.data<int64_t>()[first], e.data<int64_t>()[first]);
  }
  Tolerance tol = tolerance_for(expected.dtype(), device);
  if (compute) {
    const Tolerance low = tolerance_for(*compute, device);
    tol = {std::max(tol.rtol, low.rtol), std::max(tol.atol, low.atol)};
  }
  Tensor e = convert(expected, DType::kFloat64).value();
  Tensor a = convert(actual, DType::kFloat64).value();
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    double x = e.data<double>()[i], y = a.data<double>()[i];
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
    } else {
      ok = std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(x);
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return "";
  return fmt::format(
      "{} of {} elements differ beyond rtol {} atol {}; first at flat index {}: "
      "{} vs PyTorch {}",
      bad, n, tol.rtol, tol.atol, first, a.data<double>()[first], e.data<double>()[first]);
}

}  // namespace splice::testing
