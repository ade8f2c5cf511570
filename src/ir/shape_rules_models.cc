// Shape rules of the ops that transformers models beyond the decoder family need (found by
// tests/cases/sweep_hf.py): the convolutions of vision and audio front ends (convolution and
// the conv1d/2d/3d forms the training IR keeps, "valid"/"same" string padding included), as
// ATen's conv_output_size computes them; and the routing ops of mixture-of-experts layers —
// sort, argsort and topk (values keep the input's dtype, indices are int64), histc ([bins] in the
// input's dtype) and transformers' grouped_mm_fallback custom op ([S, N] for input [S, K] and
// weight [E, K, N]); and the CNN ops (batch norm in its export spellings, max_pool2d with and
// without indices, adaptive_avg_pool2d) as torch/_meta_registrations.py computes them.
// passes/decompose_composites rewrites all of them but sort and topk (kernels on every backend)
// into primitive ops.
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

// argsort(self, dim, descending) and argsort.stable: int64 indices of self's shape.
Result<Outputs> argsort(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_TRY(wrap_dim(a, dim, self->rank()));
  return one(DType::kInt64, self->sizes);
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

// The checks every batch-norm spelling makes: a floating input [N, C, *] and per-channel
// tensors of C elements (eager's "running_mean should contain 4 elements not 3").
Result<const TensorType*> batch_norm_input(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  if (input->rank() < 2)
    return a.error("batch norm expects an input of at least 2 dims [N, C, ...], got {}-D",
                   input->rank());
  if (!is_floating(input->dtype))
    return a.error("batch norm is not implemented for {}", dtype_name(input->dtype));
  for (std::string_view name : {"weight", "bias", "running_mean", "running_var"}) {
    if (!a.has(name)) continue;
    SPLICE_ASSIGN_OR_RETURN(const TensorType* t, a.optional_tensor(name));
    if (t == nullptr) continue;
    if (!is_floating(t->dtype))
      return a.error("{} must be floating, got {}", name, dtype_name(t->dtype));
    const std::string what =
        fmt::format("{} should contain {} elements not {}", name, input->sizes[1].to_string(),
                    t->rank() == 1 ? t->sizes[0].to_string() : "a 1-D size");
    if (t->rank() != 1) return a.error("{}", what);
    SPLICE_TRY(a.require_equal(t->sizes[0], input->sizes[1], what));
  }
  return input;
}

// batch_norm (the training IR): the input's type. Evaluation mode needs the running stats.
Result<Outputs> batch_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, batch_norm_input(a));
  SPLICE_ASSIGN_OR_RETURN(bool training, a.boolean("training"));
  if (!training && (a.is_none("running_mean") || a.is_none("running_var")))
    return a.error("running_mean and running_var must be defined in evaluation mode");
  return one(input->dtype, input->sizes);
}

// instance_norm: the input's type ([N, C, *], at least 2-d as ATen's check); without the input's
// statistics it needs running ones.
Result<Outputs> instance_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  if (input->rank() < 2)
    return a.error("Expected at least 2 dimensions for input tensor but received {}",
                   input->rank());
  SPLICE_ASSIGN_OR_RETURN(bool use_input_stats, a.boolean("use_input_stats"));
  if (!use_input_stats && (a.is_none("running_mean") || a.is_none("running_var")))
    return a.error(
        "Expected running_mean and running_var to be defined when use_input_stats is "
        "false");
  return one(input->dtype, input->sizes);
}

// _native_batch_norm_legit_no_training: out like the input; save_mean and save_invstd empty
// ([0]) in the input's dtype, as the meta function records them (eager's CPU kernel gives them
// the stats' dtype, float32 for a half input with float32 stats; both are empty).
Result<Outputs> batch_norm_no_training(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, batch_norm_input(a));
  return Outputs{tensor_out(input->dtype, input->sizes), tensor_out(input->dtype, {SymExpr(0)}),
                 tensor_out(input->dtype, {SymExpr(0)})};
}

