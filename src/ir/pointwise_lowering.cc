// The lowering's shared machinery (argument access, operands, the program builder with
// PyTorch's conversion rule), the target table merged from the lowering files, and arange's
// length.
#include "ir/pointwise_lowering.h"

#include <algorithm>
#include <cmath>

#include "ir/pointwise_lowering_util.h"

namespace splice::ir {

namespace lowering {

Error LArgs::bad(size_t i, std::string_view expected) const {
  if (i >= args_.size()) {
    return make_error(ErrorKind::kBadInput, "{}: argument {} ({}) is missing (got {} arguments)",
                      op_, i, expected, args_.size());
  }
  static constexpr const char* kNames[] = {"None", "Tensor", "Scalar", "str", "dtype"};
  return make_error(ErrorKind::kBadInput, "{}: argument {} should be {}, got {}", op_, i, expected,
                    kNames[static_cast<int>(args_[i].kind)]);
}

Result<OpArg> LArgs::tensor(size_t i) const {
  if (is_tensor(i)) return args_[i];
  return bad(i, "Tensor");
}

Result<Scalar> LArgs::scalar(size_t i) const {
  if (i < args_.size() && args_[i].kind == OpArg::Kind::kScalar) return args_[i].scalar;
  return bad(i, "Scalar");
}

Result<Scalar> LArgs::scalar_or(size_t i, Scalar fallback) const {
  if (is_none(i)) return fallback;
  return scalar(i);
}

Result<int64_t> LArgs::integer(size_t i) const {
  if (i < args_.size() && args_[i].kind == OpArg::Kind::kScalar && !args_[i].scalar.is_double())
    return args_[i].scalar.to_int();
  return bad(i, "int");
}

Result<bool> LArgs::boolean_or(size_t i, bool fallback) const {
  if (is_none(i)) return fallback;
  if (args_[i].kind == OpArg::Kind::kScalar && !args_[i].scalar.is_double()) {
    const int64_t v = args_[i].scalar.to_int();
    if (v == 0 || v == 1) return v == 1;
  }
  return bad(i, "bool");
}

Result<std::optional<std::string>> LArgs::opt_string(size_t i) const {
  if (is_none(i)) return std::optional<std::string>();
  if (args_[i].kind == OpArg::Kind::kString) return std::optional<std::string>(args_[i].text);
  return bad(i, "str");
}

Result<std::optional<DType>> LArgs::opt_dtype(size_t i) const {
  if (is_none(i)) return std::optional<DType>();
  if (args_[i].kind == OpArg::Kind::kDType) return std::optional<DType>(args_[i].dtype);
  return bad(i, "ScalarType");
}

PromotionOperand Operand::promotion() const {
  if (!is_tensor) return promotion_operand(scalar);
  return {dtype, rank == 0 ? PromotionOperand::Priority::kZeroDim
                           : PromotionOperand::Priority::kDimensioned};
}

Result<Operand> read_operand(const LArgs& a, size_t i) {
  Operand o;
  if (a.is_tensor(i)) {
    SPLICE_ASSIGN_OR_RETURN(OpArg t, a.tensor(i));
    o.is_tensor = true;
    o.arg = static_cast<int>(i);
    o.dtype = t.dtype;
    o.rank = t.rank;
    return o;
  }
  SPLICE_ASSIGN_OR_RETURN(o.scalar, a.scalar(i));
  return o;
}

PointwiseRef Builder::input(int arg, DType dtype) {
  lowered_.inputs.push_back(arg);
  return lowered_.program.add_input(dtype);
}

PointwiseRef Builder::operand(const Operand& o, DType dtype, bool keep_original) {
  const bool half = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  if (!o.is_tensor) {
    // A Python number: scalar_to_tensor(s, dtype), or (kept) s.to_double() into float.
    return constant(o.scalar, keep_original && half ? DType::kFloat64 : dtype);
  }
  PointwiseRef ref = input(o.arg, o.dtype);
  if (keep_original && half) {
    // item_as_double: an int64 value reaches float through double.
    if (o.dtype == DType::kInt64) ref = node(PointwiseFn::kCopy, {ref}, DType::kFloat64);
    return ref;
  }
  if (half && o.dtype != dtype) ref = node(PointwiseFn::kCopy, {ref}, dtype);
  return ref;
}

PointwiseRef Builder::node(PointwiseFn fn, std::vector<PointwiseRef> operands, DType result) {
  return lowered_.program.add_node(fn, std::move(operands), result, opmath_dtype(result));
}

LoweredPointwise Builder::finish(PointwiseRef out) && {
  lowered_.program.add_output(out);
  return std::move(lowered_);
}

namespace {

// An op defined whole in ir/ops/pointwise/: its rule's lowering with its function.
template <PointwiseOpRule kRule, PointwiseFn kFn>
Result<LoweredPointwise> lower_defined(std::string_view op, std::span<const OpArg> args) {
  if constexpr (kRule == PointwiseOpRule::kFloatUnary) {
    return lower_float_unary(kFn, op, args);
  } else {
    return lower_float_binary(kFn, op, args);
  }
}

std::span<const LoweringEntry> defined_lowerings() {
#define SPLICE_PW_LOWERING(id, target, schema, inplace_target, inplace_schema, rule, Fn) \
  {target, lower_defined<PointwiseOpRule::rule, PointwiseFn::k##Fn>},
  static const LoweringEntry kEntries[] = {SPLICE_POINTWISE_OPS(SPLICE_PW_LOWERING){}};
#undef SPLICE_PW_LOWERING
  return std::span(kEntries).first(std::size(kEntries) - 1);  // less the empty terminator
}

const std::vector<LoweringEntry>& table() {
  static const std::vector<LoweringEntry> entries = [] {
    std::vector<LoweringEntry> v;
    for (auto part : {binary_lowerings(), unary_lowerings(), copy_lowerings(), defined_lowerings()})
      v.insert(v.end(), part.begin(), part.end());
    std::sort(v.begin(), v.end(),
              [](const LoweringEntry& a, const LoweringEntry& b) { return a.target < b.target; });
    return v;
  }();
  return entries;
}

LowerFn find(std::string_view target) {
  const auto& v = table();
  auto it =
      std::lower_bound(v.begin(), v.end(), target,
                       [](const LoweringEntry& e, std::string_view t) { return e.target < t; });
  return it != v.end() && it->target == target ? it->fn : nullptr;
}

}  // namespace

}  // namespace lowering

Result<LoweredPointwise> lower_pointwise_op(std::string_view target, std::span<const OpArg> args) {
  lowering::LowerFn fn = lowering::find(target);
  if (fn == nullptr) {
    return make_error(ErrorKind::kUnsupportedOp, "{} has no pointwise lowering", target);
  }
  SPLICE_ASSIGN_OR_RETURN(LoweredPointwise lowered, fn(target, args));
  SPLICE_TRY(validate(lowered.program));
  return lowered;
}

bool has_pointwise_lowering(std::string_view target) { return lowering::find(target) != nullptr; }

std::vector<std::string_view> pointwise_lowering_targets() {
  std::vector<std::string_view> out;
  for (const auto& e : lowering::table()) out.push_back(e.target);
  return out;
}

Result<int64_t> arange_length(std::string_view op, const Scalar& start, const Scalar& end,
                              const Scalar& step) {
  // The CPU kernel's (factories.cc) checks and arithmetic.
  const bool all_int = !start.is_double() && !end.is_double() && !step.is_double();
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  LCHECK(st != 0, ErrorKind::kBadInput, "step must be nonzero");
  LCHECK(std::isfinite(s) && std::isfinite(e), ErrorKind::kBadInput, "unsupported range: {} -> {}",
         s, e);
  LCHECK((st > 0 && e >= s) || (st < 0 && e <= s), ErrorKind::kBadInput,
         "upper bound and larger bound inconsistent with step sign ({} -> {} step {})", s, e, st);
  if (all_int) {
    const __int128 span = static_cast<__int128>(end.to_int()) - start.to_int();
    const __int128 stp = step.to_int();
    const __int128 q = (span + stp - (stp > 0 ? 1 : -1)) / stp;
    LCHECK(q >= 0 && q <= (static_cast<__int128>(1) << 40), ErrorKind::kBadInput,
           "arange of {} elements is too large", static_cast<int64_t>(q));
    return static_cast<int64_t>(q);
  }
  const double size = std::ceil((e - s) / st);
  LCHECK(size >= 0 && size <= 1099511627776.0, ErrorKind::kBadInput,
         "arange of {} elements is too large", size);
  return static_cast<int64_t>(size);
}

}  // namespace splice::ir
