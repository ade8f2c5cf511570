// Shape rules of copies, conversions and factories: clone/copy/_to_copy and the `to`/type_as
// conversions; empty/zeros/ones/full (and *_like, new_*) whose dtype is the argument, else self's
// (the *_like and new_* forms) or the default float32 — except full, whose dtype follows the fill
// value's Python type as torch.full does; scalar_tensor; arange (int64 unless an end point is a
// float, length ceil((end - start) / step)); repeat, repeat_interleave (data-dependent lengths
// are fresh symbols unless output_size gives them); tril/triu, flip, roll, and padding.
#include "ir/shape_rules_util.h"

#include <cmath>

namespace splice::ir::rules {

namespace {

Result<Outputs> same(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  return same_as(*self);
}

// dropout(input, ...) and its in-place twin dropout_(self, ...), which the type check of the
// training IR runs through this rule too.
Result<Outputs> input_same(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* input, a.tensor(a.has("input") ? "input" : "self"));
  return same_as(*input);
}

Result<Outputs> copy(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Operand src, a.operand("src"));
  if (src.tensor) SPLICE_TRY(require_expandable(a, src.tensor->sizes, self->sizes, "copy's src"));
  return same_as(*self);
}

// self's sizes in `dtype` (the argument) or self's dtype.
Result<Outputs> like(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  return one(a.dtype("dtype").value_or(self->dtype), self->sizes);
}

Result<Outputs> to_other(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* other, a.tensor("other"));
  return one(other->dtype, self->sizes);
}

Result<Outputs> to_dtype_required(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  auto dtype = a.dtype("dtype");
  if (!dtype) return a.error("dtype must not be None");
  return one(*dtype, self->sizes);
}

Result<Sizes> factory_sizes(RuleArgs& a, std::string_view name) {
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, a.sym_list(name));
  for (const SymExpr& s : sizes)
    SPLICE_TRY(a.require(
        SymExpr::make(SymOp::kGe, {s, 0}),
        fmt::format("negative dimension {} in size {}", s.to_string(), sizes_string(sizes))));
  return sizes;
}

// empty/zeros/ones(size, dtype=None): the default dtype is float32.
Result<Outputs> sized_factory(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, factory_sizes(a, "size"));
  return one(a.dtype("dtype").value_or(DType::kFloat32), std::move(sizes));
}

// The dtype torch.full infers from a fill value of each Python type.
DType fill_dtype(const Arg& fill) {
  switch (number_kind(fill).value_or(NumberKind::kFloat)) {
    case NumberKind::kBool:
      return DType::kBool;
    case NumberKind::kInt:
      return DType::kInt64;
    case NumberKind::kFloat:
      return DType::kFloat32;
  }
  return DType::kFloat32;
}

Result<Outputs> full(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, factory_sizes(a, "size"));
  return one(a.dtype("dtype").value_or(fill_dtype(a.arg("fill_value"))), std::move(sizes));
}

// new_empty/new_zeros/new_ones/new_full(self, size, ...): self's dtype unless given.
Result<Outputs> new_factory(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes sizes, factory_sizes(a, "size"));
  return one(a.dtype("dtype").value_or(self->dtype), std::move(sizes));
}

Result<Outputs> scalar_tensor(RuleArgs& a) {
  return one(a.dtype("dtype").value_or(DType::kFloat32), {});
}

// linspace(start, end, steps, dtype): [steps] of `dtype`, the default float32 when absent.
Result<Outputs> linspace(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(int64_t steps, a.integer("steps"));
  if (steps < 0) return a.error("linspace(): number of steps must be non-negative");
  if (!a.number("start") || !a.number("end"))
    return a.error("linspace(): start and end must be constant numbers");
  return one(a.dtype("dtype").value_or(DType::kFloat32), {SymExpr(steps)});
}