// _native_batch_norm_legit.no_stats (batch statistics, no running stats) and
// _native_batch_norm_legit_functional (also the updated running stats, in their own dtype):
// save_mean and save_invstd of [C] in the input's dtype.
Result<Outputs> batch_norm_training(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, batch_norm_input(a));
  Outputs out = {tensor_out(input->dtype, input->sizes),
                 tensor_out(input->dtype, {input->sizes[1]}),
                 tensor_out(input->dtype, {input->sizes[1]})};
  if (a.has("running_mean")) {
    SPLICE_ASSIGN_OR_RETURN(const TensorType* mean, a.tensor("running_mean"));
    SPLICE_ASSIGN_OR_RETURN(const TensorType* var, a.tensor("running_var"));
    out.push_back(tensor_out(mean->dtype, mean->sizes));
    out.push_back(tensor_out(var->dtype, var->sizes));
  }
  return out;
}

// A pooling list argument: one int stands for both dims (eager's message otherwise).
Result<std::pair<int64_t, int64_t>> pool_pair(RuleArgs& a, std::string_view op,
                                              std::string_view name,
                                              const std::vector<int64_t>& v) {
  if (v.size() != 1 && v.size() != 2)
    return a.error("{}: {} must either be a single int, or a tuple of two ints", op, name);
  return std::make_pair(v[0], v.back());
}

// The stride of a pooling: the kernel when omitted.
Result<std::pair<int64_t, int64_t>> pool_stride(RuleArgs& a, std::string_view op,
                                                const std::vector<int64_t>& stride,
                                                std::pair<int64_t, int64_t> kernel) {
  if (stride.empty()) return kernel;
  if (stride.size() > 2)
    return a.error("{}: stride must either be omitted, a single int, or a tuple of two ints", op);
  return pool_pair(a, op, "stride", stride);
}

// A 2-d pooling's window arguments, each pair (H, W); max_pool2d's dilation, 1 for avg_pool2d.
struct Pool2dArgs {
  std::pair<int64_t, int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

Result<Pool2dArgs> read_pool2d_args(RuleArgs& a, std::string_view op) {
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, a.int_list("kernel_size"));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> stride, a.int_list("stride"));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> padding, a.int_list("padding"));
  Pool2dArgs out;
  SPLICE_ASSIGN_OR_RETURN(out.ceil_mode, a.boolean("ceil_mode"));
  SPLICE_ASSIGN_OR_RETURN(out.kernel, pool_pair(a, op, "kernel_size", kernel));
  SPLICE_ASSIGN_OR_RETURN(out.stride, pool_stride(a, op, stride, out.kernel));
  SPLICE_ASSIGN_OR_RETURN(out.padding, pool_pair(a, op, "padding", padding));
  out.dilation = {1, 1};
  if (a.node().op_id() != OpId::avg_pool2d) {
    SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, a.int_list("dilation"));
    SPLICE_ASSIGN_OR_RETURN(out.dilation, pool_pair(a, op, "dilation", dilation));
  }
  return out;
}

