#pragma once
// The values of one call while it runs: a tensor or a scalar per graph value, the bound
// symbols, and the lookups and argument conversion every kind of step shares.

#include <unordered_map>
#include <variant>
#include <vector>

#include "backends/backend.h"
#include "ir/ops.h"
#include "ir/program.h"
#include "runtime/scalar_ops.h"

namespace splice::runtime {

using RtValue = std::variant<std::monostate, Tensor, Scalar>;

// The backend a call runs on, for the few places the runtime itself must read a value on the
// host (.item(), a kernel's SymInt result, a program assert on a tensor).
struct DeviceAccess {
  const backend::Backend* backend = nullptr;
  backend::SessionContext* session = nullptr;
  // t itself when it is in host memory, else a host copy (waits for the device).
  Result<Tensor> to_host(const Tensor& t) const;
};

// Values live in slots indexed by integer (ModelImpl::slot_of, assigned at load), so the steps
// of a call reach their operands without hashing; lookups by value (host nodes, writes) go
// through the model's slot map.
struct Frame {
  std::vector<RtValue> slots;
  const std::unordered_map<const ir::Value*, int>* slot_of = nullptr;
  SymBindings symbols;
  DeviceAccess device;

  // The slot of a graph value (every value of the program has one).
  RtValue& at(const ir::Value* v) { return slots[slot_of->at(v)]; }
  const RtValue& at(const ir::Value* v) const { return slots[slot_of->at(v)]; }
};

std::string node_label(const ir::Node& node);
Result<const Tensor*> tensor_of(const Frame& f, const ir::Value* v);
Result<Scalar> scalar_of(const Frame& f, const ir::Value* v);
Result<int64_t> int_of(const Frame& f, const ir::Value* v);
backend::KernelArg scalar_to_kernel_arg(const Scalar& s);
// Converts one IR argument into a kernel argument, resolving values from the frame.
Result<backend::KernelArg> resolve_arg(const Frame& f, const ir::ArgSchema& schema,
                                       const ir::Arg& arg);
// A node's arguments as kernel arguments, in schema order.
Result<std::vector<backend::KernelArg>> resolve_args(const Frame& f, const ir::Node& node);
// Checks a kernel's output against the type the archive recorded for it.
Result<void> check_output(const ir::Node& node, const ir::Value& v, const Tensor& t,
                          const SymBindings& symbols);

}  // namespace splice::runtime
