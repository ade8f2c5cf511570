// Shape rules of the 3-d poolings (max_pool3d with and without indices, avg_pool3d): self
// [C, T, H, W] or [N, C, T, H, W], the last three sizes pooled. The checks, their order and
// their messages are torch/_meta_registrations.py's (meta_max_pool3d_with_indices,
// meta_avg_pool3d, pooling_output_shape and pool3d_shape_check), what export runs; eager's CPU
// kernels refuse a few dtypes the meta functions let through (bool, and avg_pool3d of unsigned
// integers).
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "ir/shape_rules_util.h"

namespace splice::ir::rules {

namespace {

// (T, H, W) each.
struct Pool3dArgs {
  std::array<int64_t, 3> kernel{}, stride{}, padding{}, dilation{1, 1, 1};
  bool ceil_mode = false;
};

// A pooling list of one int (all three dims) or three; its length checked by the caller.
std::array<int64_t, 3> triple(const std::vector<int64_t>& v) {
  if (v.size() == 1) return {v[0], v[0], v[0]};
  return {v[0], v[1], v[2]};
}

// The list arguments as meta_max_pool3d_with_indices and meta_avg_pool3d read them: max_pool3d's
// messages say "must either be" (dilation "must be either"), avg_pool3d's "must be".
Result<Pool3dArgs> read_pool3d_args(RuleArgs& a, bool average) {
  const std::string_view op = average ? "avg_pool3d" : "max_pool3d";
  const std::string_view must = average ? "must be" : "must either be";
  Pool3dArgs out;
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, a.int_list("kernel_size"));
  if (kernel.size() != 1 && kernel.size() != 3)
    return a.error("{}: kernel_size {} a single int, or a tuple of three ints", op, must);
  out.kernel = triple(kernel);
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> stride, a.int_list("stride"));
  if (!stride.empty() && stride.size() != 1 && stride.size() != 3)
    return a.error("{}: stride {} omitted, a single int, or a tuple of three ints", op, must);
  out.stride = stride.empty() ? out.kernel : triple(stride);  // omitted: the kernel
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (average && self->dtype == DType::kUInt8)
    return a.error("\"avg_pool3d\" not implemented for 'torch.uint8'");
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> padding, a.int_list("padding"));
  if (padding.size() != 1 && padding.size() != 3)
    return a.error("{}: padding {} a single int, or a tuple of three ints", op, must);
  out.padding = triple(padding);
  if (!average) {
    SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, a.int_list("dilation"));
    if (dilation.size() != 1 && dilation.size() != 3)
      return a.error("max_pool3d: dilation must be either a single int, or a tuple of three ints");
    out.dilation = triple(dilation);
  }
  SPLICE_ASSIGN_OR_RETURN(out.ceil_mode, a.boolean("ceil_mode"));
  return out;
}

