// The reference interpreter: one pass over the graph in program order per call. Symbolic
// scalar nodes and checks are evaluated here; tensor ops go to the CPU backend's kernels with
// their arguments resolved (values looked up, SymInts evaluated). After each kernel the
// result's dtype and (where the symbols are known) shape are checked against what the archive
// recorded, so a kernel that disagrees with PyTorch is caught at the node, not at the output.
#include "runtime/interpreter.h"

#include <set>
#include <unordered_map>

#include "backends/cpu/cast.h"
#include "ir/ops.h"
#include "runtime/input_binding.h"
#include "runtime/scalar_ops.h"

namespace splice::runtime {

namespace {

using ir::Arg;
using ir::ArgType;
using ir::Node;
using ir::Value;
using ir::ValueKind;

using RtValue = std::variant<std::monostate, Tensor, Scalar>;

bool is_runtime_evaluated(const ir::OpSchema& op) {
  std::string_view t = op.target;
  return op.is_symbolic() || op.returns.empty() || !t.starts_with("aten.");
}

struct Frame {
  std::unordered_map<const Value*, RtValue> values;
  SymBindings symbols;
};

std::string node_label(const Node& node) {
  return fmt::format("node '{}' ({})", node.name(), node.target());
}

Result<const Tensor*> tensor_of(const Frame& f, const Value* v) {
  auto it = f.values.find(v);
  if (it == f.values.end() || !std::holds_alternative<Tensor>(it->second))
    return make_error(ErrorKind::kInternal, "value '{}' has no tensor at run time", v->name());
  return &std::get<Tensor>(it->second);
}

Result<Scalar> scalar_of(const Frame& f, const Value* v) {
  auto it = f.values.find(v);
  if (it == f.values.end() || !std::holds_alternative<Scalar>(it->second))
    return make_error(ErrorKind::kInternal, "value '{}' has no scalar at run time", v->name());
  return std::get<Scalar>(it->second);
}

Result<int64_t> int_of(const Frame& f, const Value* v) {
  SPLICE_ASSIGN_OR_RETURN(Scalar s, scalar_of(f, v));
  if (auto* i = std::get_if<int64_t>(&s)) return *i;
  if (auto* b = std::get_if<bool>(&s)) return int64_t{*b};
  return make_error(ErrorKind::kInternal, "value '{}' is a float where an int is needed",
                    v->name());
}

cpu::KernelArg scalar_to_kernel_arg(const Scalar& s) {
  if (auto* i = std::get_if<int64_t>(&s)) return *i;
  if (auto* d = std::get_if<double>(&s)) return *d;
  return std::get<bool>(s);
}

// Converts one IR argument into a kernel argument, resolving values from the frame.
Result<cpu::KernelArg> resolve_arg(const Frame& f, const ir::ArgSchema& schema, const Arg& arg) {
  using D = Arg::Data;
  const D& d = arg.data;
  if (std::holds_alternative<Arg::None>(d)) return cpu::KernelArg{std::monostate{}};
  if (auto* b = std::get_if<bool>(&d)) return cpu::KernelArg{*b};
  if (auto* i = std::get_if<int64_t>(&d)) return cpu::KernelArg{*i};
  if (auto* x = std::get_if<double>(&d)) return cpu::KernelArg{*x};
  if (auto* s = std::get_if<std::string>(&d)) return cpu::KernelArg{*s};
  if (auto* t = std::get_if<DType>(&d)) return cpu::KernelArg{*t};
  if (auto* v = std::get_if<Value*>(&d)) {
    if ((*v)->is_tensor()) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, *v));
      return cpu::KernelArg{*t};
    }
    SPLICE_ASSIGN_OR_RETURN(Scalar s, scalar_of(f, *v));
    return scalar_to_kernel_arg(s);
  }
  if (auto* ints = std::get_if<std::vector<ir::SymIntArg>>(&d)) {
    std::vector<int64_t> out;
    out.reserve(ints->size());
    for (const auto& e : *ints) {
      if (auto* c = std::get_if<int64_t>(&e)) {
        out.push_back(*c);
      } else {
        SPLICE_ASSIGN_OR_RETURN(int64_t x, int_of(f, std::get<Value*>(e)));
        out.push_back(x);
      }
    }
    return cpu::KernelArg{std::move(out)};
  }
  if (auto* list = std::get_if<std::vector<Value*>>(&d)) {
    if (schema.optional) {
      std::vector<std::optional<Tensor>> out;
      for (const Value* v : *list) {
        if (v == nullptr) {
          out.emplace_back(std::nullopt);
        } else {
          SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, v));
          out.emplace_back(*t);
        }
      }
      return cpu::KernelArg{std::move(out)};
    }
    std::vector<Tensor> out;
    for (const Value* v : *list) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, v));
      out.push_back(*t);
    }
    return cpu::KernelArg{std::move(out)};
  }
  if (auto* fl = std::get_if<std::vector<double>>(&d)) return cpu::KernelArg{*fl};
  if (auto* bl = std::get_if<std::vector<bool>>(&d)) return cpu::KernelArg{*bl};
  return make_error(ErrorKind::kInternal, "argument '{}' has an unknown form", schema.name);
}

