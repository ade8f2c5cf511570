#pragma once
// The op table: every op splice understands, keyed by its export target
// ("aten.slice_scatter.default") and by an interned id (OpId::slice_scatter), with its
// argument schema written exactly as ATen writes it (native_functions.yaml), so PyTorch's
// defaults fill the arguments an archive leaves out. The table is also the one place for
// facts about an op: whether it views or mutates its input (from the schema's alias
// annotations), and the class of op the planners care about (op_list.inc). The table holds
// no kernels: backends map op ids to kernels of their own.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/pointwise/functions.h"  // SPLICE_POINTWISE_OPS, read by op_list.inc

namespace splice::ir {

// Every op of the table by its C++ name (op_list.inc says how names are made); compared
// instead of target strings everywhere above the frontend.
enum class OpId : uint16_t {
#define SPLICE_OP(id, target, op_class, ...) id,
#include "ir/op_list.inc"
#undef SPLICE_OP
  kCount  // not an op: the number of ops
};

// What the planners and passes need to know of an op beyond its schema.
enum class OpClass : uint8_t {
  kCompute,       // computes a new value from its inputs
  kWrite,         // a functional write the write planner plans (slice_scatter, index_put, ...)
  kCopy,          // the program's own copy of a tensor (clone, _to_copy, copy, ...)
  kEmptyFactory,  // allocates a tensor whose contents are undefined (empty*): nothing to run
  kMetadataOnly,  // reads only a tensor's metadata (sym_size, ...), never its elements
  kAlwaysViews,   // shares its input's storage though the schema does not say so
  kAutogradOnly,  // changes autograd metadata only (detach_): an alias at inference
  kViewIfStridesAllow,  // views its input when the new shape fits its strides (reshape)
  kViewIfContiguous,    // views its input when that is contiguous (contiguous)
  kViewIfSameType,      // views its input when dtype and device already match (to)
};

// How an op's first output relates to its first tensor input's storage.
enum class Aliasing : uint8_t {
  kNone,     // a new tensor
  kView,     // always a view of the input (schema `Tensor(a) -> Tensor(a)`)
  kMayView,  // a view only sometimes: OpSchema::op_class says when (eager's rule)
  kMutates,  // writes the input in place and returns it (schema `Tensor(a!)`)
};

enum class ArgType {
  kTensor,
  kInt,
  kSymInt,
  kFloat,
  kBool,
  kScalar,  // a Python number: bool, int or float, possibly symbolic
  kScalarType,
  kLayout,
  kDevice,
  kMemoryFormat,
  kString,
  kGenerator,
};

struct ArgSchema {
  std::string name;
  ArgType type = ArgType::kTensor;
  bool optional = false;             // `T?` (or `T[]?`)
  bool list = false;                 // `T[]`
  bool kwarg_only = false;           // after `*`
  std::optional<Arg> default_value;  // absent: the argument is required
  std::string type_string;           // as written: "SymInt[]?"
  std::string alias_set;             // "a" for `Tensor(a)` / `Tensor(a!)`; empty if none
  bool alias_writes = false;         // `Tensor(a!)`: the op writes this argument
};

struct ReturnSchema {
  ArgType type = ArgType::kTensor;
  bool list = false;      // Tensor[]
  std::string alias_set;  // "a" for `Tensor(a)`: the return shares that argument's storage
};

struct OpSchema {
  OpId id = OpId::kCount;
  OpClass op_class = OpClass::kCompute;
  Aliasing aliasing = Aliasing::kNone;  // from the schema's annotations and op_class
  std::string target;                   // "aten.slice_scatter.default"
  std::string schema_text;              // the ATen schema it was parsed from
  std::vector<ArgSchema> args;
  std::vector<ReturnSchema> returns;
  // Symbolic ops (`_operator.*`, sym_size) compute scalars, not tensors.
  bool is_symbolic() const;
  // Whether the first output may share storage with the first tensor input (a view, a
  // sometimes-view, an autograd-only alias): the planners treat it as the same storage.
  bool may_view() const { return aliasing == Aliasing::kView || aliasing == Aliasing::kMayView; }
  bool is_write() const { return op_class == OpClass::kWrite; }
  bool is_copy() const { return op_class == OpClass::kCopy; }
  bool is_empty_factory() const { return op_class == OpClass::kEmptyFactory; }
  bool reads_metadata_only() const { return op_class == OpClass::kMetadataOnly; }
  // Whether the runtime evaluates the op itself on the host (symbolic scalars, asserts,
  // .item(), Python operators) instead of a backend's kernel.
  bool runs_on_host() const;
  std::optional<size_t> find_arg(std::string_view name) const;
};

// The op for an export target without its "torch.ops." prefix; nullptr if splice does not
// support it.
const OpSchema* find_op(std::string_view target);
// The op of an id (every id has one).
const OpSchema& op_schema(OpId id);
// "aten.slice_scatter.default" for OpId::slice_scatter.
std::string_view op_target(OpId id);
// Every op of the table, in a stable order.
const std::vector<const OpSchema*>& all_ops();

// Parses one ATen schema "slice_scatter(Tensor self, ...) -> Tensor" into an OpSchema for
// `target` (exposed for tests); `aliasing` comes from the alias annotations, refined by
// `op_class`.
Result<OpSchema> parse_op_schema(std::string_view target, std::string_view schema,
                                 OpClass op_class = OpClass::kCompute);

std::string arg_type_name(ArgType type);

}  // namespace splice::ir