// arange over start/end/step arguments that may be absent (arange.default has only end).
Result<Outputs> arange(RuleArgs& a) {
  const bool has_start = a.has("start"), has_step = a.has("step");
  bool any_float = false;
  for (std::string_view n : {"start", "end", "step"}) {
    if (!a.has(n)) continue;
    if (number_kind(a.arg(n)) == NumberKind::kFloat) any_float = true;
  }
  const DType dtype = a.dtype("dtype").value_or(any_float ? DType::kFloat32 : DType::kInt64);
  if (any_float) {
    // Float end points: PyTorch computes the length in double from constants.
    auto start = has_start ? a.number("start") : std::optional<double>(0.0);
    auto end = a.number("end");
    auto step = has_step ? a.number("step") : std::optional<double>(1.0);
    if (!start || !end || !step) return one(dtype, {a.env().fresh_unbacked()});
    if (*step == 0) return a.error("arange: step must be nonzero");
    if ((*step > 0 && *end < *start) || (*step < 0 && *end > *start))
      return a.error("arange: upper bound {} and lower bound {} inconsistent with step sign {}",
                     *end, *start, *step);
    const double n = std::ceil((*end - *start) / *step);
    if (!(n >= 0 && n < 9.0e18)) return a.error("arange: invalid length {}", n);
    return one(dtype, {SymExpr(static_cast<int64_t>(n))});
  }
  SymExpr start = 0, step = 1;
  if (has_start) {
    SPLICE_ASSIGN_OR_RETURN(start, a.sym_int("start"));
  }
  SPLICE_ASSIGN_OR_RETURN(SymExpr end, a.sym_int("end"));
  if (has_step) {
    SPLICE_ASSIGN_OR_RETURN(step, a.sym_int("step"));
  }
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kNe, {step, 0}), "arange: step must be nonzero"));
  SPLICE_TRY(a.require(
      SymExpr::make(SymOp::kOr,
                    {SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kGt, {step, 0}),
                                                 SymExpr::make(SymOp::kGe, {end, start})}),
                     SymExpr::make(SymOp::kAnd, {SymExpr::make(SymOp::kLt, {step, 0}),
                                                 SymExpr::make(SymOp::kLe, {end, start})})}),
      fmt::format("arange: upper bound {} and lower bound {} inconsistent with step sign {}",
                  end.to_string(), start.to_string(), step.to_string())));
  return one(dtype, {a.env().simplify(ceil_div(end - start, step))});
}

Result<Outputs> repeat(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes repeats, a.sym_list("repeats"));
  if (static_cast<int64_t>(repeats.size()) < self->rank())
    return a.error("number of repeat dims {} can not be smaller than the number of tensor dims {}",
                   repeats.size(), self->rank());
  const size_t offset = repeats.size() - self->rank();
  Sizes out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    SPLICE_TRY(
        a.require(SymExpr::make(SymOp::kGe, {repeats[i], 0}),
                  fmt::format("repeats must be non-negative, got {}", sizes_string(repeats))));
    out.push_back(i < offset ? repeats[i] : a.env().simplify(self->sizes[i - offset] * repeats[i]));
  }
  return one(self->dtype, std::move(out));
}

// The length of a data-dependent repeat_interleave: output_size when given, else a fresh symbol.
Result<SymExpr> interleaved_length(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(auto size, a.optional_sym_int("output_size"));
  return size ? *size : a.env().fresh_unbacked();
}

Result<Outputs> repeat_interleave_self_int(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(SymExpr repeats, a.sym_int("repeats"));
  SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {repeats, 0}), "repeats can not be negative"));
  auto dim = a.optional_integer("dim");
  if (!dim) return one(self->dtype, {a.env().simplify(numel(self->sizes) * repeats)});
  SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(a, *dim, self->rank()));
  Sizes out = self->sizes;
  if (out.empty()) out.emplace_back(1);
  out[d] = a.env().simplify(out[d] * repeats);
  return one(self->dtype, std::move(out));
}