// Checks a kernel's output against the type the archive recorded for it.
Result<void> check_output(const Node& node, const Value& v, const Tensor& t,
                          const SymBindings& symbols) {
  const ir::TensorType& type = v.type();
  if (t.dtype() != type.dtype || t.dim() != type.rank())
    return make_error(ErrorKind::kInternal, "{}: kernel produced {} {} for '{}', recorded {}",
                      node_label(node), dtype_name(t.dtype()), shape_string(t.sizes()),
                      v.name(), type.to_string());
  for (int64_t d = 0; d < type.rank(); ++d) {
    auto expected = type.sizes[d].evaluate(symbols);
    if (!expected.ok()) continue;  // depends on a symbol not bound yet (data-dependent)
    if (*expected != t.size(d))
      return make_error(ErrorKind::kInternal,
                        "{}: kernel produced {} for '{}', recorded {} (dim {} should be {})",
                        node_label(node), shape_string(t.sizes()), v.name(), type.to_string(),
                        d, *expected);
  }
  return ok_result();
}

// Binds an unbacked symbol (`u0` from .item()) and checks its range.
Result<void> bind_data_dependent(const ir::Program& program, const Node& node, const Value& v,
                                 const Scalar& s, SymBindings& symbols) {
  if (!v.expr() || v.expr()->op() != SymOp::kSymbol) return ok_result();
  auto* i = std::get_if<int64_t>(&s);
  if (i == nullptr) return ok_result();
  const std::string& name = v.expr()->symbol_name();
  symbols[name] = *i;
  auto range = program.ranges.find(name);
  if (range != program.ranges.end() && !range->second.contains(*i))
    return make_error(ErrorKind::kOutOfRange,
                      "{}: the value {} read into symbol {} is outside its range {}",
                      node_label(node), *i, name, range->second.to_string());
  return ok_result();
}

Result<Scalar> read_item(const Node& node, const Value& out, const Tensor& t) {
  if (t.numel() != 1)
    return make_error(ErrorKind::kBadInput, "{}: .item() of a tensor with {} elements",
                      node_label(node), t.numel());
  const std::byte* p = t.raw_data();
  double d = 0;
  int64_t i = 0;
  switch (t.dtype()) {
    case DType::kBool: return Scalar{*reinterpret_cast<const bool*>(p)};
    case DType::kUInt8: i = *reinterpret_cast<const uint8_t*>(p); break;
    case DType::kInt8: i = *reinterpret_cast<const int8_t*>(p); break;
    case DType::kInt16: i = *reinterpret_cast<const int16_t*>(p); break;
    case DType::kInt32: i = *reinterpret_cast<const int32_t*>(p); break;
    case DType::kInt64: i = *reinterpret_cast<const int64_t*>(p); break;
    default: {
      Tensor f = cpu::cast_copy(t, DType::kFloat64);
      d = *f.data<double>();
      if (out.kind() == ValueKind::kSymInt) {
        return make_error(ErrorKind::kBadInput, "{}: float .item() used as an int",
                          node_label(node));
      }
      return Scalar{d};
    }
  }
  if (out.kind() == ValueKind::kSymFloat) return Scalar{static_cast<double>(i)};
  if (out.kind() == ValueKind::kSymBool) return Scalar{i != 0};
  return Scalar{i};
}