// The checks and output sizes of a 2-d pooling of self [C, H, W] or [N, C, H, W]:
// torch/_meta_registrations.py's pool2d_shape_check.
Result<Sizes> pool2d_output(RuleArgs& a, const TensorType& self_type, const Pool2dArgs& args) {
  const auto [k, s, p, d, ceil_mode] = args;
  const TensorType* self = &self_type;
  if (self->rank() != 3 && self->rank() != 4)
    return a.error("non-empty 3D or 4D (batch mode) tensor expected for input, got {}-D",
                   self->rank());
  if (k.first <= 0 || k.second <= 0)
    return a.error("kernel size should be greater than zero, but got kH: {}, kW: {}", k.first,
                   k.second);
  if (s.first <= 0 || s.second <= 0)
    return a.error("stride should be greater than zero, but got dH: {}, dW: {}", s.first, s.second);
  if (d.first <= 0 || d.second <= 0)
    return a.error("dilation should be greater than zero, but got dilationH: {}, dilationW: {}",
                   d.first, d.second);
  const std::pair<int64_t, int64_t> pads[] = {{p.first, k.first}, {p.second, k.second}};
  const int64_t dils[] = {d.first, d.second};
  for (int i = 0; i < 2; ++i) {
    const auto [pad, size] = pads[i];
    if (pad < 0) return a.error("pad must be non-negative, but got pad: {}", pad);
    if (pad > ((size - 1) * dils[i] + 1) / 2)
      return a.error(
          "pad should be at most half of effective kernel size, but got pad={}, "
          "kernel_size={} and dilation={}",
          pad, size, dils[i]);
  }
  if (k.second / 2 < p.second || k.first / 2 < p.first)
    return a.error(
        "pad should be smaller than or equal to half of kernel size, but got padW = {}, "
        "padH = {}, kW = {}, kH = {}",
        p.second, p.first, k.second, k.first);
  const int64_t rank = self->rank();
  SPLICE_ASSIGN_OR_RETURN(SymExpr oh, pool_output_size(a, self->sizes[rank - 2], k.first, p.first,
                                                       s.first, d.first, ceil_mode));
  SPLICE_ASSIGN_OR_RETURN(SymExpr ow, pool_output_size(a, self->sizes[rank - 1], k.second, p.second,
                                                       s.second, d.second, ceil_mode));
  const std::string what = fmt::format(
      "Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is too "
      "small",
      self->sizes[rank - 3].to_string(), self->sizes[rank - 2].to_string(),
      self->sizes[rank - 1].to_string(), self->sizes[rank - 3].to_string(), oh.to_string(),
      ow.to_string());
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {oh, 1}), what));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {ow, 1}), what));
  Sizes out(self->sizes.begin(), self->sizes.end() - 2);
  out.push_back(a.env().simplify(oh));
  out.push_back(a.env().simplify(ow));
  return out;
}

// max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode) and
// max_pool2d_with_indices (also int64 indices of the same shape): self [C, H, W] or
// [N, C, H, W]; the checks and messages of torch/_meta_registrations.py's
// max_pool2d_checks_and_compute_shape.
Result<Outputs> max_pool2d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Pool2dArgs args, read_pool2d_args(a, "max_pool2d"));
  if (self->dtype == DType::kBool)
    return a.error("max_pool2d is not implemented for {}", dtype_name(self->dtype));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, pool2d_output(a, *self, args));
  Outputs result = {tensor_out(self->dtype, out)};
  if (a.node().op_id() == OpId::max_pool2d_with_indices)
    result.push_back(tensor_out(DType::kInt64, out));
  return result;
}

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override): max_pool2d's output size without dilation (torch/_meta_registrations.py's
// meta_avg_pool2d).
Result<Outputs> avg_pool2d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Pool2dArgs args, read_pool2d_args(a, "avg_pool2d"));
  if (!a.is_none("divisor_override")) {
    SPLICE_ASSIGN_OR_RETURN(int64_t divisor, a.integer("divisor_override"));
    if (divisor == 0) return a.error("divisor must be not zero");
  }
  SPLICE_ASSIGN_OR_RETURN(Sizes out, pool2d_output(a, *self, args));
  return one(self->dtype, std::move(out));
}

// adaptive_avg_pool2d(self, output_size): self [C, H, W] or [N, C, H, W] with the last two
// sizes replaced (torch/_decomp's checks).
Result<Outputs> adaptive_avg_pool2d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("output_size"));
  if (self->rank() != 3 && self->rank() != 4)
    return a.error("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}", self->rank());
  if (size.size() == 1) size.push_back(size[0]);
  if (size.size() != 2)
    return a.error("adaptive_avg_pool2d: output_size must be 2, got {}", size.size());
  if (!is_floating(self->dtype))
    return a.error("adaptive_avg_pool2d is not implemented for {}", dtype_name(self->dtype));
  Sizes out(self->sizes.begin(), self->sizes.end() - 2);
  out.push_back(size[0]);
  out.push_back(size[1]);
  return one(self->dtype, std::move(out));
}

