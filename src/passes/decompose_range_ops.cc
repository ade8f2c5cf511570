// Decompositions of a range factory and of the search over a range (decompositions.h):
//   linspace(start, end, steps): ATen's CPU kernel (which torch/_refs' linspace, recorded by
//     run_decompositions(), also follows) — step = (end - start) / (steps - 1); element i is
//     start + i * step in the first half and end - (steps - 1 - i) * step in the second. As
//     the kernel, it computes in the result's type, with double steps for integer results
//     (start and end truncated to the integer type first) and float for the half types, and
//     casts once.
//   bucketize(self, boundaries, right): the count of boundaries b with !(b >= x) (right:
//     !(b > x)) for each element x — the index ATen's binary search over sorted boundaries
//     returns, a NaN x past every boundary as there. It compares every element with every
//     boundary ([..., m] bools, summed): meant for position-id tables (SmolVLA's patch
//     buckets), not for searching a vocabulary.
#include <cmath>

#include "ir/pointwise.h"
#include "passes/decompositions.h"

namespace splice::passes::decomp {

namespace {

using ir::Arg;
using ir::Node;
using ir::Value;

std::optional<double> number(const Arg& a) {
  if (a.is<double>()) return a.as<double>();
  if (a.is<int64_t>()) return static_cast<double>(a.as<int64_t>());
  if (a.is<bool>()) return a.as<bool>() ? 1.0 : 0.0;
  return std::nullopt;
}

Result<bool> linspace(Rewriter& rw, Node* node) {
  auto start = number(node->arg("start"));
  auto end = number(node->arg("end"));
  auto steps = constant_int(node->arg("steps"));
  if (!start || !end || !steps || node->outputs().empty()) return false;
  const DType dtype = node->outputs()[0]->type().dtype;
  Builder b{rw, node};
  Value* out = nullptr;
  if (*steps <= 1) {
    // No step to take: [] or [start] (torch/_refs: full).
    SPLICE_ASSIGN_OR_RETURN(
        out, b.op(OpId::full, {Arg{std::vector<ir::SymIntArg>{*steps}}, node->arg("start")},
                  {{"dtype", Arg{dtype}}}));
    SPLICE_TRY(replace_outputs(rw, node, {out}));
    return true;
  }
  const DType compute = is_floating(dtype) ? ir::opmath_dtype(dtype) : DType::kFloat64;
  if (!is_floating(dtype)) {
    start = std::trunc(*start);  // Scalar::to<int64_t>
    end = std::trunc(*end);
  }
  // The step in the compute type, as the kernel's step_t computes it.
  double step = (*end - *start) / static_cast<double>(*steps - 1);
  if (compute == DType::kFloat32)
    step = static_cast<double>((static_cast<float>(*end) - static_cast<float>(*start)) /
                               static_cast<float>(*steps - 1));
  SPLICE_ASSIGN_OR_RETURN(Value * index,
                          b.op(OpId::arange, {Arg{*steps}}, {{"dtype", Arg{DType::kInt64}}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * first_half,
      b.op(OpId::lt_Scalar, {Arg{index}, Arg{static_cast<double>(*steps) / 2.0}}));
  SPLICE_ASSIGN_OR_RETURN(Value * i, b.cast(index, compute));
  SPLICE_ASSIGN_OR_RETURN(Value * from_start, b.op(OpId::mul_Scalar, {Arg{i}, Arg{step}}));
  SPLICE_ASSIGN_OR_RETURN(from_start, b.op(OpId::add_Scalar, {Arg{from_start}, Arg{*start}}));
  SPLICE_ASSIGN_OR_RETURN(Value * back, b.op(OpId::rsub_Scalar, {Arg{index}, Arg{*steps - 1}}));
  SPLICE_ASSIGN_OR_RETURN(back, b.cast(back, compute));
  SPLICE_ASSIGN_OR_RETURN(Value * from_end, b.op(OpId::mul_Scalar, {Arg{back}, Arg{step}}));
  SPLICE_ASSIGN_OR_RETURN(from_end, b.op(OpId::rsub_Scalar, {Arg{from_end}, Arg{*end}}));
  SPLICE_ASSIGN_OR_RETURN(
      out, b.op(OpId::where_self, {Arg{first_half}, Arg{from_start}, Arg{from_end}}));
  SPLICE_ASSIGN_OR_RETURN(out, b.cast(out, dtype));
  SPLICE_TRY(replace_outputs(rw, node, {out}));
  return true;
}

Result<bool> bucketize(Rewriter& rw, Node* node) {
  Value* boundaries = tensor_arg(*node, "boundaries");
  if (boundaries == nullptr || node->outputs().empty()) return false;
  Builder b{rw, node};
  Value* self = tensor_arg(*node, "self");
  if (self == nullptr) {
    // bucketize.Scalar: ATen wraps the number (a wrapped-number tensor) and compares in the
    // result type of the boundaries and it: the boundaries' dtype, or the default float32
    // for a float number against integer boundaries.
    const Arg& value = node->arg("self");
    const DType bounds = boundaries->type().dtype;
    const DType dtype = is_floating(bounds) || !value.is<double>() ? bounds : DType::kFloat32;
    SPLICE_ASSIGN_OR_RETURN(self, b.op(OpId::scalar_tensor, {value}, {{"dtype", Arg{dtype}}}));
  }
  const bool right = node->arg("right").is<bool>() && node->arg("right").as<bool>();
  SPLICE_ASSIGN_OR_RETURN(Value * x, b.op(OpId::unsqueeze, {Arg{self}, Arg{int64_t{-1}}}));
  SPLICE_ASSIGN_OR_RETURN(Value * at_or_past, b.op(right ? OpId::gt_Tensor : OpId::ge_Tensor,
                                                   {Arg{boundaries}, Arg{x}}));
  SPLICE_ASSIGN_OR_RETURN(Value * before, b.op(OpId::logical_not, {Arg{at_or_past}}));
  SPLICE_ASSIGN_OR_RETURN(
      Value * count, b.op(OpId::sum_dim_IntList,
                          {Arg{before}, Arg{std::vector<ir::SymIntArg>{int64_t{-1}}}, Arg{false}},
                          {{"dtype", Arg{node->outputs()[0]->type().dtype}}}));
  SPLICE_TRY(replace_outputs(rw, node, {count}));
  return true;
}

constexpr Entry kEntries[] = {
    {OpId::linspace, linspace},
    {OpId::bucketize_Tensor, bucketize},
    {OpId::bucketize_Scalar, bucketize},
};

}  // namespace

std::span<const Entry> range_decompositions() { return kEntries; }

}  // namespace splice::passes::decomp