Result<Outputs> repeat_interleave_tensor(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* repeats, a.tensor("repeats"));
  if (repeats->rank() > 1) return a.error("repeat_interleave: repeats must be 0-dim or 1-dim");
  if (repeats->dtype != DType::kInt64 && repeats->dtype != DType::kInt32)
    return a.error("repeat_interleave: repeats has to be an int32 or int64 tensor, got {}",
                   dtype_name(repeats->dtype));
  SPLICE_ASSIGN_OR_RETURN(SymExpr n, interleaved_length(a));
  return one(repeats->dtype, {n});
}

Result<Outputs> repeat_interleave_self_tensor(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(const TensorType* repeats, a.tensor("repeats"));
  if (repeats->rank() > 1) return a.error("repeat_interleave: repeats must be 0-dim or 1-dim");
  SPLICE_ASSIGN_OR_RETURN(SymExpr n, interleaved_length(a));
  auto dim = a.optional_integer("dim");
  if (!dim) return one(self->dtype, {n});
  SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(a, *dim, self->rank()));
  Sizes out = self->sizes;
  if (out.empty()) out.emplace_back(1);
  out[d] = n;
  return one(self->dtype, std::move(out));
}

Result<Outputs> triangle(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  if (self->rank() < 2)
    return a.error("tril/triu: input tensor must have at least 2 dimensions, got {}", self->rank());
  return same_as(*self);
}

Result<Outputs> flip(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.int_list("dims"));
  std::vector<bool> seen(std::max<int64_t>(self->rank(), 1), false);
  for (int64_t d : dims) {
    SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(a, d, self->rank()));
    if (seen[w]) return a.error("flip: dim {} appears multiple times in the list of dims", w);
    seen[w] = true;
  }
  return same_as(*self);
}

Result<Outputs> roll(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes shifts, a.sym_list("shifts"));
  SPLICE_ASSIGN_OR_RETURN(auto dims, a.int_list("dims"));
  if (dims.empty() ? shifts.size() != 1 : shifts.size() != dims.size())
    return a.error("roll: shifts ({} values) and dims ({} values) do not align", shifts.size(),
                   dims.size());
  for (int64_t d : dims) SPLICE_TRY(wrap_dim(a, d, self->rank()));
  return same_as(*self);
}

// The padded sizes: pads hold (before, after) pairs starting from the last dim.
Result<Sizes> padded_sizes(RuleArgs& a, const TensorType& self, const Sizes& pads) {
  if (pads.size() % 2 != 0) return a.error("padding length {} must be divisible by 2", pads.size());
  if (static_cast<int64_t>(pads.size() / 2) > self.rank())
    return a.error("padding length {} is more than two times the input dimension {}", pads.size(),
                   self.rank());
  Sizes out = self.sizes;
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const int64_t d = self.rank() - 1 - static_cast<int64_t>(k);
    out[d] = a.env().simplify(out[d] + pads[2 * k] + pads[2 * k + 1]);
    SPLICE_TRY(a.require(SymExpr::make(SymOp::kGe, {out[d], 0}),
                         fmt::format("the input size {}, plus negative padding {} and {}, gives "
                                     "a negative output size at dim {}",
                                     self.sizes[d].to_string(), pads[2 * k].to_string(),
                                     pads[2 * k + 1].to_string(), d)));
  }
  return out;
}

Result<Outputs> constant_pad_nd(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes pads, a.sym_list("pad"));
  SPLICE_ASSIGN_OR_RETURN(Sizes out, padded_sizes(a, *self, pads));
  return one(self->dtype, std::move(out));
}

