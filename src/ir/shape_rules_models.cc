// Shape rules of the ops that transformers models beyond the decoder family need (found by
// tests/cases/sweep_hf.py): the convolutions of vision and audio front ends (convolution and
// the conv1d/2d/3d forms the training IR keeps, "valid"/"same" string padding included), as
// ATen's conv_output_size computes them; and the routing ops of mixture-of-experts layers —
// sort and topk (values keep the input's dtype, indices are int64), histc ([bins] in the
// input's dtype) and transformers' grouped_mm_fallback custom op ([S, N] for input [S, K] and
// weight [E, K, N]). passes/decompose_composites rewrites all of them into primitive ops.
#include "ir/shape_rules_util.h"

namespace splice::ir::rules {

namespace {

// A conv list argument of `spatial` entries; one entry stands for all (conv2d(stride=2)).
Result<std::vector<int64_t>> conv_list(RuleArgs& a, std::string_view name, size_t spatial) {
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> v, a.int_list(name));
  if (v.size() == 1 && spatial > 1) v.assign(spatial, v[0]);
  if (v.size() != spatial)
    return a.error("expected {} to have {} elements, got {}", name, spatial, v.size());
  return v;
}

Result<Outputs> convolution(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* weight, a.tensor("weight"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* bias, a.optional_tensor("bias"));
  if (weight->rank() < 3)
    return a.error("weight must have at least 3 dims (out, in / groups, kernel...), got {}-D",
                   weight->rank());
  const size_t spatial = static_cast<size_t>(weight->rank() - 2);
  if (input->rank() != weight->rank())
    return a.error(
        "expected a batched {}-D input for a weight of {} dims, got {}-D input "
        "(an unbatched conv goes through conv{}d)",
        weight->rank(), weight->rank(), input->rank(), spatial);
  if (input->dtype != weight->dtype)
    return a.error("input ({}) and weight ({}) must have the same dtype", dtype_name(input->dtype),
                   dtype_name(weight->dtype));
  if (a.has("transposed")) {
    SPLICE_ASSIGN_OR_RETURN(bool transposed, a.boolean("transposed"));
    if (transposed) return a.error("transposed convolution is not supported");
  }
  SPLICE_ASSIGN_OR_RETURN(auto stride, conv_list(a, "stride", spatial));
  SPLICE_ASSIGN_OR_RETURN(auto dilation, conv_list(a, "dilation", spatial));
  SPLICE_ASSIGN_OR_RETURN(int64_t groups, a.integer("groups"));
  std::vector<int64_t> padding(spatial, 0);
  bool same = false;
  if (auto mode = a.string("padding")) {
    if (*mode == "same") {
      same = true;
    } else if (*mode != "valid") {
      return a.error("padding must be \"valid\" or \"same\", got \"{}\"", *mode);
    }
  } else {
    SPLICE_ASSIGN_OR_RETURN(padding, conv_list(a, "padding", spatial));
  }
  if (groups < 1) return a.error("groups must be positive, got {}", groups);
  SPLICE_TRY(a.require_equal(input->sizes[1], weight->sizes[1] * SymExpr(groups),
                             "the input's channels and weight.size(1) * groups"));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kEq, {py_mod(weight->sizes[0], SymExpr(groups)), 0}),
                       "weight.size(0) divisible by groups"));
  if (bias) {
    if (bias->rank() != 1) return a.error("bias must be 1-D, got {}-D", bias->rank());
    SPLICE_TRY(a.require_equal(bias->sizes[0], weight->sizes[0], "bias size and out channels"));
  }
  Sizes out = {input->sizes[0], weight->sizes[0]};
  for (size_t i = 0; i < spatial; ++i) {
    if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0)
      return a.error("stride and dilation must be positive and padding non-negative");
    const SymExpr& n = input->sizes[2 + i];
    if (same) {
      if (stride[i] != 1) return a.error("padding=\"same\" needs stride 1, got {}", stride[i]);
      out.push_back(n);
      continue;
    }
    const SymExpr span = SymExpr(dilation[i]) * (weight->sizes[2 + i] - SymExpr(1)) + SymExpr(1);
    const SymExpr padded = n + SymExpr(2 * padding[i]);
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {padded, span}),
                         "the padded input at least as large as the kernel"));
    out.push_back(floor_div(padded - span, SymExpr(stride[i])) + SymExpr(1));
  }
  return one(input->dtype, std::move(out));
}

