// Load-time resolution of every kernel node's arguments and outputs (see node_exec.h), and the
// two per-call halves: fill_args patches a session's argument copy from the frame's slots,
// release_args drops the tensors again. Constants (literals, dtypes, strings, int lists without
// symbols) are converted into kernel arguments once here, never per call.
#include "runtime/node_exec.h"

namespace splice::runtime {

namespace {

using detail::ArgRef;
using ir::Arg;
using ir::Value;

// The kernel-argument template of one IR argument: the constant itself, or a placeholder of
// the kind the kernel will receive, with a reference per value to patch in.
Result<backend::KernelArg> arg_template(const detail::ModelImpl& m, const ir::ArgSchema& schema,
                                        const Arg& arg, uint32_t index, std::vector<ArgRef>& refs) {
  using D = Arg::Data;
  const D& d = arg.data;
  auto slot = [&](const Value* v) -> Result<int32_t> {
    auto it = m.slot_of.find(v);
    if (it == m.slot_of.end())
      return make_error(ErrorKind::kBadArchive, "argument '{}' names a value outside the graph",
                        schema.name);
    return it->second;
  };
  if (auto* v = std::get_if<Value*>(&d)) {
    SPLICE_ASSIGN_OR_RETURN(int32_t s, slot(*v));
    if ((*v)->is_tensor()) {
      refs.push_back({ArgRef::Kind::kTensor, index, 0, s});
      return backend::KernelArg{Tensor()};
    }
    refs.push_back({ArgRef::Kind::kScalar, index, 0, s});
    return backend::KernelArg{std::monostate{}};
  }
  if (auto* ints = std::get_if<std::vector<ir::SymIntArg>>(&d)) {
    std::vector<int64_t> out(ints->size(), 0);
    for (size_t i = 0; i < ints->size(); ++i) {
      if (auto* c = std::get_if<int64_t>(&(*ints)[i])) {
        out[i] = *c;
      } else {
        SPLICE_ASSIGN_OR_RETURN(int32_t s, slot(std::get<Value*>((*ints)[i])));
        refs.push_back({ArgRef::Kind::kIntElem, index, static_cast<uint32_t>(i), s});
      }
    }
    return backend::KernelArg{std::move(out)};
  }
  if (auto* list = std::get_if<std::vector<Value*>>(&d)) {
    if (schema.optional) {
      std::vector<std::optional<Tensor>> out(list->size());
      for (size_t i = 0; i < list->size(); ++i) {
        if ((*list)[i] == nullptr) continue;
        SPLICE_ASSIGN_OR_RETURN(int32_t s, slot((*list)[i]));
        out[i] = Tensor();
        refs.push_back({ArgRef::Kind::kOptTensorElem, index, static_cast<uint32_t>(i), s});
      }
      return backend::KernelArg{std::move(out)};
    }
    std::vector<Tensor> out(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      SPLICE_ASSIGN_OR_RETURN(int32_t s, slot((*list)[i]));
      refs.push_back({ArgRef::Kind::kTensorElem, index, static_cast<uint32_t>(i), s});
    }
    return backend::KernelArg{std::move(out)};
  }
  // No value inside: the frame is not consulted, so the shared conversion is exact.
  Frame empty;
  return resolve_arg(empty, schema, arg);
}

Error missing(const detail::ModelImpl& m, int32_t slot, const char* what) {
  return make_error(ErrorKind::kInternal, "value '{}' has no {} at run time",
                    m.slot_value[slot]->name(), what);
}

// The empty tensor copied over released arguments: copy assignment keeps the shape vectors'
// capacity, so the next call's fill does not allocate.
const Tensor kReleased;

}  // namespace

Result<void> resolve_node_exec(detail::ModelImpl& m) {
  const ir::Graph& g = m.program.graph;
  m.slot_of.clear();
  m.slot_value.clear();
  m.static_shape.clear();
  for (const auto& v : g.values()) {
    m.slot_of.emplace(v.get(), static_cast<int>(m.slot_value.size()));
    m.slot_value.push_back(v.get());
    std::optional<detail::StaticShape> shape;
    if (v->is_tensor()) shape = detail::shape_under(v->type().dtype, v->type().sizes, nullptr);
    m.static_shape.push_back(std::move(shape));
  }
  m.step_release.assign(m.release_after.size(), {});
  for (size_t s = 0; s < m.release_after.size(); ++s)
    for (const Value* v : m.release_after[s]) m.step_release[s].push_back(m.slot_of.at(v));
  const auto& nodes = g.nodes();
  m.exec.assign(nodes.size(), {});
  m.host_node.assign(nodes.size(), 0);
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    const ir::Node& node = *nodes[pos];
    detail::NodeExec& e = m.exec[pos];
    for (const Value* v : node.outputs()) e.outputs.push_back(v == nullptr ? -1 : m.slot_of.at(v));
    if (node.outputs().size() == 1 && node.output(0) != nullptr) {
      auto it = m.placement.find(node.output(0));
      if (it != m.placement.end()) e.placement = it->second;
    }
    if (node.op().runs_on_host()) {
      m.host_node[pos] = 1;
      continue;
    }
    const auto& schema = node.op().args;
    if (node.args().size() > schema.size())
      return make_error(ErrorKind::kBadArchive, "{}: {} arguments, the schema has {}",
                        node_label(node), node.args().size(), schema.size());
    for (size_t i = 0; i < node.args().size(); ++i) {
      auto a = arg_template(m, schema[i], node.arg(i), static_cast<uint32_t>(i), e.refs);
      if (!a.ok()) return a.error().with_context(node_label(node));
      e.args.push_back(std::move(*a));
    }
    e.memoised_view = node.op().may_view() && node.outputs().size() == 1 && e.outputs[0] >= 0 &&
                      e.placement == nullptr && e.refs.size() == 1 &&
                      e.refs[0].kind == ArgRef::Kind::kTensor;
  }
  m.static_buffer_bytes.clear();
  for (const auto& b : m.plan.buffers) m.static_buffer_bytes.push_back(b.bytes.constant());
  return ok_result();
}

