// Typed argument access for every backend's kernels (Args) and the c10 conversion of a number
// into a 0-d tensor.
#include "backends/common/args.h"

#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::backend {

Error Args::bad(size_t i, std::string_view expected) const {
  if (i >= args_.size()) {
    return make_error(ErrorKind::kBadInput, "{}: argument {} ({}) is missing (got {} arguments)",
                      op_, i, expected, args_.size());
  }
  static constexpr const char* kNames[] = {"None",     "bool",      "int",     "float",
                                           "str",      "dtype",     "Tensor",  "int[]",
                                           "Tensor[]", "Tensor?[]", "float[]", "bool[]"};
  return make_error(ErrorKind::kBadInput, "{}: argument {} should be {}, got {}", op_, i, expected,
                    kNames[args_[i].index()]);
}

bool Args::is_none(size_t i) const {
  return i >= args_.size() || std::holds_alternative<std::monostate>(args_[i]);
}

Result<Tensor> Args::tensor(size_t i) const {
  if (i < args_.size()) {
    if (auto* t = std::get_if<Tensor>(&args_[i]); t && t->defined()) return *t;
  }
  return bad(i, "Tensor");
}

Result<int64_t> Args::integer(size_t i) const {
  if (i < args_.size()) {
    if (auto* v = std::get_if<int64_t>(&args_[i])) return *v;
    if (auto* b = std::get_if<bool>(&args_[i])) return static_cast<int64_t>(*b);
  }
  return bad(i, "int");
}

Result<std::optional<int64_t>> Args::opt_integer(size_t i) const {
  if (is_none(i)) return std::optional<int64_t>();
  SPLICE_ASSIGN_OR_RETURN(int64_t v, integer(i));
  return std::optional<int64_t>(v);
}

Result<bool> Args::boolean(size_t i) const {
  if (i < args_.size()) {
    if (auto* b = std::get_if<bool>(&args_[i])) return *b;
    if (auto* v = std::get_if<int64_t>(&args_[i]); v && (*v == 0 || *v == 1)) return *v == 1;
  }
  return bad(i, "bool");
}

Result<bool> Args::boolean_or(size_t i, bool fallback) const {
  if (is_none(i)) return fallback;
  return boolean(i);
}

Result<Scalar> Args::scalar(size_t i) const {
  if (i < args_.size()) {
    if (auto* b = std::get_if<bool>(&args_[i])) return Scalar(*b);
    if (auto* v = std::get_if<int64_t>(&args_[i])) return Scalar(*v);
    if (auto* d = std::get_if<double>(&args_[i])) return Scalar(*d);
  }
  return bad(i, "Scalar");
}

Result<Scalar> Args::scalar_or(size_t i, Scalar fallback) const {
  if (is_none(i)) return fallback;
  return scalar(i);
}

Result<std::optional<DType>> Args::opt_dtype(size_t i) const {
  if (is_none(i)) return std::optional<DType>();
  if (auto* d = std::get_if<DType>(&args_[i])) return std::optional<DType>(*d);
  return bad(i, "ScalarType");
}

Result<std::vector<int64_t>> Args::int_list(size_t i) const {
  if (i < args_.size()) {
    if (auto* v = std::get_if<std::vector<int64_t>>(&args_[i])) return *v;
    if (auto* v = std::get_if<int64_t>(&args_[i])) return std::vector<int64_t>{*v};
  }
  return bad(i, "int[]");
}

Result<std::optional<std::vector<int64_t>>> Args::opt_int_list(size_t i) const {
  if (is_none(i)) return std::optional<std::vector<int64_t>>();
  SPLICE_ASSIGN_OR_RETURN(auto v, int_list(i));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

Result<std::vector<Tensor>> Args::tensor_list(size_t i) const {
  if (i < args_.size()) {
    if (auto* v = std::get_if<std::vector<Tensor>>(&args_[i])) {
      for (const Tensor& t : *v)
        if (!t.defined()) return bad(i, "Tensor[] without undefined entries");
      return *v;
    }
  }
  return bad(i, "Tensor[]");
}

Result<std::vector<std::optional<Tensor>>> Args::opt_tensor_list(size_t i) const {
  if (i < args_.size()) {
    if (auto* v = std::get_if<std::vector<std::optional<Tensor>>>(&args_[i])) {
      std::vector<std::optional<Tensor>> out;
      for (const auto& t : *v) {
        if (t && !t->defined()) return bad(i, "Tensor?[] without undefined entries");
        out.push_back(t);
      }
      return out;
    }
    if (auto* v = std::get_if<std::vector<Tensor>>(&args_[i])) {
      std::vector<std::optional<Tensor>> out;
      for (const Tensor& t : *v) {
        if (!t.defined()) return bad(i, "Tensor?[] without undefined entries");
        out.emplace_back(t);
      }
      return out;
    }
  }
  return bad(i, "Tensor?[]");
}

Result<std::optional<std::string>> Args::opt_string(size_t i) const {
  if (is_none(i)) return std::optional<std::string>();
  if (auto* s = std::get_if<std::string>(&args_[i])) return std::optional<std::string>(*s);
  return bad(i, "str");
}

Result<Tensor> scalar_to_tensor(const Scalar& s, DType dtype) {
  SPLICE_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(dtype, {}));
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    switch (s.kind()) {
      case Scalar::Kind::kBool:
        *p = cast_value<T>(s.to_bool());
        break;
      case Scalar::Kind::kInt:
        *p = cast_value<T>(s.to_int());
        break;
      case Scalar::Kind::kDouble:
        *p = cast_value<T>(s.to_double());
        break;
    }
  });
  return t;
}

}  // namespace splice::backend
