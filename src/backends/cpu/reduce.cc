// Reductions: sum, mean, prod, any/all, var/std/var_mean (full and over dims, keepdim). Each input
// element is added into its output slot (reduced dims get output stride 0). Accumulators: wrapping
// uint64 for integers; double for every float type, which stays within rounding of PyTorch's
// cascade float sums and matches its double accumulation for float64. mean = sum rounded to the
// dtype, then divided in the dtype's opmath (what PyTorch's CPU mean does: sum_out().div_()).
// var_mean takes two passes in double (PyTorch's Welford also accumulates in double).
#include <algorithm>
#include <cmath>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/reduce_plan.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

Result<ReducePlan> plan_reduce(std::string_view op, const Tensor& self,
                               const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                               bool empty_means_all) {
  const int64_t rank = self.dim();
  std::vector<bool> reduced(rank, !dims || (dims->empty() && empty_means_all));
  if (dims) {
    for (int64_t d : *dims) {
      SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(op, d, rank));
      if (rank == 0) continue;
      KCHECK(!reduced[w] || dims->empty(), ErrorKind::kBadInput, "dim {} appears twice", w);
      reduced[w] = true;
    }
  }
  ReducePlan plan;
  Shape kept_dims;  // input dim of each output dim (or -1 for a kept size-1 reduced dim)
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      plan.count *= self.size(d);
      if (keepdim) {
        plan.out_shape.push_back(1);
        kept_dims.push_back(-1);
      }
    } else {
      plan.out_shape.push_back(self.size(d));
      kept_dims.push_back(d);
    }
  }
  const Shape out_strides = contiguous_strides(plan.out_shape);
  plan.acc_strides.assign(rank, 0);
  for (size_t i = 0; i < kept_dims.size(); ++i)
    if (kept_dims[i] >= 0) plan.acc_strides[kept_dims[i]] = out_strides[i];
  plan.reduced = std::move(reduced);
  return plan;
}

namespace {

// Sums `in` (already in the output dtype) into out per the plan; mean divides.
template <typename T>
void sum_into(const Tensor& out, const Tensor& in, const ReducePlan& plan, bool mean) {
  const int64_t n = out.numel();
  const T* pin = in.data<T>();
  T* po = out.data<T>();
  const std::array<const int64_t*, 2> strides = {in.strides().data(), plan.acc_strides.data()};
  if constexpr (is_float_v<T>) {
    std::vector<double> acc(n, 0.0);
    if (const auto rows = trailing_rows(in, plan)) {
      // Each output sums one run of consecutive inputs: rows over threads, four independent
      // accumulators per row (the adds pipeline instead of waiting on each other).
      const int64_t count = plan.count;
      parallel_for(*rows, std::max<int64_t>(1, kParallelGrain / count), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* p = pin + r * count;
          double s[4] = {0, 0, 0, 0};
          int64_t j = 0;
          for (; j + 4 <= count; j += 4)
            for (int k = 0; k < 4; ++k) s[k] += static_cast<double>(to_opmath(p[j + k]));
          for (; j < count; ++j) s[0] += static_cast<double>(to_opmath(p[j]));
          acc[r] = (s[0] + s[1]) + (s[2] + s[3]);
        }
      });
    } else {
      for_each_offset<2>(in.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        acc[o[1]] += static_cast<double>(to_opmath(pin[o[0]]));
      });
    }
    for (int64_t i = 0; i < n; ++i) {
      const T s = cast_value<T>(acc[i]);
      if (mean) {
        using M = opmath_t<T>;
        po[i] = from_opmath<T>(to_opmath(s) / static_cast<M>(plan.count));
      } else {
        po[i] = s;
      }
    }
  } else {
    std::vector<uint64_t> acc(n, 0);
    for_each_offset<2>(in.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
      acc[o[1]] += static_cast<uint64_t>(static_cast<int64_t>(pin[o[0]]));
    });
    for (int64_t i = 0; i < n; ++i) po[i] = cast_value<T>(static_cast<int64_t>(acc[i]));
  }
}

Result<Outputs> sum_mean(std::string_view op, const Tensor& self,
                         const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                         std::optional<DType> dtype_arg, bool mean) {
  DType dtype = self.dtype();
  if (dtype_arg) {
    dtype = *dtype_arg;
  } else if (!is_floating(dtype)) {
    KCHECK(!mean, ErrorKind::kBadInput,
           "mean could not infer the output dtype: the input must be floating point, got {}",
           dtype_name(dtype));
    dtype = DType::kInt64;
  }
  KCHECK(!mean || is_floating(dtype), ErrorKind::kBadInput,
         "mean needs a floating point dtype, got {}", dtype_name(dtype));
  SPLICE_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduce(op, self, dims, keepdim));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, plan.out_shape));
  const Tensor in = to_dtype(self, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sum_into<T>(out, in, plan, mean);
  });
  return Outputs{out};
}