// Python's floor division (the meta function's `//`), b > 0.
int64_t floor_divide(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// pooling_output_shape's checks of one dim's window, then the dim's output size.
Result<SymExpr> pooled_size(RuleArgs& a, const SymExpr& n, int64_t k, int64_t pad, int64_t stride,
                            int64_t dilation, bool ceil_mode) {
  if (stride == 0) return a.error("stride should not be zero");
  if (pad < 0) return a.error("pad must be non-negative, but got pad: {}", pad);
  if (pad > floor_divide((k - 1) * dilation + 1, 2))
    return a.error(
        "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and "
        "dilation={}",
        pad, k, dilation);
  SPLICE_ASSIGN_OR_RETURN(SymExpr o, pool_output_size(a, n, k, pad, stride, dilation, ceil_mode));
  return a.env().simplify(o);
}

// The output sizes (pooling_output_shape of T, H and W), then pool3d_shape_check; avg_pool3d
// also checks that the input is no smaller than the kernel. The output: self's leading dims,
// then (oT, oH, oW).
Result<Sizes> pool3d_output(RuleArgs& a, const TensorType& self, const Pool3dArgs& p,
                            bool average) {
  const int64_t rank = self.rank();
  if (rank != 4 && rank != 5)
    return a.error("non-empty 4D or 5D (batch mode) tensor expected for input");
  const auto& [k, s, pad, d] = std::tie(p.kernel, p.stride, p.padding, p.dilation);
  const SymExpr* in = &self.sizes[rank - 3];  // (T, H, W)
  std::array<SymExpr, 3> pooled;
  for (int i = 0; i < 3; ++i) {
    SPLICE_ASSIGN_OR_RETURN(pooled[i],
                            pooled_size(a, in[i], k[i], pad[i], s[i], d[i], p.ceil_mode));
  }
  if (k[0] <= 0 || k[1] <= 0 || k[2] <= 0)
    return a.error("kernel size should be greater than zero, but got kT: {}, kH: {}, kW: {}", k[0],
                   k[1], k[2]);
  if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0)
    return a.error("stride should be greater than zero, but got dT: {}, dH: {}, dW: {}", s[0], s[1],
                   s[2]);
  if (d[0] <= 0 || d[1] <= 0 || d[2] <= 0)
    return a.error(
        "dilation should be greater than zero, but got dilationT: {}, dilationH: {}, "
        "dilationW: {}",
        d[0], d[1], d[2]);
  const std::string name = average ? "avg_pool3d()" : "max_pool3d_with_indices()";
  const std::string shape = "torch.Size(" + sizes_string(self.sizes) + ")";
  for (int64_t i = rank == 5 ? 1 : 0; i < rank; ++i) {  // a batch of 0 is allowed
    SPLICE_TRY(a.require(
        SymExpr::make(SymOp::kGe, {self.sizes[i], 1}),
        fmt::format("{}: Expected input's non-batch dimensions to have positive length, but input "
                    "has a shape of {} and non-batch dimension {} has length zero!",
                    name, shape, self.sizes[i].to_string())));
  }
  if (average) {
    const std::string what = fmt::format(
        "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})",
        in[0].to_string(), in[1].to_string(), in[2].to_string(), k[0], k[1], k[2]);
    for (int i = 0; i < 3; ++i)
      SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {in[i], k[i]}), what));
  }
  if (k[0] / 2 < pad[0] || k[2] / 2 < pad[2] || k[1] / 2 < pad[1])
    return a.error(
        "pad should be smaller than or equal to half of kernel size, but got kT: {} kW: {} kH: {} "
        "padT: {} padW: {} padH: {}",
        k[0], k[2], k[1], pad[0], pad[2], pad[1]);
  const std::string slices = self.sizes[rank - 4].to_string();
  const std::string what = fmt::format(
      "Given input size: ({}x{}x{}x{}). Calculated output size: ({}x{}x{}x{}). Output size is "
      "too small",
      slices, in[0].to_string(), in[1].to_string(), in[2].to_string(), slices,
      pooled[0].to_string(), pooled[1].to_string(), pooled[2].to_string());
  for (const SymExpr& o : pooled) SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {o, 1}), what));
  Sizes out(self.sizes.begin(), self.sizes.end() - 3);
  out.insert(out.end(), pooled.begin(), pooled.end());
  return out;
}

// max_pool3d and max_pool3d_with_indices (also int64 indices of the same shape); eager's kernel
// refuses bool.
Result<Outputs> max_pool3d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Pool3dArgs args, read_pool3d_args(a, /*average=*/false));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, pool3d_output(a, *self, args, /*average=*/false));
  if (self->dtype == DType::kBool) return a.error("\"max_pool3d\" not implemented for 'Bool'");
  Outputs result = {tensor_out(self->dtype, out)};
  if (a.node().op_id() == OpId::max_pool3d_with_indices)
    result.push_back(tensor_out(DType::kInt64, out));
  return result;
}

// avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override): eager's kernel also refuses a zero divisor (the meta function's check of it
// never fails) and bool.
Result<Outputs> avg_pool3d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Pool3dArgs args, read_pool3d_args(a, /*average=*/true));
  if (self->rank() != 4 && self->rank() != 5)
    return a.error("non-empty 4D or 5D (batch mode) tensor expected for input");
  if (!a.is_none("divisor_override")) {
    SPLICE_ASSIGN_OR_RETURN(int64_t divisor, a.integer("divisor_override"));
    if (divisor == 0) return a.error("divisor must be not zero");
  }
  SPLICE_ASSIGN_OR_RETURN(Sizes out, pool3d_output(a, *self, args, /*average=*/true));
  if (self->dtype == DType::kBool)
    return a.error("\"avg_pool3d_out_frame\" not implemented for 'Bool'");
  return one(self->dtype, std::move(out));
}

constexpr RuleEntry kEntries[] = {
    {OpId::max_pool3d, max_pool3d},
    {OpId::max_pool3d_with_indices, max_pool3d},
    {OpId::avg_pool3d, avg_pool3d},
};

}  // namespace

std::span<const RuleEntry> pool3d_rules() { return kEntries; }

}  // namespace splice::ir::rules
