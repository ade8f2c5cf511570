// Reductions on the CUDA backend (reduce.h, scan.h): sum, mean, prod, any/all, amax/amin,
// max/min (all, or .dim with indices), argmax/argmin, var/std (+ var_mean) and cumsum, with the
// CPU kernels' output shapes and dtypes. Split reductions use the session's scratch block.
#include "backends/cuda/kernel_glue.h"
#include "backends/cuda/reduce.h"
#include "backends/cuda/reduce_plan.h"
#include "backends/cuda/scan.h"

namespace splice::cuda::glue {

namespace {

// Scratch for split partials: any size is correct, this lets most reductions split.
constexpr size_t kReduceScratch = size_t{4} << 20;

// sum/prod/cumsum's result dtype: the dtype argument, else int64 for integer and bool inputs.
DType accumulate_dtype(DType self, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(self) ? self : DType::kInt64;
}

struct Reduction {
  Tensor self;
  DimList dims;
  bool keepdim = false;
  Shape shape;  // the output's
};

Result<Reduction> plan(Ctx& ctx, const Tensor& self, DimList dims, bool keepdim,
                       bool empty_means_all) {
  SPLICE_ASSIGN_OR_RETURN(auto reduced, reduced_dims(ctx.op(), self.dim(), dims, empty_means_all));
  Reduction r{self, std::move(dims), keepdim, {}};
  r.shape = reduced_shape(self.sizes(), reduced, keepdim);
  return r;
}

// sum/mean/prod: kKind 0 sum, 1 mean, 2 prod; kDims: the .dim forms (dims, keepdim, dtype).
template <int kKind, bool kDims>
Result<Outputs> sum_like(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  DimList dims;
  bool keepdim = false;
  size_t dtype_at = 1;
  if constexpr (kDims) {
    if constexpr (kKind == 2) {  // prod.dim_int(self, int dim, keepdim, *, dtype)
      SPLICE_ASSIGN_OR_RETURN(int64_t d, a.integer(1));
      dims = std::vector<int64_t>{d};
    } else {
      SPLICE_ASSIGN_OR_RETURN(dims, a.opt_int_list(1));
    }
    SPLICE_ASSIGN_OR_RETURN(keepdim, a.boolean_or(2, false));
    dtype_at = 3;
  }
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(dtype_at));
  const DType out_dtype =
      kKind == 1 ? dtype.value_or(self.dtype()) : accumulate_dtype(self.dtype(), dtype);
  SPLICE_ASSIGN_OR_RETURN(Reduction r, plan(ctx, self, dims, keepdim, true));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(out_dtype, r.shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(kReduceScratch));
  if constexpr (kKind == 0) SPLICE_TRY(reduce_sum(s, dims, keepdim, o, scratch, ctx.stream()));
  if constexpr (kKind == 1) SPLICE_TRY(reduce_mean(s, dims, keepdim, o, scratch, ctx.stream()));
  if constexpr (kKind == 2) SPLICE_TRY(reduce_prod(s, dims, keepdim, o, scratch, ctx.stream()));
  return Outputs{out};
}

// any/all: kForm 0 .default, 1 .dim (one dim), 2 .dims (a list, [] reducing nothing).
template <bool kAll, int kForm>
Result<Outputs> any_all(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  DimList dims;
  bool keepdim = false;
  if constexpr (kForm == 1) {
    SPLICE_ASSIGN_OR_RETURN(int64_t d, a.integer(1));
    dims = std::vector<int64_t>{d};
  } else if constexpr (kForm == 2) {
    SPLICE_ASSIGN_OR_RETURN(dims, a.opt_int_list(1));
  }
  if constexpr (kForm != 0) {
    SPLICE_ASSIGN_OR_RETURN(keepdim, a.boolean_or(2, false));
  }
  SPLICE_ASSIGN_OR_RETURN(Reduction r, plan(ctx, self, dims, keepdim, false));
  const DType dtype = self.dtype() == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(dtype, r.shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(kReduceScratch));
  SPLICE_TRY(reduce_any_all(s, dims, keepdim, kAll, o, scratch, ctx.stream()));
  return Outputs{out};
}

// amax/amin(self, dim=[], keepdim=False) (kAll false) and max/min.default(self) (kAll true).
template <bool kMax, bool kAll>
Result<Outputs> extreme(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  DimList dims;
  bool keepdim = false;
  if constexpr (!kAll) {
    SPLICE_ASSIGN_OR_RETURN(auto d, a.int_list(1));
    dims = d;
    SPLICE_ASSIGN_OR_RETURN(keepdim, a.boolean_or(2, false));
  }
  SPLICE_ASSIGN_OR_RETURN(Reduction r, plan(ctx, self, dims, keepdim, true));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, ctx.output(self.dtype(), r.shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(kReduceScratch));
  SPLICE_TRY(reduce_extreme(s, dims, keepdim, kMax, o, scratch, ctx.stream()));
  return Outputs{out};
}

// max.dim/min.dim(self, dim, keepdim) -> (values, indices) (kValues) and argmax/argmin(self,
// dim=None, keepdim=False).
template <bool kMax, bool kValues>
Result<Outputs> arg_extreme(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(std::optional<int64_t> dim, a.opt_integer(1));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(2, false));
  Shape shape;
  if (dim) {
    SPLICE_ASSIGN_OR_RETURN(Reduction r,
                            plan(ctx, self, std::vector<int64_t>{*dim}, keepdim, true));
    shape = r.shape;
  } else if (keepdim) {
    shape.assign(static_cast<size_t>(self.dim()), 1);
  }
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(kReduceScratch));
  if constexpr (kValues) {
    SPLICE_ASSIGN_OR_RETURN(Tensor values, ctx.output(self.dtype(), shape));
    SPLICE_ASSIGN_OR_RETURN(Tensor indices, ctx.fresh(DType::kInt64, shape));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, values));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, indices));
    SPLICE_TRY(reduce_arg_extreme(s, dim, keepdim, kMax, &v, i, scratch, ctx.stream()));
    return Outputs{values, indices};
  } else {
    SPLICE_ASSIGN_OR_RETURN(Tensor indices, ctx.output(DType::kInt64, shape));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor i, dev(op, indices));
    SPLICE_TRY(reduce_arg_extreme(s, dim, keepdim, kMax, nullptr, i, scratch, ctx.stream()));
    return Outputs{indices};
  }
}

