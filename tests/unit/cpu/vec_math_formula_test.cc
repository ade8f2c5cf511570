// Every vectorised loop the pointwise interpreter and the op kernels run instead of a function's
// formula (pointwise_fns.h's vector_fn) against that formula (ir/ops/pointwise/) computed in
// double: within a few ulp, NaN where the formula gives NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "backends/cpu/pointwise_fns.h"

namespace splice::cpu {
namespace {

TEST(VecMathFormulas, EveryFastPathAgreesWithItsFormula) {
  std::vector<float> x;
  for (double v = -30.0; v <= 30.0; v += 1.0 / 64) x.push_back(static_cast<float>(v));
  x.insert(x.end(), {1e-30f, -1e-30f, 0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN()});
  int checked = 0;
  for (ir::PointwiseFn fn : ir::all_pointwise_fns()) {
    const pointwise::FloatArrayFn vec = pointwise::vector_fn(fn);
    if (vec == nullptr) continue;
    ++checked;
    std::vector<float> got(x.size());
    vec(x.data(), got.data(), static_cast<int64_t>(x.size()));
    const std::string_view name = ir::pointwise_fn_info(fn).name;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = ir::pw::visit(fn, [&]<class F>(ir::pw::Fn<F>) -> double {
        if constexpr (F::arity == 1 && ir::pw::defines<F, ir::kComputeFloat>() &&
                      (ir::pw::device_only_classes<F>() & ir::kComputeFloat) == 0)
          return ir::pw::formula<F, ir::kComputeFloat>(v);
        return 0.0;
      });
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << name << "(" << v << ")";
        continue;
      }
      EXPECT_NEAR(got[i], want, 2e-7 * std::abs(v) + 4e-7 * std::abs(want) + 1e-37)
          << name << "(" << v << ")";
    }
  }
  EXPECT_EQ(checked, 5);  // exp, sigmoid, silu, erf, gelu
}

}  // namespace
}  // namespace splice::cpu
