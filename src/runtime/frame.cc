// Frame lookups and argument conversion shared by the executor's steps.
#include "runtime/frame.h"

namespace splice::runtime {

using ir::Arg;
using ir::Node;
using ir::Value;

std::string node_label(const Node& node) {
  return fmt::format("node '{}' ({})", node.name(), node.target());
}

Result<Tensor> DeviceAccess::to_host(const Tensor& t) const {
  if (t.is_host()) return t;
  SPLICE_ASSIGN_OR_RETURN(Tensor host, Tensor::empty(t.dtype(), t.sizes()));
  SPLICE_TRY(backend->copy(host, t, session));
  SPLICE_TRY(backend->synchronize(*session));
  return host;
}

Result<const Tensor*> tensor_of(const Frame& f, const Value* v) {
  auto it = f.slot_of->find(v);
  const Tensor* t = it == f.slot_of->end() ? nullptr : std::get_if<Tensor>(&f.slots[it->second]);
  if (t == nullptr)
    return make_error(ErrorKind::kInternal, "value '{}' has no tensor at run time", v->name());
  return t;
}

Result<Scalar> scalar_of(const Frame& f, const Value* v) {
  auto it = f.slot_of->find(v);
  const Scalar* s = it == f.slot_of->end() ? nullptr : std::get_if<Scalar>(&f.slots[it->second]);
  if (s == nullptr)
    return make_error(ErrorKind::kInternal, "value '{}' has no scalar at run time", v->name());
  return *s;
}

Result<int64_t> int_of(const Frame& f, const Value* v) {
  SPLICE_ASSIGN_OR_RETURN(Scalar s, scalar_of(f, v));
  if (auto* i = std::get_if<int64_t>(&s)) return *i;
  if (auto* b = std::get_if<bool>(&s)) return int64_t{*b};
  return make_error(ErrorKind::kInternal, "value '{}' is a float where an int is needed",
                    v->name());
}

backend::KernelArg scalar_to_kernel_arg(const Scalar& s) {
  if (auto* i = std::get_if<int64_t>(&s)) return *i;
  if (auto* d = std::get_if<double>(&s)) return *d;
  return std::get<bool>(s);
}

// Converts one IR argument into a kernel argument, resolving values from the frame.
Result<backend::KernelArg> resolve_arg(const Frame& f, const ir::ArgSchema& schema,
                                       const Arg& arg) {
  using D = Arg::Data;
  const D& d = arg.data;
  if (std::holds_alternative<Arg::None>(d)) return backend::KernelArg{std::monostate{}};
  if (auto* b = std::get_if<bool>(&d)) return backend::KernelArg{*b};
  if (auto* i = std::get_if<int64_t>(&d)) return backend::KernelArg{*i};
  if (auto* x = std::get_if<double>(&d)) return backend::KernelArg{*x};
  if (auto* s = std::get_if<std::string>(&d)) return backend::KernelArg{*s};
  if (auto* t = std::get_if<DType>(&d)) return backend::KernelArg{*t};
  if (auto* v = std::get_if<Value*>(&d)) {
    if ((*v)->is_tensor()) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, *v));
      return backend::KernelArg{*t};
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
    return backend::KernelArg{std::move(out)};
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
      return backend::KernelArg{std::move(out)};
    }
    std::vector<Tensor> out;
    for (const Value* v : *list) {
      SPLICE_ASSIGN_OR_RETURN(const Tensor* t, tensor_of(f, v));
      out.push_back(*t);
    }
    return backend::KernelArg{std::move(out)};
  }
  if (auto* fl = std::get_if<std::vector<double>>(&d)) return backend::KernelArg{*fl};
  if (auto* bl = std::get_if<std::vector<bool>>(&d)) return backend::KernelArg{*bl};
  return make_error(ErrorKind::kInternal, "argument '{}' has an unknown form", schema.name);
}

Result<std::vector<backend::KernelArg>> resolve_args(const Frame& f, const Node& node) {
  const auto& schema = node.op().args;
  std::vector<backend::KernelArg> args;
  args.reserve(node.args().size());
  for (size_t i = 0; i < node.args().size(); ++i) {
    SPLICE_ASSIGN_OR_RETURN(backend::KernelArg a, resolve_arg(f, schema[i], node.arg(i)));
    args.push_back(std::move(a));
  }
  return args;
}

// Checks a kernel's output against the type the archive recorded for it.
Result<void> check_output(const Node& node, const Value& v, const Tensor& t,
                          const SymBindings& symbols) {
  const ir::TensorType& type = v.type();
  if (t.dtype() != type.dtype || t.dim() != type.rank())
    return make_error(ErrorKind::kInternal, "{}: kernel produced {} {} for '{}', recorded {}",
                      node_label(node), dtype_name(t.dtype()), shape_string(t.sizes()), v.name(),
                      type.to_string());
  for (int64_t d = 0; d < type.rank(); ++d) {
    auto expected = type.sizes[d].evaluate(symbols);
    if (!expected.ok()) continue;  // depends on a symbol not bound yet (data-dependent)
    if (*expected != t.size(d))
      return make_error(ErrorKind::kInternal,
                        "{}: kernel produced {} for '{}', recorded {} (dim {} should be {})",
                        node_label(node), shape_string(t.sizes()), v.name(), type.to_string(), d,
                        *expected);
  }
  return ok_result();
}

}  // namespace splice::runtime