// Runs a node the runtime evaluates itself (symbolic scalars, asserts, .item()).
Result<void> run_scalar_node(const ir::Program& program, const Node& node, Frame& f) {
  const std::string& t = node.target();
  auto out = [&](Scalar s) -> Result<void> {
    if (!node.outputs().empty() && node.output(0) != nullptr) f.values[node.output(0)] = s;
    return ok_result();
  };
  auto arg_scalar = [&](size_t i) -> Result<Scalar> {
    const Arg& a = node.arg(i);
    if (auto* v = std::get_if<Value*>(&a.data)) return scalar_of(f, *v);
    if (auto* b = std::get_if<bool>(&a.data)) return Scalar{*b};
    if (auto* x = std::get_if<int64_t>(&a.data)) return Scalar{*x};
    if (auto* d = std::get_if<double>(&a.data)) return Scalar{*d};
    return make_error(ErrorKind::kBadArchive, "{}: argument {} is not a scalar",
                      node_label(node), i);
  };
  auto arg_tensor = [&](size_t i) -> Result<const Tensor*> {
    const Arg& a = node.arg(i);
    auto* v = std::get_if<Value*>(&a.data);
    if (v == nullptr || !(*v)->is_tensor())
      return make_error(ErrorKind::kBadArchive, "{}: argument {} is not a tensor",
                        node_label(node), i);
    return tensor_of(f, *v);
  };

  if (t == "aten.sym_size.int" || t == "aten.sym_stride.int") {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    int64_t dim = node.arg(1).as<int64_t>();
    if (dim < 0) dim += x->dim();
    if (dim < 0 || dim >= x->dim())
      return make_error(ErrorKind::kBadArchive, "{}: dim {} out of range for rank {}",
                        node_label(node), node.arg(1).as<int64_t>(), x->dim());
    // Strides as PyTorch reports them for the contiguous tensors programs see.
    int64_t v = t == "aten.sym_size.int" ? x->size(dim) : contiguous_strides(x->sizes())[dim];
    return out(Scalar{v});
  }
  if (t == "aten.sym_numel.default") {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    return out(Scalar{x->numel()});
  }
  if (t == "aten.sym_storage_offset.default") return out(Scalar{int64_t{0}});
  if (t == "aten._local_scalar_dense.default" || t == "aten.item.default") {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    if (node.outputs().empty() || node.output(0) == nullptr) return ok_result();
    SPLICE_ASSIGN_OR_RETURN(Scalar s, read_item(node, *node.output(0), *x));
    SPLICE_TRY(bind_data_dependent(program, node, *node.output(0), s, f.symbols));
    return out(s);
  }
  if (t == "aten._assert_scalar.default") {
    SPLICE_ASSIGN_OR_RETURN(Scalar cond, arg_scalar(0));
    if (!scalar_truthy(cond)) {
      const Arg& msg = node.arg(1);
      std::string text = msg.is<std::string>() ? msg.as<std::string>() : "assertion failed";
      return make_error(ErrorKind::kAssertFailed, "{} ({})", text, node_label(node));
    }
    return ok_result();
  }
  if (t == "aten._assert_async.msg") {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    Tensor b = cpu::cast_copy(*x, DType::kBool);
    if (b.numel() != 1 || !*b.data<bool>()) {
      const Arg& msg = node.arg(1);
      return make_error(ErrorKind::kAssertFailed, "{} ({})",
                        msg.is<std::string>() ? msg.as<std::string>() : "assertion failed",
                        node_label(node));
    }
    return ok_result();
  }
  if (t == "aten.sym_constrain_range.default" || t == "aten.sym_constrain_range_for_size.default") {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, arg_scalar(0));
    int64_t v = std::holds_alternative<int64_t>(s) ? std::get<int64_t>(s) : 0;
    const Arg& lo = node.arg(1);
    const Arg& hi = node.arg(2);
    if ((lo.is<int64_t>() && v < lo.as<int64_t>()) || (hi.is<int64_t>() && v > hi.as<int64_t>()))
      return make_error(ErrorKind::kOutOfRange, "{}: value {} is outside [{}, {}]",
                        node_label(node), v,
                        lo.is<int64_t>() ? std::to_string(lo.as<int64_t>()) : "-inf",
                        hi.is<int64_t>() ? std::to_string(hi.as<int64_t>()) : "inf");
    return ok_result();
  }
  if (t == "aten._assert_tensor_metadata.default") {
    // Export's record of what it assumed about a tensor; the dtype is checked, the sizes are
    // already checked against every node's recorded type.
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    const Arg& dtype = node.arg(3);
    if (dtype.is<DType>() && dtype.as<DType>() != x->dtype())
      return make_error(ErrorKind::kBadInput, "{}: tensor has dtype {}, the program expects {}",
                        node_label(node), dtype_name(x->dtype()), dtype_name(dtype.as<DType>()));
    return ok_result();
  }
  // Python operators on scalars.
  std::vector<Scalar> args;
  for (size_t i = 0; i < node.args().size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, arg_scalar(i));
    args.push_back(s);
  }
  auto r = eval_scalar_op(t, args);
  if (!r.ok()) return r.error().with_context(node_label(node));
  return out(*r);
}