// adaptive_avg_pool3d(self, output_size): self [C, D, H, W] or [N, C, D, H, W] with the last
// three sizes replaced (ATen's checks; one size stands for all three).
Result<Outputs> adaptive_avg_pool3d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("output_size"));
  if (self->rank() != 4 && self->rank() != 5)
    return a.error("adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {}", self->rank());
  if (size.size() == 1) size.assign(3, size[0]);
  if (size.size() != 3)
    return a.error("adaptive_avg_pool3d: output_size must be 3, got {}", size.size());
  if (!is_floating(self->dtype))
    return a.error("adaptive_avg_pool3d is not implemented for {}", dtype_name(self->dtype));
  Sizes out(self->sizes.begin(), self->sizes.end() - 3);
  out.insert(out.end(), size.begin(), size.end());
  return one(self->dtype, std::move(out));
}

// grid_sampler and grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
// align_corners): input [N, C, H, W] sampled at grid [N, oH, oW, 2] is [N, C, oH, oW] (ATen's
// check_grid_sampler_common and check_grid_sampler_2d). grid_sampler of a 5-d input (its 3-d
// sampling) is refused: splice does not decompose it.
Result<Outputs> grid_sampler(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor("input"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* grid, a.tensor("grid"));
  SPLICE_ASSIGN_OR_RETURN(const int64_t mode, a.integer("interpolation_mode"));
  SPLICE_ASSIGN_OR_RETURN(const int64_t padding, a.integer("padding_mode"));
  if (mode < 0 || mode > 2) return a.error("Invalid interpolation mode {}", mode);
  if (padding < 0 || padding > 2) return a.error("Invalid padding mode {}", padding);
  if (input->dtype != grid->dtype)
    return a.error(
        "grid_sampler(): expected input and grid to have the same dtype, but input has {} and "
        "grid has {}",
        dtype_name(input->dtype), dtype_name(grid->dtype));
  if (!is_floating(input->dtype))
    return a.error("grid_sampler is not implemented for {}", dtype_name(input->dtype));
  if (input->rank() == 5 && grid->rank() == 5)
    return a.error("grid_sampler(): 5-D (volumetric) sampling is not supported");
  if (input->rank() != 4 || grid->rank() != 4)
    return a.error(
        "grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
        "input with sizes {} and grid with sizes {}",
        sizes_string(input->sizes), sizes_string(grid->sizes));
  SPLICE_TRY(a.require_equal(
      input->sizes[0], grid->sizes[0],
      fmt::format("grid_sampler(): expected grid and input to have same batch size, but got "
                  "input with sizes {} and grid with sizes {}",
                  sizes_string(input->sizes), sizes_string(grid->sizes))));
  if (grid->sizes[3].constant() != 2)
    return a.error(
        "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with "
        "sizes {}",
        sizes_string(grid->sizes));
  for (int64_t d = 2; d < 4; ++d)
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kGt, {input->sizes[d], 0}),
                         fmt::format("grid_sampler(): expected input to have non-empty spatial "
                                     "dimensions, but input has sizes {} with dimension {} "
                                     "being empty",
                                     sizes_string(input->sizes), d)));
  return one(input->dtype, {input->sizes[0], input->sizes[1], grid->sizes[1], grid->sizes[2]});
}

