// Shape rules of the reductions: the reduced dims (a dim list, one dim, or every dim when None
// or empty) are removed or kept as 1 with keepdim. Dtypes as torch/_refs reductions: sum, prod
// and cumsum promote bool and integers to int64 unless a dtype is given (an empty dim list
// reduces every dim, except for any/all.dims, where it reduces none); mean and the norms
// need a floating input (or a dtype); any/all give bool except on uint8; argmax/argmin and the
// indices of max/min are int64; var/std (and var_mean/std_mean) keep the floating dtype.
#include "ir/shape_rules_util.h"

namespace splice::ir::rules {

namespace {

// The dims argument as a list (an `int dim` becomes one element; None stays None).
Result<std::optional<std::vector<int64_t>>> dims_of(RuleArgs& a, std::string_view name) {
  if (!a.has(name)) return std::optional<std::vector<int64_t>>();
  return a.optional_int_list(name);
}

Result<bool> keepdim_of(RuleArgs& a) {
  if (!a.has("keepdim")) return false;
  return a.boolean("keepdim");
}

Result<Sizes> reduced(RuleArgs& a, const TensorType& self, std::string_view dim_name = "dim") {
  SPLICE_ASSIGN_OR_RETURN(auto dims, dims_of(a, dim_name));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, keepdim_of(a));
  return reduce_sizes(a, self, dims, keepdim);
}

DType int_to_long(DType d) { return is_floating(d) ? d : DType::kInt64; }

Result<Outputs> any_all(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto dims, dims_of(a, "dim"));
  // any.dims/all.dims reduce over exactly the listed dims: an empty list reduces none (unlike
  // sum's legacy "empty means all"); None reduces all.
  const DType dtype = self->dtype == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
  if (dims && dims->empty() && a.node().target().ends_with(".dims")) return one(dtype, self->sizes);
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  return one(dtype, std::move(sizes));
}

Result<Outputs> sum_prod(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  return one(a.dtype("dtype").value_or(int_to_long(self->dtype)), std::move(sizes));
}

Result<Outputs> mean(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  auto dtype = a.dtype("dtype");
  if (!dtype && !is_floating(self->dtype))
    return a.error(
        "mean(): could not infer output dtype: the input must be floating point, "
        "got {}",
        dtype_name(self->dtype));
  return one(dtype.value_or(self->dtype), std::move(sizes));
}

Result<Outputs> keep_dtype(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  return one(self->dtype, std::move(sizes));
}

Result<Outputs> values_indices(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  return Outputs{tensor_out(self->dtype, sizes), tensor_out(DType::kInt64, sizes)};
}

Result<Outputs> arg_extremum(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto dims, dims_of(a, "dim"));
  SPLICE_ASSIGN_OR_RETURN(bool keepdim, keepdim_of(a));
  // dim None: the flattened input's index, 0-d (or all ones with keepdim).
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduce_sizes(a, *self, dims, keepdim));
  return one(DType::kInt64, std::move(sizes));
}

Result<Outputs> full_extremum(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  return one(self->dtype, {});
}

Result<const TensorType*> floating_self(RuleArgs& a, std::string_view op) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (!is_floating(self->dtype))
    return a.error("{} only supports floating point inputs, got {}", op, dtype_name(self->dtype));
  return self;
}

Result<Outputs> var_std(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, floating_self(a, "std and var"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  return one(self->dtype, std::move(sizes));
}

// var_mean / std_mean: (var or std, mean), both in self's dtype.
Result<Outputs> moments(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, floating_self(a, "std and var"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  return Outputs{tensor_out(self->dtype, sizes), tensor_out(self->dtype, sizes)};
}

Result<Outputs> cumsum(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  return one(a.dtype("dtype").value_or(int_to_long(self->dtype)), self->sizes);
}

Result<Outputs> vector_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, floating_self(a, "linalg.vector_norm"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, reduced(a, *self));
  auto dtype = a.has("dtype") ? a.dtype("dtype") : std::nullopt;
  if (dtype && !is_floating(*dtype))
    return a.error("linalg.vector_norm: dtype should be floating point, got {}",
                   dtype_name(*dtype));
  return one(dtype.value_or(self->dtype), std::move(sizes));
}

constexpr RuleEntry kEntries[] = {
    {OpId::any, any_all},
    {OpId::any_dim, any_all},
    {OpId::any_dims, any_all},
    {OpId::all, any_all},
    {OpId::all_dim, any_all},
    {OpId::all_dims, any_all},
    {OpId::sum, sum_prod},
    {OpId::sum_dim_IntList, sum_prod},
    {OpId::prod, sum_prod},
    {OpId::prod_dim_int, sum_prod},
    {OpId::mean, mean},
    {OpId::mean_dim, mean},
    {OpId::amax, keep_dtype},
    {OpId::amin, keep_dtype},
    {OpId::max_dim, values_indices},
    {OpId::min_dim, values_indices},
    {OpId::argmax, arg_extremum},
    {OpId::argmin, arg_extremum},
    {OpId::max, full_extremum},
    {OpId::min, full_extremum},
    {OpId::var_dim, var_std},
    {OpId::var_correction, var_std},
    {OpId::std_dim, var_std},
    {OpId::std_correction, var_std},
    {OpId::var_mean_correction, moments},
    {OpId::std_mean_correction, moments},
    {OpId::std_mean_dim, moments},
    {OpId::cumsum, cumsum},
    {OpId::linalg_vector_norm, vector_norm},
    {OpId::norm_ScalarOpt_dim, vector_norm},
    {OpId::norm_Scalar, vector_norm},
};

}  // namespace

std::span<const RuleEntry> reduce_rules() { return kEntries; }

}  // namespace splice::ir::rules