Result<void> run_kernel_node(const Node& node, cpu::KernelFn kernel, Frame& f) {
  const auto& schema = node.op().args;
  std::vector<cpu::KernelArg> args;
  args.reserve(node.args().size());
  for (size_t i = 0; i < node.args().size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(cpu::KernelArg a, resolve_arg(f, schema[i], node.arg(i)));
    args.push_back(std::move(a));
  }
  auto results = kernel(args);
  if (!results.ok()) return results.error().with_context(node_label(node));
  const auto& outs = *results;
  if (outs.size() < node.outputs().size())
    return make_error(ErrorKind::kInternal, "{}: kernel returned {} outputs, the node has {}",
                      node_label(node), outs.size(), node.outputs().size());
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    const Value* v = node.output(i);
    if (v == nullptr) continue;
    if (v->is_tensor()) {
      SPLICE_TRY(check_output(node, *v, outs[i], f.symbols));
      f.values[v] = outs[i];
    } else {
      // A SymInt result of a tensor op (e.g. attention's max_q) comes back as a 0-d tensor.
      Tensor i64 = cpu::cast_copy(outs[i], DType::kInt64);
      f.values[v] = Scalar{*i64.data<int64_t>()};
    }
  }
  return ok_result();
}

Result<std::optional<Tensor>> output_tensor(const Frame& f, const Arg& out) {
  if (out.is_none()) return std::optional<Tensor>{};
  if (auto* v = std::get_if<Value*>(&out.data)) {
    if ((*v)->is_tensor()) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, *v));
      return std::optional<Tensor>{*t};
    }
    SPLICE_ASSIGN_OR_RETURN(Scalar s, scalar_of(f, *v));
    return std::optional<Tensor>{scalar_tensor(s)};
  }
  if (auto* i = std::get_if<int64_t>(&out.data)) return std::optional<Tensor>{scalar_tensor(*i)};
  if (auto* d = std::get_if<double>(&out.data)) return std::optional<Tensor>{scalar_tensor(*d)};
  if (auto* b = std::get_if<bool>(&out.data)) return std::optional<Tensor>{scalar_tensor(*b)};
  return make_error(ErrorKind::kBadArchive, "a graph output of an unsupported kind");
}

}  // namespace