// upsample_{nearest,bilinear,bicubic}2d(self, output_size, [align_corners,] scales_h, scales_w)
// and their .vec overloads (input, output_size?, [align_corners,] scale_factors?): a 4-d
// [N, C, H, W] resized to [N, C, OH, OW]. The .vec overload takes output_size, else
// OH = floor(H * scale_h) from a static H (ATen's upsample compute_output_size).
Result<Outputs> upsample2d(RuleArgs& a) {
  const bool vec = a.has("input");
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor(vec ? "input" : "self"));
  if (self->rank() != 4)
    return a.error("Non-empty 4D data tensor expected but got a tensor with sizes {}",
                   sizes_string(self->sizes));
  if (!is_floating(self->dtype))
    return a.error("upsampling is not implemented for {}", dtype_name(self->dtype));
  Sizes size;
  if (!vec || !a.is_none("output_size")) {
    SPLICE_ASSIGN_OR_RETURN(size, a.sym_list("output_size"));
    if (vec && !a.is_none("scale_factors"))
      return a.error("Must specify exactly one of output_size and scale_factors");
  } else {
    const Arg& scales = a.arg("scale_factors");
    if (!scales.is<std::vector<double>>())
      return a.error("Must specify exactly one of output_size and scale_factors");
    for (size_t i = 0; i < scales.as<std::vector<double>>().size(); ++i) {
      const auto in = self->sizes[2 + std::min<size_t>(i, 1)].constant();
      if (!in) return a.error("upsampling a symbolic size by a scale factor is not supported");
      const double out = std::floor(static_cast<double>(*in) * scales.as<std::vector<double>>()[i]);
      if (!(out >= 0 && out < 9.0e18)) return a.error("upsampling to an invalid size {}", out);
      size.push_back(SymExpr(static_cast<int64_t>(out)));
    }
  }
  if (size.size() != 2)
    return a.error("It is expected output_size equals to 2, but got size {}", size.size());
  for (const SymExpr& s : size)
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kGt, {s, 0}),
                         fmt::format("Input and output sizes should be greater than 0, but got "
                                     "output (H: {}, W: {})",
                                     size[0].to_string(), size[1].to_string())));
  return one(self->dtype, {self->sizes[0], self->sizes[1], size[0], size[1]});
}

// adaptive_avg_pool1d(self, output_size): self [C, L] or [N, C, L] with L replaced (ATen's
// adaptive_avg_pool1d checks; it pools an unsqueezed 2-d plane).
Result<Outputs> adaptive_avg_pool1d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("output_size"));
  if (self->rank() != 2 && self->rank() != 3)
    return a.error("adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {}", self->rank());
  if (size.size() != 1)
    return a.error("adaptive_avg_pool1d: output_size must be 1, got {}", size.size());
  if (!is_floating(self->dtype))
    return a.error("adaptive_avg_pool1d is not implemented for {}", dtype_name(self->dtype));
  Sizes out(self->sizes.begin(), self->sizes.end() - 1);
  out.push_back(size[0]);
  return one(self->dtype, std::move(out));
}

// The four int[2] window arguments of im2col/col2im (each exactly two ints, as ATen's
// im2col_shape_check asks) and the sliding blocks' count per spatial dim.
struct Blocks {
  std::pair<int64_t, int64_t> k, d, p, s;
};

Result<Blocks> blocks(RuleArgs& a, std::string_view op) {
  Blocks b;
  std::pair<int64_t, int64_t>* fields[] = {&b.k, &b.d, &b.p, &b.s};
  const char* names[] = {"kernel_size", "dilation", "padding", "stride"};
  for (int i = 0; i < 4; ++i) {
    SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> v, a.int_list(names[i]));
    if (v.size() != 2)
      return a.error("{}: It is expected {} equals to 2, but got size {}", op, names[i], v.size());
    *fields[i] = {v[0], v[1]};
  }
  if (b.k.first <= 0 || b.k.second <= 0)
    return a.error(
        "kernel size should be greater than zero, but got kernel_height: {} "
        "kernel_width: {}",
        b.k.first, b.k.second);
  if (b.d.first <= 0 || b.d.second <= 0)
    return a.error(
        "dilation should be greater than zero, but got dilation_height: {} "
        "dilation_width: {}",
        b.d.first, b.d.second);
  if (b.p.first < 0 || b.p.second < 0)
    return a.error("padding should be non-negative, but got pad_height: {} pad_width: {}",
                   b.p.first, b.p.second);
  if (b.s.first <= 0 || b.s.second <= 0)
    return a.error(
        "stride should be greater than zero, but got stride_height: {} "
        "stride_width: {}",
        b.s.first, b.s.second);
  return b;
}