// var/std .dim(self, dim?, unbiased=True, keepdim=False) (kCorrectionForm false) and
// .correction(self, dim=None, *, correction=None, keepdim=False); var_mean (kMean).
template <bool kSqrt, bool kCorrectionForm, bool kMean>
Result<Outputs> var_like(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(DimList dims, a.opt_int_list(1));
  double correction = 1;
  if constexpr (kCorrectionForm) {
    if (!a.is_none(2)) {
      SPLICE_ASSIGN_OR_RETURN(Scalar c, a.scalar(2));
      correction = c.to_double();
    }
  } else {
    SPLICE_ASSIGN_OR_RETURN(bool unbiased, a.boolean_or(2, true));
    correction = unbiased ? 1 : 0;
  }
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, a.boolean_or(3, false));
  SPLICE_ASSIGN_OR_RETURN(Reduction r, plan(ctx, self, dims, keepdim, true));
  SPLICE_ASSIGN_OR_RETURN(Tensor var, ctx.output(self.dtype(), r.shape));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor v, dev(op, var));
  SPLICE_ASSIGN_OR_RETURN(KernelScratch scratch, ctx.scratch(kReduceScratch));
  if constexpr (kMean) {
    SPLICE_ASSIGN_OR_RETURN(Tensor mean, ctx.fresh(self.dtype(), r.shape));
    SPLICE_ASSIGN_OR_RETURN(DeviceTensor m, dev(op, mean));
    SPLICE_TRY(reduce_var(s, dims, keepdim, correction, kSqrt, v, &m, scratch, ctx.stream()));
    return Outputs{var, mean};
  } else {
    SPLICE_TRY(reduce_var(s, dims, keepdim, correction, kSqrt, v, nullptr, scratch, ctx.stream()));
    return Outputs{var};
  }
}

// cumsum(self, dim, *, dtype=None).
Result<Outputs> cumsum_kernel(Ctx& ctx, std::span<const KernelArg> args) {
  const std::string_view op = ctx.op();
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  SPLICE_ASSIGN_OR_RETURN(Tensor out,
                          ctx.output(accumulate_dtype(self.dtype(), dtype), self.sizes()));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor s, dev(op, self));
  SPLICE_ASSIGN_OR_RETURN(DeviceTensor o, dev(op, out));
  SPLICE_TRY(cumsum(s, dim, o, ctx.stream()));
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> reduce_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::sum, sum_like<0, false>>(),
      entry<OpId::sum_dim_IntList, sum_like<0, true>>(),
      entry<OpId::mean, sum_like<1, false>>(),
      entry<OpId::mean_dim, sum_like<1, true>>(),
      entry<OpId::prod, sum_like<2, false>>(),
      entry<OpId::prod_dim_int, sum_like<2, true>>(),
      entry<OpId::any, any_all<false, 0>>(),
      entry<OpId::any_dim, any_all<false, 1>>(),
      entry<OpId::any_dims, any_all<false, 2>>(),
      entry<OpId::all, any_all<true, 0>>(),
      entry<OpId::all_dim, any_all<true, 1>>(),
      entry<OpId::all_dims, any_all<true, 2>>(),
      entry<OpId::amax, extreme<true, false>>(),
      entry<OpId::amin, extreme<false, false>>(),
      entry<OpId::max, extreme<true, true>>(),
      entry<OpId::min, extreme<false, true>>(),
      entry<OpId::max_dim, arg_extreme<true, true>>(),
      entry<OpId::min_dim, arg_extreme<false, true>>(),
      entry<OpId::argmax, arg_extreme<true, false>>(),
      entry<OpId::argmin, arg_extreme<false, false>>(),
      entry<OpId::var_dim, var_like<false, false, false>>(),
      entry<OpId::var_correction, var_like<false, true, false>>(),
      entry<OpId::var_mean_correction, var_like<false, true, true>>(),
      entry<OpId::std_dim, var_like<true, false, false>>(),
      entry<OpId::std_correction, var_like<true, true, false>>(),
      entry<OpId::cumsum, cumsum_kernel>(),
  };
  return kEntries;
}

}  // namespace splice::cuda::glue