// pad(self, pad, mode, value): constant as constant_pad_nd; reflect, replicate and circular pad
// the last 1-3 dims of an input with one or two leading (batch, channel) dims (torch's
// _pad_enum), with pads that reflect (< size), wrap once (<= size) or replicate a non-empty dim.
Result<Outputs> pad(RuleArgs& a) {
  SPLICE_ASSIGN_OR_RETURN(const TensorType* self, a.tensor("self"));
  SPLICE_ASSIGN_OR_RETURN(Sizes pads, a.sym_list("pad"));
  const std::string mode = a.string("mode").value_or("constant");
  if (mode != "constant") {
    if (mode != "reflect" && mode != "replicate" && mode != "circular")
      return a.error(
          "padding mode '{}' is not supported (constant, reflect, replicate, "
          "circular are)",
          mode);
    auto value = a.number("value");
    if (!a.is_none("value") && value != 0.0)
      return a.error("padding mode \"{}\" doesn't take in value argument", mode);
    const int64_t pdims = static_cast<int64_t>(pads.size() / 2);
    const int64_t rank = self->rank();
    if (pads.size() % 2 != 0 || pdims < 1 || pdims > 3 || (rank != pdims + 1 && rank != pdims + 2))
      return a.error(
          "padding size {} is not supported for {}D input in mode \"{}\" (2 pads a "
          "2D/3D input, 4 a 3D/4D, 6 a 4D/5D)",
          pads.size(), rank, mode);
    for (int64_t k = 0; k < pdims; ++k) {
      const SymExpr& n = self->sizes[rank - 1 - k];
      for (const SymExpr& p : {pads[2 * k], pads[2 * k + 1]}) {
        SPLICE_TRY(a.require(
            SymExpr::make(SymOp::kGe, {p, 0}),
            fmt::format("negative padding {} is only supported in constant mode", p.to_string())));
        SymExpr fits = mode == "reflect"    ? SymExpr::make(SymOp::kLt, {p, n})
                       : mode == "circular" ? SymExpr::make(SymOp::kLe, {p, n})
                                            : SymExpr::make(SymOp::kGt, {n, 0});
        SPLICE_TRY(a.require(fits, fmt::format("padding {} does not fit dim {} of size {} in "
                                               "mode \"{}\"",
                                               p.to_string(), rank - 1 - k, n.to_string(), mode)));
      }
    }
  }
  SPLICE_ASSIGN_OR_RETURN(Sizes out, padded_sizes(a, *self, pads));
  return one(self->dtype, std::move(out));
}

constexpr RuleEntry kEntries[] = {
    {OpId::linspace, linspace},
    {OpId::clone, same},
    {OpId::lift_fresh_copy, same},
    {OpId::contiguous, same},
    {OpId::dropout, input_same},
    {OpId::copy, copy},
    {OpId::_to_copy, like},
    {OpId::to_dtype, to_dtype_required},
    {OpId::to_dtype_layout, like},
    {OpId::to_device, to_dtype_required},
    {OpId::to_other, to_other},
    {OpId::type_as, to_other},
    {OpId::empty_memory_format, sized_factory},
    {OpId::empty_permuted, sized_factory},
    {OpId::empty_strided, sized_factory},
    {OpId::zeros, sized_factory},
    {OpId::ones, sized_factory},
    {OpId::full, full},
    {OpId::empty_like, like},
    {OpId::zeros_like, like},
    {OpId::zero, same},
    {OpId::ones_like, like},
    {OpId::full_like, like},
    {OpId::new_empty, new_factory},
    {OpId::new_zeros, new_factory},
    {OpId::new_ones, new_factory},
    {OpId::new_full, new_factory},
    {OpId::scalar_tensor, scalar_tensor},
    {OpId::arange, arange},
    {OpId::arange_start, arange},
    {OpId::arange_start_step, arange},
    {OpId::repeat, repeat},
    {OpId::repeat_interleave_self_int, repeat_interleave_self_int},
    {OpId::repeat_interleave_Tensor, repeat_interleave_tensor},
    {OpId::repeat_interleave_self_Tensor, repeat_interleave_self_tensor},
    {OpId::tril, triangle},
    {OpId::triu, triangle},
    {OpId::flip, flip},
    {OpId::roll, roll},
    {OpId::constant_pad_nd, constant_pad_nd},
    {OpId::pad, pad},
};

}  // namespace

std::span<const RuleEntry> factory_rules() { return kEntries; }

}  // namespace splice::ir::rules