template <bool kMean>
Result<Outputs> reduce_all(std::string_view op, std::span<const KernelArg> args) {
  // sum.default / mean.default(self, *, dtype=None)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(1));
  return sum_mean(op, self, std::nullopt, false, dtype, kMean);
}

template <bool kMean>
Result<Outputs> reduce_dims(std::string_view op, std::span<const KernelArg> args) {
  // sum.dim_IntList / mean.dim(self, int[1]? dim, bool keepdim=False, *, dtype=None)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.opt_int_list(1));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(2, false));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(3));
  return sum_mean(op, self, dims, keepdim, dtype, kMean);
}

// any/all .default(self) / .dim(self, int dim, keepdim) / .dims(self, int[]? dim, keepdim).
template <bool kAll>
Result<Outputs> any_all(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  std::optional<std::vector<int64_t>> dims;
  bool keepdim = false;
  if (a.size() > 1) {
    SPLICE_ASSIGN_OR_RETURN(dims, a.opt_int_list(1));
    SPLICE_ASSIGN_OR_RETURN(keepdim, a.boolean_or(2, false));
  }
  SPLICE_ASSIGN_OR_RETURN(ReducePlan plan,
                          plan_reduce(op, self, dims, keepdim, /*empty_means_all=*/false));
  // PyTorch keeps uint8 for uint8 inputs; every other dtype gives bool.
  const DType dtype = self.dtype() == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, DType::kBool, plan.out_shape));
  const Tensor in = to_dtype(self, DType::kBool);
  bool* po = out.data<bool>();
  const bool* pin = in.data<bool>();
  if (const auto rows = trailing_rows(in, plan)) {
    // Each output folds one run of consecutive inputs.
    const int64_t count = plan.count;
    for (int64_t r = 0; r < *rows; ++r) {
      const bool* p = pin + r * count;
      po[r] = kAll ? std::all_of(p, p + count, [](bool v) { return v; })
                   : std::any_of(p, p + count, [](bool v) { return v; });
    }
  } else {
    if (kAll) std::fill(po, po + out.numel(), true);  // the empty reduction is true
    for_each_offset<2>(in.sizes(), {in.strides().data(), plan.acc_strides.data()},
                       [&](const std::array<int64_t, 2>& o) {
                         po[o[1]] = kAll ? (po[o[1]] && pin[o[0]]) : (po[o[1]] || pin[o[0]]);
                       });
  }
  return Outputs{to_dtype(out, dtype)};
}

// prod.default(self, *, dtype=None) / prod.dim_int(self, int dim, keepdim=False, *,
// dtype=None): integer and bool inputs give int64 unless a dtype is given; integers multiply
// with wraparound, floats in double, rounded once.
Result<Outputs> prod(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  std::optional<std::vector<int64_t>> dims;
  bool keepdim = false;
  size_t dtype_at = 1;
  if (a.size() > 2) {  // dim_int
    SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
    dims = std::vector<int64_t>{dim};
    SPLICE_ASSIGN_OR_RETURN(keepdim, a.boolean_or(2, false));
    dtype_at = 3;
  }
  SPLICE_ASSIGN_OR_RETURN(auto dtype_arg, a.opt_dtype(dtype_at));
  const DType dtype = dtype_arg.value_or(is_floating(self.dtype()) ? self.dtype() : DType::kInt64);
  SPLICE_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduce(op, self, dims, keepdim));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, plan.out_shape));
  const Tensor in = to_dtype(self, dtype);
  const int64_t n = out.numel();
  const std::array<const int64_t*, 2> strides = {in.strides().data(), plan.acc_strides.data()};
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pin = in.data<T>();
    T* po = out.data<T>();
    if constexpr (is_float_v<T>) {
      std::vector<double> acc(n, 1.0);
      for_each_offset<2>(in.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        acc[o[1]] *= static_cast<double>(to_opmath(pin[o[0]]));
      });
      for (int64_t i = 0; i < n; ++i) po[i] = cast_value<T>(acc[i]);
    } else if constexpr (std::is_same_v<T, bool>) {
      std::fill(po, po + n, true);
      for_each_offset<2>(in.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        po[o[1]] = po[o[1]] && pin[o[0]];
      });
    } else {
      std::vector<uint64_t> acc(n, 1);
      for_each_offset<2>(in.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        acc[o[1]] *= static_cast<uint64_t>(static_cast<int64_t>(pin[o[0]]));
      });
      for (int64_t i = 0; i < n; ++i) po[i] = cast_value<T>(static_cast<int64_t>(acc[i]));
    }
  });
  return Outputs{out};
}