// (n + 2p - (d(k-1) + 1)) / s + 1 blocks along a static size n; a symbolic one is refused.
Result<int64_t> block_count(RuleArgs& a, std::string_view op, const SymExpr& n, int64_t k,
                            int64_t d, int64_t p, int64_t s) {
  const auto c = n.constant();
  if (!c) return a.error("{} over a symbolic spatial size ({})", op, n.to_string());
  const int64_t span = *c + 2 * p - (d * (k - 1) + 1);
  return span < 0 ? int64_t{0} : span / s + 1;
}

// im2col(self, kernel_size, dilation, padding, stride) (nn.Unfold): self [C, H, W] or
// [N, C, H, W] -> [(N,) C * kh * kw, L], L the number of sliding blocks (ATen's
// im2col_shape_check).
Result<Outputs> im2col(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const Blocks b, blocks(a, "im2col"));
  if (self->rank() != 3 && self->rank() != 4)
    return a.error(
        "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size "
        "and non-zero dimensions, but got: {}",
        sizes_string(self->sizes));
  const int64_t r = self->rank();
  SPLICE_ASSIGN_OR_RETURN(int64_t oh, block_count(a, "im2col", self->sizes[r - 2], b.k.first,
                                                  b.d.first, b.p.first, b.s.first));
  SPLICE_ASSIGN_OR_RETURN(int64_t ow, block_count(a, "im2col", self->sizes[r - 1], b.k.second,
                                                  b.d.second, b.p.second, b.s.second));
  if (oh < 1 || ow < 1)
    return a.error(
        "Given input with spatial size ({}, {}), kernel_size=({}, {}), "
        "dilation=({}, {}), padding=({}, {}), calculated shape of the array of "
        "sliding blocks as ({}, {}), but its components must be at least one.",
        self->sizes[r - 2].to_string(), self->sizes[r - 1].to_string(), b.k.first, b.k.second,
        b.d.first, b.d.second, b.p.first, b.p.second, oh, ow);
  Sizes out(self->sizes.begin(), self->sizes.end() - 3);
  out.push_back(a.env().simplify(self->sizes[r - 3] * SymExpr(b.k.first * b.k.second)));
  out.push_back(SymExpr(oh * ow));
  return one(self->dtype, std::move(out));
}

