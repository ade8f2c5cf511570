#pragma once
// Internal to the shape rules (shape_rules*.cc): typed access to a node's arguments by schema
// name, PyTorch's dim wrapping, broadcasting and type promotion over symbolic sizes, reduction
// shapes, and the per-family rule tables that shape_rules.cc merges.

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ops.h"
#include "ir/shape_rules.h"

namespace splice::ir::rules {

class RuleArgs;
using Outputs = std::vector<OutputType>;
using Sizes = std::vector<SymExpr>;
using RuleFn = Result<Outputs> (*)(RuleArgs&);

struct RuleEntry {
  OpId op;
  RuleFn fn;
};

// One family's rules each; shape_rules.cc merges them.
std::span<const RuleEntry> view_rules();
std::span<const RuleEntry> factory_rules();
std::span<const RuleEntry> pointwise_rules();
std::span<const RuleEntry> reduce_rules();
std::span<const RuleEntry> nn_rules();
std::span<const RuleEntry> index_rules();
std::span<const RuleEntry> scalar_rules();
std::span<const RuleEntry> model_rules();
std::span<const RuleEntry> pool3d_rules();

// A Python number's type, for promotion (a wrapped number or a Scalar argument).
enum class NumberKind { kBool, kInt, kFloat };

// An operand of type promotion: a tensor (dimensioned or 0-d) or a Python number.
struct Operand {
  const TensorType* tensor = nullptr;  // null for a number
  NumberKind number = NumberKind::kInt;
};

// torch._prims_common.ELEMENTWISE_TYPE_PROMOTION_KIND (the kinds splice's ops use).
enum class Promotion { kDefault, kIntToFloat, kAlwaysBool, kBoolToLong };

class RuleArgs {
 public:
  RuleArgs(const Node& node, ShapeEnv& env) : node_(node), env_(env) {}

  const Node& node() const { return node_; }
  ShapeEnv& env() const { return env_; }
  // "node 'add' (aten.add.Tensor)".
  std::string label() const;
  size_t output_count() const { return node_.outputs().size(); }

  // A kBadArchive error "<label>: <message>".
  template <typename... Args>
  Error error(fmt::format_string<Args...> format, Args&&... args) const {
    return Error(ErrorKind::kBadArchive,
                 label() + ": " + fmt::format(format, std::forward<Args>(args)...));
  }
  // env().require with this node as context.
  Result<void> require(const SymExpr& condition, std::string_view what) const;
  // Requires a == b (sizes); `what` says which sizes and shows them.
  Result<void> require_equal(const SymExpr& a, const SymExpr& b, std::string_view what) const;

  bool has(std::string_view name) const { return node_.op().find_arg(name).has_value(); }
  const Arg& arg(std::string_view name) const { return node_.arg(name); }
  bool is_none(std::string_view name) const { return arg(name).is_none(); }

  // The type of a Tensor argument (a wrapped number there is an error).
  Result<const TensorType*> tensor(std::string_view name) const;
  // nullptr for None.
  Result<const TensorType*> optional_tensor(std::string_view name) const;
  // A Tensor argument or a number in its place (wrapped number), or a Scalar argument.
  Result<Operand> operand(std::string_view name) const;
  // Tensor[] / Tensor?[]: nullptr for a None element.
  Result<std::vector<const TensorType*>> tensor_list(std::string_view name) const;

  // An int argument, or a SymInt whose recorded expression is a constant.
  Result<int64_t> integer(std::string_view name) const;
  std::optional<int64_t> optional_integer(std::string_view name) const;
  // A SymInt argument: a constant or a SymInt value's expression (a fresh symbol if the
  // archive recorded none).
  Result<SymExpr> sym_int(std::string_view name) const;
  Result<std::optional<SymExpr>> optional_sym_int(std::string_view name) const;
  Result<Sizes> sym_list(std::string_view name) const;
  // int[] of constants; None gives nullopt.
  Result<std::vector<int64_t>> int_list(std::string_view name) const;
  Result<std::optional<std::vector<int64_t>>> optional_int_list(std::string_view name) const;
  std::optional<DType> dtype(std::string_view name) const;
  // A constant bool (symbolic bools are refused: a flag that decides a shape must be known).
  Result<bool> boolean(std::string_view name) const;
  // A constant number (bool, int or float) as a double; nullopt for None or a symbolic value.
  std::optional<double> number(std::string_view name) const;
  std::optional<std::string> string(std::string_view name) const;