// var = sum((x - mean)^2) / max(0, N - correction) over the dims (N - correction <= 0 gives
// inf or NaN, as in PyTorch), and the mean, both in self's dtype; std is sqrt(var) taken in
// double before rounding. Two passes in double (PyTorch's Welford also accumulates in double).
Result<Outputs> var_impl(std::string_view op, const Tensor& self,
                         const std::optional<std::vector<int64_t>>& dims, const Scalar& correction,
                         bool keepdim, bool take_sqrt) {
  KCHECK(is_floating(self.dtype()), ErrorKind::kBadInput,
         "std and var only support floating point dtypes, got {}", dtype_name(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(ReducePlan plan, plan_reduce(op, self, dims, keepdim));
  SPLICE_ASSIGN_OR_RETURN(Tensor var, new_tensor(op, self.dtype(), plan.out_shape));
  SPLICE_ASSIGN_OR_RETURN(Tensor mean, new_tensor(op, self.dtype(), plan.out_shape));
  const int64_t n = var.numel();
  const std::array<const int64_t*, 2> strides = {self.strides().data(), plan.acc_strides.data()};
  const double count = static_cast<double>(plan.count);
  const double divisor = std::max(0.0, count - correction.to_double());
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      const T* pin = self.data<T>();
      std::vector<double> sum(n, 0.0), m2(n, 0.0);
      for_each_offset<2>(self.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        sum[o[1]] += static_cast<double>(to_opmath(pin[o[0]]));
      });
      for (int64_t i = 0; i < n; ++i) sum[i] /= count;  // now the mean (NaN when count is 0)
      for_each_offset<2>(self.sizes(), strides, [&](const std::array<int64_t, 2>& o) {
        const double d = static_cast<double>(to_opmath(pin[o[0]])) - sum[o[1]];
        m2[o[1]] += d * d;
      });
      for (int64_t i = 0; i < n; ++i) {
        const double v = m2[i] / divisor;
        var.data<T>()[i] = cast_value<T>(take_sqrt ? std::sqrt(v) : v);
        mean.data<T>()[i] = cast_value<T>(sum[i]);
      }
    }
  });
  return Outputs{var, mean};
}

// var_mean.correction(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)
// -> (var, mean), correction defaulting to 1.
Result<Outputs> var_mean(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.opt_int_list(1));
  SPLICE_ASSIGN_OR_RETURN(Scalar correction, a.scalar_or(2, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(3, false));
  return var_impl(op, self, dims, correction, keepdim, false);
}

// var/std .correction(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)
// and .dim(self, int[1]? dim, bool unbiased=True, bool keepdim=False) (unbiased is
// correction 1, else 0): the first output of var_impl.
template <bool kStd, bool kUnbiasedForm>
Result<Outputs> var_std(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.opt_int_list(1));
  Scalar correction(int64_t{1});
  if constexpr (kUnbiasedForm) {
    SPLICE_ASSIGN_OR_RETURN(bool unbiased, a.boolean_or(2, true));
    correction = Scalar(int64_t{unbiased ? 1 : 0});
  } else {
    SPLICE_ASSIGN_OR_RETURN(correction, a.scalar_or(2, Scalar(int64_t{1})));
  }
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(3, false));
  SPLICE_ASSIGN_OR_RETURN(Outputs both, var_impl(op, self, dims, correction, keepdim, kStd));
  return Outputs{both[0]};
}

}  // namespace

std::span<const KernelEntry> reduce_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::sum, reduce_all<false>>(),
      entry<OpId::sum_dim_IntList, reduce_dims<false>>(),
      entry<OpId::mean, reduce_all<true>>(),
      entry<OpId::mean_dim, reduce_dims<true>>(),
      entry<OpId::any, any_all<false>>(),
      entry<OpId::any_dim, any_all<false>>(),
      entry<OpId::any_dims, any_all<false>>(),
      entry<OpId::all, any_all<true>>(),
      entry<OpId::all_dim, any_all<true>>(),
      entry<OpId::all_dims, any_all<true>>(),
      entry<OpId::var_mean_correction, var_mean>(),
      entry<OpId::var_correction, var_std<false, false>>(),
      entry<OpId::var_dim, var_std<false, true>>(),
      entry<OpId::std_correction, var_std<true, false>>(),
      entry<OpId::std_dim, var_std<true, true>>(),
      entry<OpId::prod, prod>(),
      entry<OpId::prod_dim_int, prod>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