// col2im(self, output_size, kernel_size, dilation, padding, stride) (nn.Fold): self [C * kh * kw,
// L] or [N, C * kh * kw, L] -> [(N,) C, H, W] (ATen's col2im_shape_check).
Result<Outputs> col2im(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes size, a.sym_list("output_size"));
  if (size.size() != 2)
    return a.error("It is expected output_size equals to 2, but got size {}", size.size());
  SPLICE_ASSIGN_OR_RETURN(const Blocks b, blocks(a, "col2im"));
  if (self->rank() != 2 && self->rank() != 3)
    return a.error(
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size "
        "and non-zero dimensions, but got: {}",
        sizes_string(self->sizes));
  const int64_t r = self->rank();
  const auto rows = self->sizes[r - 2].constant();
  const auto length = self->sizes[r - 1].constant();
  if (!rows || !length)
    return a.error("col2im over symbolic sizes ({}) is not supported", sizes_string(self->sizes));
  const int64_t kernel = b.k.first * b.k.second;
  if (*rows % kernel != 0)
    return a.error(
        "Expected size of input's dimension 1 to be divisible by the product of "
        "kernel_size, but got input.size(1)={} and kernel_size=({}, {})",
        *rows, b.k.first, b.k.second);
  SPLICE_ASSIGN_OR_RETURN(
      int64_t oh, block_count(a, "col2im", size[0], b.k.first, b.d.first, b.p.first, b.s.first));
  SPLICE_ASSIGN_OR_RETURN(int64_t ow, block_count(a, "col2im", size[1], b.k.second, b.d.second,
                                                  b.p.second, b.s.second));
  if (oh < 1 || ow < 1 || oh * ow != *length)
    return a.error(
        "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), "
        "padding=({}, {}), stride=({}, {}), expected size of input's dimension 2 to "
        "match the calculated number of sliding blocks {} * {} = {}, but got "
        "input.size(2)={}.",
        size[0].to_string(), size[1].to_string(), b.k.first, b.k.second, b.d.first, b.d.second,
        b.p.first, b.p.second, b.s.first, b.s.second, oh, ow, oh * ow, *length);
  Sizes out(self->sizes.begin(), self->sizes.end() - 2);
  out.push_back(SymExpr(*rows / kernel));
  out.push_back(size[0]);
  out.push_back(size[1]);
  return one(self->dtype, std::move(out));
}

// avg_pool1d(self, kernel_size, stride, padding, ceil_mode, count_include_pad): self [C, L] or
// [N, C, L], L pooled as avg_pool2d pools a plane's width (ATen pools the unsqueezed plane).
Result<Outputs> avg_pool1d(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, a.int_list("kernel_size"));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> stride, a.int_list("stride"));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> padding, a.int_list("padding"));
  SPLICE_ASSIGN_OR_RETURN(bool ceil_mode, a.boolean("ceil_mode"));
  if (self->rank() != 2 && self->rank() != 3)
    return a.error("avg_pool1d() Expected 2D or 3D input tensor, but got {}",
                   sizes_string(self->sizes));
  if (kernel.size() != 1) return a.error("avg_pool1d() kernel_size must be an int");
  if (stride.size() > 1) return a.error("avg_pool1d() stride must be an int");
  if (padding.size() != 1) return a.error("avg_pool1d() padding must be an int");
  const int64_t k = kernel[0], s = stride.empty() ? k : stride[0], p = padding[0];
  if (k <= 0) return a.error("kernel size should be greater than zero, but got kW: {}", k);
  if (s <= 0) return a.error("stride should be greater than zero, but got dW: {}", s);
  if (p < 0 || p > k / 2)
    return a.error(
        "pad should be at most half of effective kernel size, but got pad={}, "
        "kernel_size={} and dilation=1",
        p, k);
  if (!is_floating(self->dtype))
    return a.error("avg_pool1d is not implemented for {}", dtype_name(self->dtype));
  SPLICE_ASSIGN_OR_RETURN(SymExpr out_len,
                          pool_output_size(a, self->sizes.back(), k, p, s, 1, ceil_mode));
  Sizes out(self->sizes.begin(), self->sizes.end() - 1);
  out.push_back(a.env().simplify(out_len));
  return one(self->dtype, std::move(out));
}

// glu(self, dim): self's size at dim halved (it must be even).
Result<Outputs> glu(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() == 0)
    return a.error("glu does not support scalars because halving size must be even");
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  const auto n = self->sizes[dim].constant();
  if (!n) return a.error("glu over a symbolic size ({})", self->sizes[dim].to_string());
  if (*n % 2 != 0)
    return a.error("Halving dimension must be even, but dimension {} is size {}", dim, *n);
  if (!is_floating(self->dtype))
    return a.error("glu is not implemented for {}", dtype_name(self->dtype));
  Sizes out = self->sizes;
  out[dim] = SymExpr(*n / 2);
  return one(self->dtype, std::move(out));
}

