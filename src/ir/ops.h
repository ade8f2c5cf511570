#pragma once
// The op table: every op splice understands, keyed by its export target
// ("aten.slice_scatter.default"), with its argument schema written exactly as ATen writes it
// (native_functions.yaml), so PyTorch's defaults fill the arguments an archive leaves out.
// The table holds no kernels: backends map targets to kernels of their own.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace splice::ir {

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
  bool optional = false;   // `T?` (or `T[]?`)
  bool list = false;       // `T[]`
  bool kwarg_only = false; // after `*`
  std::optional<Arg> default_value;  // absent: the argument is required
  std::string type_string;           // as written: "SymInt[]?"
};

struct ReturnSchema {
  ArgType type = ArgType::kTensor;
  bool list = false;  // Tensor[]
};

struct OpSchema {
  std::string target;       // "aten.slice_scatter.default"
  std::string schema_text;  // the ATen schema it was parsed from
  std::vector<ArgSchema> args;
  std::vector<ReturnSchema> returns;
  // Symbolic ops (`_operator.*`, sym_size) compute scalars, not tensors.
  bool is_symbolic() const;
  std::optional<size_t> find_arg(std::string_view name) const;
};

// The op for an export target without its "torch.ops." prefix; nullptr if splice does not
// support it.
const OpSchema* find_op(std::string_view target);
// Every op of the table, in a stable order.
const std::vector<const OpSchema*>& all_ops();

// Parses one ATen schema "slice_scatter(Tensor self, ...) -> Tensor" into an OpSchema for
// `target` (exposed for tests).
Result<OpSchema> parse_op_schema(std::string_view target, std::string_view schema);

std::string arg_type_name(ArgType type);

}  // namespace splice::ir