Tensor scalar_tensor(const Scalar& s) {
  if (auto* b = std::get_if<bool>(&s)) {
    Tensor t = Tensor::empty(DType::kBool, {});
    *t.data<bool>() = *b;
    return t;
  }
  if (auto* i = std::get_if<int64_t>(&s)) {
    Tensor t = Tensor::empty(DType::kInt64, {});
    *t.data<int64_t>() = *i;
    return t;
  }
  Tensor t = Tensor::empty(DType::kFloat64, {});
  *t.data<double>() = std::get<double>(s);
  return t;
}

Result<detail::ModelImpl> prepare(ir::Program program, int threads) {
  detail::ModelImpl model;
  std::set<std::string> missing;
  for (const auto& node : program.graph.nodes()) {
    if (is_runtime_evaluated(node->op())) {
      model.kernels.push_back(nullptr);
      continue;
    }
    cpu::KernelFn k = cpu::find_kernel(node->target());
    if (k == nullptr) missing.insert(node->target());
    model.kernels.push_back(k);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return make_error(ErrorKind::kUnsupportedOp,
                      "the CPU backend has no kernel for {} op(s): {}", missing.size(), list);
  }
  const auto& specs = program.signature.inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].kind == ir::InputKind::kCustomObj || specs[i].kind == ir::InputKind::kToken)
      return make_error(ErrorKind::kUnsupportedOp, "input {} is a {}, which splice cannot run", i,
                        ir::input_kind_name(specs[i].kind));
    if (specs[i].kind != ir::InputKind::kUserInput) continue;
    if (specs[i].value == nullptr || !specs[i].value->is_tensor())
      return make_error(ErrorKind::kBadArchive,
                        "user input '{}' is not a tensor; `splice run` takes tensor inputs only "
                        "(pass a 0-d tensor and call .item() in the program instead)",
                        specs[i].value ? specs[i].value->name() : specs[i].target);
    model.user_inputs.push_back(i);
  }
  model.threads = threads;
  model.program = std::move(program);
  return model;
}

Result<CallOutputs> execute(const detail::ModelImpl& model, const TensorMap& user_inputs,
                            const TensorMap& buffers) {
  const ir::Program& program = model.program;
  Frame f;
  SPLICE_ASSIGN_OR_RETURN(auto bound, bind_inputs(program, user_inputs, buffers, f.symbols));
  for (auto& [value, tensor] : bound) f.values[value] = std::move(tensor);

  const auto& nodes = program.graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    if (model.kernels[i] == nullptr) {
      SPLICE_TRY(run_scalar_node(program, node, f));
    } else {
      SPLICE_TRY(run_kernel_node(node, model.kernels[i], f));
    }
  }

  CallOutputs result;
  const auto& outs = program.graph.outputs();
  const auto& specs = program.signature.outputs;
  for (size_t i = 0; i < outs.size() && i < specs.size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(std::optional<Tensor> t, output_tensor(f, outs[i]));
    switch (specs[i].kind) {
      case ir::OutputKind::kUserOutput:
      case ir::OutputKind::kLossOutput:
        result.user_outputs.push_back(std::move(t));
        break;
      case ir::OutputKind::kBufferMutation:
        if (t) result.new_buffers[specs[i].target] = *t;
        break;
      case ir::OutputKind::kUserInputMutation:
        if (t) result.mutated_inputs[specs[i].target] = *t;
        break;
      default:
        return make_error(ErrorKind::kUnsupportedOp, "graph output {} is a {}, which splice "
                          "cannot run", i, ir::output_kind_name(specs[i].kind));
    }
  }
  return result;
}

}  // namespace splice::runtime