Result<void> fill_args(const detail::ModelImpl& m, const detail::NodeExec& exec, const Frame& f,
                       std::vector<backend::KernelArg>& args) {
  for (const ArgRef& r : exec.refs) {
    const RtValue& v = f.slots[r.slot];
    switch (r.kind) {
      case ArgRef::Kind::kTensor: {
        const Tensor* t = std::get_if<Tensor>(&v);
        if (t == nullptr) return missing(m, r.slot, "tensor");
        std::get<Tensor>(args[r.arg]) = *t;
        break;
      }
      case ArgRef::Kind::kScalar: {
        const Scalar* s = std::get_if<Scalar>(&v);
        if (s == nullptr) return missing(m, r.slot, "scalar");
        args[r.arg] = scalar_to_kernel_arg(*s);
        break;
      }
      case ArgRef::Kind::kIntElem: {
        const Scalar* s = std::get_if<Scalar>(&v);
        int64_t x = 0;
        if (s != nullptr && std::holds_alternative<int64_t>(*s))
          x = std::get<int64_t>(*s);
        else if (s != nullptr && std::holds_alternative<bool>(*s))
          x = std::get<bool>(*s);
        else
          return missing(m, r.slot, "int");
        std::get<std::vector<int64_t>>(args[r.arg])[r.elem] = x;
        break;
      }
      case ArgRef::Kind::kTensorElem: {
        const Tensor* t = std::get_if<Tensor>(&v);
        if (t == nullptr) return missing(m, r.slot, "tensor");
        std::get<std::vector<Tensor>>(args[r.arg])[r.elem] = *t;
        break;
      }
      case ArgRef::Kind::kOptTensorElem: {
        const Tensor* t = std::get_if<Tensor>(&v);
        if (t == nullptr) return missing(m, r.slot, "tensor");
        std::get<std::vector<std::optional<Tensor>>>(args[r.arg])[r.elem] = *t;
        break;
      }
    }
  }
  return ok_result();
}

void release_args(const detail::NodeExec& exec, std::vector<backend::KernelArg>& args) {
  for (const ArgRef& r : exec.refs) {
    switch (r.kind) {
      case ArgRef::Kind::kTensor:
        if (auto* t = std::get_if<Tensor>(&args[r.arg])) *t = kReleased;
        break;
      case ArgRef::Kind::kTensorElem:
        if (auto* l = std::get_if<std::vector<Tensor>>(&args[r.arg])) (*l)[r.elem] = kReleased;
        break;
      case ArgRef::Kind::kOptTensorElem:
        if (auto* l = std::get_if<std::vector<std::optional<Tensor>>>(&args[r.arg]))
          (*l)[r.elem] = kReleased;
        break;
      default:
        break;
    }
  }
}

}  // namespace splice::runtime