// sort(self, dim, descending) and sort.stable: values and int64 indices of self's shape.
Result<Outputs> sort(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  return Outputs{tensor_out(self->dtype, self->sizes), tensor_out(DType::kInt64, self->sizes)};
}

// topk(self, k, dim): self's shape with size k at dim.
Result<Outputs> topk(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr k, a.sym_int("k"));
  Sizes out = self->sizes;
  if (self->rank() == 0) {
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kLe, {k, 1}), "k at most 1 for a 0-d tensor"));
    return Outputs{tensor_out(self->dtype, out), tensor_out(DType::kInt64, out)};
  }
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank()));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {k, 0}), "k non-negative"));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kLe, {k, out[dim]}), "k at most the dim's size"));
  out[dim] = k;
  return Outputs{tensor_out(self->dtype, out), tensor_out(DType::kInt64, out)};
}

Result<Outputs> histc(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t bins, a.integer("bins"));
  if (bins <= 0) return a.error("bins must be > 0, got {}", bins);
  if (!is_floating(self->dtype))
    return a.error("histc is not implemented for {} (eager's CPU kernel takes floats only)",
                   dtype_name(self->dtype));
  return one(self->dtype, {SymExpr(bins)});
}

// transformers::grouped_mm_fallback(input [S, K], weight [E, K, N], offs [E]) -> [S, N], and
// aten._grouped_mm(self, mat2, offs) in the same form (what transformers calls with bf16
// weights) or as a bmm of two 3-d operands without offs; out_dtype names the result's dtype.
Result<Outputs> grouped_mm_fallback(RuleArgs& a) {
  const bool aten = a.has("mat2");
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor(aten ? "self" : "input"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* weight, a.tensor(aten ? "mat2" : "weight"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* offs,
                          aten ? a.optional_tensor("offs") : a.tensor("offs"));
  DType out_dtype = input->dtype;
  if (aten) {
    SPLICE_ASSIGN_OR_RETURN(const TensorType* bias, a.optional_tensor("bias"));
    if (bias != nullptr) return a.error("a bias is not supported");
    if (auto d = a.dtype("out_dtype")) out_dtype = *d;
  }
  if (aten && offs == nullptr) {
    if (input->rank() != 3 || weight->rank() != 3)
      return a.error("without offs, expects two 3-D operands, got {}-D and {}-D", input->rank(),
                     weight->rank());
    if (input->dtype != weight->dtype)
      return a.error("self ({}) and mat2 ({}) must have the same dtype", dtype_name(input->dtype),
                     dtype_name(weight->dtype));
    SPLICE_TRY(a.require_equal(input->sizes[0], weight->sizes[0], "the batch sizes"));
    SPLICE_TRY(a.require_equal(input->sizes[2], weight->sizes[1], "the inner dims"));
    return one(out_dtype, {input->sizes[0], input->sizes[1], weight->sizes[2]});
  }
  if (input->rank() != 2 || weight->rank() != 3 || offs->rank() != 1)
    return a.error("expects input [S, K], weight [E, K, N] and offs [E], got {}-D, {}-D and {}-D",
                   input->rank(), weight->rank(), offs->rank());
  if (offs->dtype != DType::kInt32 && offs->dtype != DType::kInt64)
    return a.error("offs must be int32 or int64, got {}", dtype_name(offs->dtype));
  if (input->dtype != weight->dtype)
    return a.error("input ({}) and weight ({}) must have the same dtype", dtype_name(input->dtype),
                   dtype_name(weight->dtype));
  SPLICE_TRY(a.require_equal(offs->sizes[0], weight->sizes[0], "offs size and experts"));
  SPLICE_TRY(a.require_equal(input->sizes[1], weight->sizes[1], "input and weight inner dims"));
  return one(out_dtype, {input->sizes[0], weight->sizes[2]});
}

constexpr RuleEntry kEntries[] = {
    {OpId::convolution, convolution},
    {OpId::conv1d, convolution},
    {OpId::conv2d, convolution},
    {OpId::conv3d, convolution},
    {OpId::conv1d_padding, convolution},
    {OpId::conv2d_padding, convolution},
    {OpId::sort, sort},
    {OpId::sort_stable, sort},
    {OpId::topk, topk},
    {OpId::histc, histc},
    {OpId::transformers_grouped_mm_fallback, grouped_mm_fallback},
    {OpId::_grouped_mm, grouped_mm_fallback},
};

}  // namespace

std::span<const RuleEntry> model_rules() { return kEntries; }

}  // namespace splice::ir::rules
