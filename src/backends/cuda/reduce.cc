// The reduction launchers of reduce.h: argument and dtype checks with PyTorch's rules and the
// CPU backend's messages, the layout plan, then the kernel launch (reduce_launch.h).
#include "backends/cuda/reduce.h"

#include <cmath>

#include "backends/cuda/reduce_launch.h"
#include "backends/cuda/reduce_plan.h"
#include "tensor/tensor.h"

namespace splice::cuda {

namespace {

Shape shape_of(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

// Every reduced dim must be non-empty for reductions without an identity (max, min, argmax).
Result<void> check_nonempty_reduced(std::string_view op, const DeviceTensor& self,
                                    const std::vector<bool>& reduced) {
  for (int d = 0; d < self.rank; ++d) {
    SPLICE_CHECK_OR_RETURN(!reduced[d] || self.sizes[d] != 0, ErrorKind::kShapeMismatch,
                           "{}: expected reduction dim {} to have non-zero size (sizes {})", op, d,
                           shape_string(shape_of(self)));
  }
  return ok_result();
}

Result<void> check_dtype(std::string_view op, const char* what, DType got, DType expected) {
  SPLICE_CHECK_OR_RETURN(got == expected, ErrorKind::kBadInput, "{}: {} must be {}, got {}", op,
                         what, dtype_name(expected), dtype_name(got));
  return ok_result();
}

}  // namespace

Result<void> reduce_sum(const DeviceTensor& self, const DimList& dims, bool keepdim,
                        const DeviceTensor& out, const KernelScratch& scratch,
                        cudaStream_t stream) {
  constexpr std::string_view op = "sum";
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, true));
  const DeviceTensor* outs[] = {&out};
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  return launch_sum(layout, self, out, false, scratch, stream);
}

Result<void> reduce_mean(const DeviceTensor& self, const DimList& dims, bool keepdim,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream) {
  constexpr std::string_view op = "mean";
  SPLICE_CHECK_OR_RETURN(is_floating(out.dtype), ErrorKind::kBadInput,
                         "{}: needs a floating point dtype, got {}", op, dtype_name(out.dtype));
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, true));
  const DeviceTensor* outs[] = {&out};
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  return launch_sum(layout, self, out, true, scratch, stream);
}

Result<void> reduce_prod(const DeviceTensor& self, const DimList& dims, bool keepdim,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream) {
  constexpr std::string_view op = "prod";
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, true));
  const DeviceTensor* outs[] = {&out};
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  return launch_prod(layout, self, out, scratch, stream);
}

Result<void> reduce_any_all(const DeviceTensor& self, const DimList& dims, bool keepdim, bool all,
                            const DeviceTensor& out, const KernelScratch& scratch,
                            cudaStream_t stream) {
  const std::string_view op = all ? "all" : "any";
  SPLICE_CHECK_OR_RETURN(out.dtype == DType::kBool || out.dtype == DType::kUInt8,
                         ErrorKind::kBadInput, "{}: the output must be bool or uint8, got {}", op,
                         dtype_name(out.dtype));
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, false));
  const DeviceTensor* outs[] = {&out};
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  return launch_any_all(layout, self, out, all, scratch, stream);
}

Result<void> reduce_extreme(const DeviceTensor& self, const DimList& dims, bool keepdim,
                            bool is_max, const DeviceTensor& out, const KernelScratch& scratch,
                            cudaStream_t stream) {
  const std::string_view op = is_max ? "amax" : "amin";
  SPLICE_TRY(check_dtype(op, "the output dtype", out.dtype, self.dtype));
  SPLICE_CHECK_OR_RETURN(dims || self.numel() != 0, ErrorKind::kShapeMismatch,
                         "{}: expected reduction dim to be specified for an empty input (sizes {})",
                         op, shape_string(shape_of(self)));
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, true));
  SPLICE_TRY(check_nonempty_reduced(op, self, reduced));
  const DeviceTensor* outs[] = {&out};
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  return launch_extreme(layout, self, out, is_max, scratch, stream);
}