 private:
  const Node& node_;
  ShapeEnv& env_;
};

// The number kind of a literal or symbolic scalar argument; nullopt for anything else.
std::optional<NumberKind> number_kind(const Arg& arg);

// ---- building results ----
OutputType tensor_out(DType dtype, Sizes sizes);
Outputs one(DType dtype, Sizes sizes);
Outputs same_as(const TensorType& t);

// ---- dims ----
// Python's dim wrapping against `rank` (a 0-d tensor wraps as rank 1 when wrap_scalar).
// Example: (-1, 3) → 2; (3, 3) is an error naming the dim and the range.
Result<int64_t> wrap_dim(const RuleArgs& a, int64_t dim, int64_t rank, bool wrap_scalar = true);
SymExpr numel(const Sizes& sizes);
std::string sizes_string(const Sizes& sizes);

// ---- broadcasting (torch.broadcast_shapes) ----
// Right-aligned; a dim is the other operand's where one is provably 1, else both must be equal
// (a requirement `a == b or a == 1 or b == 1` when the ranges cannot tell; the result is then
// Max(a, b), which is right in all three cases).
Result<Sizes> broadcast(const RuleArgs& a, std::initializer_list<const Sizes*> shapes);
Result<Sizes> broadcast(const RuleArgs& a, const std::vector<const Sizes*>& shapes);
// `from` must expand to `to` (expand's check): each dim equal or 1, no more dims than `to`.
Result<void> require_expandable(const RuleArgs& a, const Sizes& from, const Sizes& to,
                                std::string_view what);
// The shapes of the tensor operands broadcast together (numbers take no part).
Result<Sizes> broadcast_operands(const RuleArgs& a, const std::vector<Operand>& operands);

// ---- dtypes ----
// c10::promoteTypes (u8 with i8 → i16, f16 with bf16 → f32).
DType promote_types(DType a, DType b);
// torch._prims_common.elementwise_dtypes: the result dtype of `operands` under `kind`.
DType result_dtype(const std::vector<Operand>& operands, Promotion kind);
// get_computation_dtype: f16 and bf16 compute in f32, others as themselves.
DType computation_dtype(DType d);

// ---- reductions ----
// The reduced shape: every dim in `dims` (wrapped; None or empty: every dim) removed, or kept
// as 1 with keepdim. Duplicate dims are an error, as in PyTorch.
Result<Sizes> reduce_sizes(const RuleArgs& a, const TensorType& self,
                           const std::optional<std::vector<int64_t>>& dims, bool keepdim);

// ---- slicing (shared by slice, slice_scatter, narrow) ----
// The length of self[start:end:step] along a dim of `size` with Python's clamping, over
// symbolic sizes and bounds. step must be >= 1.
Result<SymExpr> slice_length(const RuleArgs& a, const SymExpr& size,
                             const std::optional<SymExpr>& start, const std::optional<SymExpr>& end,
                             const SymExpr& step);

// ---- pooling (shared by the 2-d and 3-d poolings) ----
// pooling_output_shape: the windows a pooling of `n` elements makes with kernel `k`, padding
// `pad` on each side, `stride` and `dilation`; in ceil mode the last partial window too, unless
// it would start in the right padding. A symbolic `n` in ceil mode is refused.
Result<SymExpr> pool_output_size(RuleArgs& a, const SymExpr& n, int64_t k, int64_t pad,
                                 int64_t stride, int64_t dilation, bool ceil_mode);

}  // namespace splice::ir::rules