// _weight_norm(v, g, dim): v's shape and dtype (v * g / |v| over every dim but dim).
Result<Outputs> weight_norm(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* v, a.tensor("v"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* g, a.tensor("g"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dim"));
  if (dim < -1 || dim >= v->rank())
    return a.error("_weight_norm: dim {} is out of range for a {}-d tensor", dim, v->rank());
  if (g->dtype != v->dtype)
    return a.error("_weight_norm: g ({}) and v ({}) differ in dtype", dtype_name(g->dtype),
                   dtype_name(v->dtype));
  return one(v->dtype, v->sizes);
}

// unfold(self, dimension, size, step) (Tensor.unfold): dim replaced by the window count
// (n - size) / step + 1, the window's `size` elements a new last dim.
Result<Outputs> unfold(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer("dimension"));
  SPLICE_ASSIGN_OR_RETURN(int64_t size, a.integer("size"));
  SPLICE_ASSIGN_OR_RETURN(int64_t step, a.integer("step"));
  if (self->rank() == 0) return a.error("unfold of a 0-d tensor is not supported");
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(a, dim, self->rank(), false));
  if (size < 0) return a.error("size is {} but must be >= 0", size);
  if (step <= 0) return a.error("step is {} but must be > 0", step);
  const auto n = self->sizes[dim].constant();
  if (!n) return a.error("unfold over a symbolic size ({})", self->sizes[dim].to_string());
  if (size > *n)
    return a.error("maximum size for tensor at dimension {} is {} but size is {}", dim, *n, size);
  Sizes out = self->sizes;
  out[dim] = SymExpr((*n - size) / step + 1);
  out.push_back(SymExpr(size));
  return one(self->dtype, std::move(out));
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
    {OpId::argsort, argsort},
    {OpId::argsort_stable, argsort},
    {OpId::topk, topk},
    {OpId::histc, histc},
    {OpId::transformers_grouped_mm_fallback, grouped_mm_fallback},
    {OpId::_grouped_mm, grouped_mm_fallback},
    {OpId::batch_norm, batch_norm},
    {OpId::instance_norm, instance_norm},
    {OpId::_native_batch_norm_legit_no_training, batch_norm_no_training},
    {OpId::_native_batch_norm_legit_no_stats, batch_norm_training},
    {OpId::_native_batch_norm_legit_functional, batch_norm_training},
    {OpId::max_pool2d, max_pool2d},
    {OpId::max_pool2d_with_indices, max_pool2d},
    {OpId::adaptive_avg_pool2d, adaptive_avg_pool2d},
    {OpId::_adaptive_avg_pool2d, adaptive_avg_pool2d},
    {OpId::adaptive_avg_pool1d, adaptive_avg_pool1d},
    {OpId::adaptive_avg_pool3d, adaptive_avg_pool3d},
    {OpId::_adaptive_avg_pool3d, adaptive_avg_pool3d},
    {OpId::upsample_nearest2d, upsample2d},
    {OpId::upsample_nearest2d_vec, upsample2d},
    {OpId::upsample_bilinear2d, upsample2d},
    {OpId::upsample_bilinear2d_vec, upsample2d},
    {OpId::upsample_bicubic2d, upsample2d},
    {OpId::upsample_bicubic2d_vec, upsample2d},
    {OpId::grid_sampler, grid_sampler},
    {OpId::grid_sampler_2d, grid_sampler},
    {OpId::avg_pool2d, avg_pool2d},
    {OpId::im2col, im2col},
    {OpId::col2im, col2im},
    {OpId::avg_pool1d, avg_pool1d},
    {OpId::glu, glu},
    {OpId::_weight_norm, weight_norm},
    {OpId::unfold, unfold},
};

}  // namespace

std::span<const RuleEntry> model_rules() { return kEntries; }

}  // namespace splice::ir::rules