Result<void> reduce_arg_extreme(const DeviceTensor& self, std::optional<int64_t> dim, bool keepdim,
                                bool is_max, const DeviceTensor* values,
                                const DeviceTensor& indices, const KernelScratch& scratch,
                                cudaStream_t stream) {
  const std::string_view op =
      values ? (is_max ? "max.dim" : "min.dim") : (is_max ? "argmax" : "argmin");
  SPLICE_TRY(check_dtype(op, "indices", indices.dtype, DType::kInt64));
  if (values) {
    SPLICE_TRY(check_dtype(op, "the values' dtype", values->dtype, self.dtype));
  } else {
    SPLICE_CHECK_OR_RETURN(self.dtype != DType::kBool, ErrorKind::kBadInput,
                           "{}: not implemented for bool tensors", op);
  }
  std::vector<bool> reduced;
  if (!dim) {
    SPLICE_CHECK_OR_RETURN(values == nullptr, ErrorKind::kInternal, "{}: values need a dim", op);
    SPLICE_CHECK_OR_RETURN(self.numel() != 0, ErrorKind::kShapeMismatch,
                           "{}: expected a reduction dim to be given for an empty input (sizes {})",
                           op, shape_string(shape_of(self)));
    reduced.assign(static_cast<size_t>(self.rank), true);
  } else {
    SPLICE_ASSIGN_OR_RETURN(reduced, reduced_dims(op, self.rank, std::vector<int64_t>{*dim}, true));
    SPLICE_TRY(check_nonempty_reduced(op, self, reduced));
  }
  const DeviceTensor* with_values[] = {values, &indices};
  const DeviceTensor* only_indices[] = {&indices};
  const std::span<const DeviceTensor* const> outs =
      values ? std::span<const DeviceTensor* const>(with_values)
             : std::span<const DeviceTensor* const>(only_indices);
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, true));
  return launch_arg_extreme(layout, self, values, indices, is_max, scratch, stream);
}

Result<void> reduce_var(const DeviceTensor& self, const DimList& dims, bool keepdim,
                        double correction, bool take_sqrt, const DeviceTensor& var_out,
                        const DeviceTensor* mean_out, const KernelScratch& scratch,
                        cudaStream_t stream) {
  const std::string_view op = take_sqrt ? "std" : "var";
  SPLICE_CHECK_OR_RETURN(is_floating(self.dtype), ErrorKind::kBadInput,
                         "{}: std and var only support floating point dtypes, got {}", op,
                         dtype_name(self.dtype));
  SPLICE_TRY(check_dtype(op, "the output dtype", var_out.dtype, self.dtype));
  if (mean_out) SPLICE_TRY(check_dtype(op, "the mean's dtype", mean_out->dtype, self.dtype));
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, true));
  const DeviceTensor* with_mean[] = {&var_out, mean_out};
  const DeviceTensor* only_var[] = {&var_out};
  const std::span<const DeviceTensor* const> outs =
      mean_out ? std::span<const DeviceTensor* const>(with_mean)
               : std::span<const DeviceTensor* const>(only_var);
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  const double divisor = std::max(0.0, static_cast<double>(layout.count) - correction);
  return launch_var(layout, self, var_out, mean_out, divisor, take_sqrt, scratch, stream);
}

Result<void> reduce_norm(const DeviceTensor& self, double ord, const DimList& dims, bool keepdim,
                         const DeviceTensor& out, const KernelScratch& scratch,
                         cudaStream_t stream) {
  constexpr std::string_view op = "linalg_vector_norm";
  SPLICE_CHECK_OR_RETURN(is_floating(self.dtype), ErrorKind::kBadInput,
                         "{}: expected a floating point tensor as input, got {}", op,
                         dtype_name(self.dtype));
  SPLICE_CHECK_OR_RETURN(is_floating(out.dtype), ErrorKind::kBadInput,
                         "{}: dtype should be floating point, got {}", op, dtype_name(out.dtype));
  SPLICE_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_dims(op, self.rank, dims, true));
  const DeviceTensor* outs[] = {&out};
  SPLICE_ASSIGN_OR_RETURN(ReduceLayout layout,
                          plan_reduce_layout(op, self, reduced, keepdim, outs, false));
  SPLICE_CHECK_OR_RETURN(layout.count > 0 || (ord >= 0 && !std::isinf(ord)),
                         ErrorKind::kShapeMismatch,
                         "{}: cannot compute the {} norm on an empty tensor because the operation "
                         "does not have an identity",
                         op, ord);
  NormKind kind = NormKind::kPower;
  if (std::isinf(ord))
    kind = ord > 0 ? NormKind::kInf : NormKind::kNegInf;
  else if (ord == 0.0)
    kind = NormKind::kZero;
  else if (ord == 1.0)
    kind = NormKind::kOne;
  else if (ord == 2.0)
    kind = NormKind::kTwo;
  return launch_norm(layout, self, out, kind, ord, scratch, stream);
}

}  // namespace splice::cuda
