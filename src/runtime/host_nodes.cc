// The nodes the runtime evaluates itself (see host_nodes.h).
#include "runtime/host_nodes.h"

#include "tensor/convert.h"

namespace splice::runtime {

using ir::Arg;
using ir::Node;
using ir::OpId;
using ir::Value;
using ir::ValueKind;

Error symbol_out_of_range(const Node& item, const std::string& symbol, int64_t value,
                          const SymRange& range) {
  return make_error(ErrorKind::kOutOfRange,
                    "{}: the value {} read into symbol {} is outside its range {}",
                    node_label(item), value, symbol, range.to_string());
}

namespace {

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
    return symbol_out_of_range(node, name, *i, range->second);
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
    case DType::kBool:
      return Scalar{*reinterpret_cast<const bool*>(p)};
    case DType::kUInt8:
      i = *reinterpret_cast<const uint8_t*>(p);
      break;
    case DType::kInt8:
      i = *reinterpret_cast<const int8_t*>(p);
      break;
    case DType::kInt16:
      i = *reinterpret_cast<const int16_t*>(p);
      break;
    case DType::kInt32:
      i = *reinterpret_cast<const int32_t*>(p);
      break;
    case DType::kInt64:
      i = *reinterpret_cast<const int64_t*>(p);
      break;
    default: {
      SPLICE_ASSIGN_OR_RETURN(Tensor f, convert(t, DType::kFloat64));
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

}  // namespace

// Runs a node the runtime evaluates itself (symbolic scalars, asserts, .item()).
Result<void> run_host_node(const ir::Program& program, const Node& node, Frame& f) {
  const OpId op = node.op_id();
  auto out = [&](Scalar s) -> Result<void> {
    if (!node.outputs().empty() && node.output(0) != nullptr) f.at(node.output(0)) = s;
    return ok_result();
  };
  auto arg_scalar = [&](size_t i) -> Result<Scalar> {
    const Arg& a = node.arg(i);
    if (auto* v = std::get_if<Value*>(&a.data)) return scalar_of(f, *v);
    if (auto* b = std::get_if<bool>(&a.data)) return Scalar{*b};
    if (auto* x = std::get_if<int64_t>(&a.data)) return Scalar{*x};
    if (auto* d = std::get_if<double>(&a.data)) return Scalar{*d};
    return make_error(ErrorKind::kBadArchive, "{}: argument {} is not a scalar", node_label(node),
                      i);
  };
  auto arg_tensor = [&](size_t i) -> Result<const Tensor*> {
    const Arg& a = node.arg(i);
    auto* v = std::get_if<Value*>(&a.data);
    if (v == nullptr || !(*v)->is_tensor())
      return make_error(ErrorKind::kBadArchive, "{}: argument {} is not a tensor", node_label(node),
                        i);
    return tensor_of(f, *v);
  };

  if (op == OpId::sym_size_int || op == OpId::sym_stride_int) {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    int64_t dim = node.arg(1).as<int64_t>();
    if (dim < 0) dim += x->dim();
    if (dim < 0 || dim >= x->dim())
      return make_error(ErrorKind::kBadArchive, "{}: dim {} out of range for rank {}",
                        node_label(node), node.arg(1).as<int64_t>(), x->dim());
    // Strides as PyTorch reports them for the contiguous tensors programs see.
    int64_t v = op == OpId::sym_size_int ? x->size(dim) : contiguous_strides(x->sizes())[dim];
    return out(Scalar{v});
  }
  if (op == OpId::sym_numel) {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    return out(Scalar{x->numel()});
  }
  if (op == OpId::sym_storage_offset) return out(Scalar{int64_t{0}});
  if (op == OpId::_local_scalar_dense || op == OpId::item) {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    if (node.outputs().empty() || node.output(0) == nullptr) return ok_result();
    SPLICE_ASSIGN_OR_RETURN(Tensor host, f.device.to_host(*x));
    SPLICE_ASSIGN_OR_RETURN(Scalar s, read_item(node, *node.output(0), host));
    SPLICE_TRY(bind_data_dependent(program, node, *node.output(0), s, f.symbols));
    return out(s);
  }
  if (op == OpId::_assert_scalar) {
    SPLICE_ASSIGN_OR_RETURN(Scalar cond, arg_scalar(0));
    if (!scalar_truthy(cond)) {
      const Arg& msg = node.arg(1);
      std::string text = msg.is<std::string>() ? msg.as<std::string>() : "assertion failed";
      return make_error(ErrorKind::kAssertFailed, "{} ({})", text, node_label(node));
    }
    return ok_result();
  }
  if (op == OpId::_assert_async_msg) {
    SPLICE_ASSIGN_OR_RETURN(const Tensor* x, arg_tensor(0));
    SPLICE_ASSIGN_OR_RETURN(Tensor host, f.device.to_host(*x));
    SPLICE_ASSIGN_OR_RETURN(Tensor b, convert(host, DType::kBool));
    if (b.numel() != 1 || !*b.data<bool>()) {
      const Arg& msg = node.arg(1);
      return make_error(ErrorKind::kAssertFailed, "{} ({})",
                        msg.is<std::string>() ? msg.as<std::string>() : "assertion failed",
                        node_label(node));
    }
    return ok_result();
  }
  if (op == OpId::sym_constrain_range || op == OpId::sym_constrain_range_for_size) {
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
  if (op == OpId::_assert_tensor_metadata) {
    // Export's record of what it assumed about a tensor. Its shape rule proved the recorded
    // dtype and sizes at load, and every tensor of a run is checked against its value's
    // recorded type (inputs when bound, kernel results when made), so nothing is left to
    // check; the tensor is not read, and a fused group need not store it for this node.
    return ok_result();
  }
  // Python operators on scalars.
  std::vector<Scalar> args;
  for (size_t i = 0; i < node.args().size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(Scalar s, arg_scalar(i));
    args.push_back(s);
  }
  auto r = eval_scalar_op(op, args);
  if (!r.ok()) return r.error().with_context(node_label(node));
  return out(*r);
}

}  // namespace splice::runtime
