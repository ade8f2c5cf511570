// Typed argument access for the kernels (Args) and the shared kernel helpers: dim wrapping,
// checked allocation and scalar wrapping.
#include "backends/cpu/args.h"

#include <new>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/thread_pool.h"
#include "support/checked_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

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

namespace {
// What the running kernel's KernelCall asks: the destination view of planned memory its output
// should be stored into, and whether a write kernel may modify its base. Kernels are plain
// functions with the op's arguments only, so the call's wishes travel beside them (set and
// restored by run_kernel); thread-local because each session runs kernels on its own thread.
thread_local const Tensor* t_destination = nullptr;
thread_local bool t_write_in_place = false;

// Restores a thread-local on scope exit, so an early return from a kernel leaves no request
// behind for the next kernel.
template <typename T>
class ScopedSet {
 public:
  ScopedSet(T& slot, T value) : slot_(slot), saved_(slot) { slot_ = value; }
  ~ScopedSet() { slot_ = saved_; }
  ScopedSet(const ScopedSet&) = delete;
  ScopedSet& operator=(const ScopedSet&) = delete;

 private:
  T& slot_;
  T saved_;
};

// Unwraps an allocation result for code inside a kernel (see empty() in args.h).
Tensor or_throw(Result<Tensor> r) {
  if (!r.ok()) throw std::bad_alloc();
  return std::move(r).value();
}
}  // namespace

Tensor empty(DType dtype, const Shape& sizes) { return or_throw(Tensor::empty(dtype, sizes)); }
Tensor contiguous_copy(const Tensor& t) { return or_throw(t.contiguous_copy()); }
Tensor cast_copy(const Tensor& t, DType dtype) { return or_throw(convert(t, dtype)); }
Tensor to_dtype(const Tensor& t, DType dtype) { return or_throw(convert_if_needed(t, dtype)); }

Tensor output_or_new(DType dtype, const Shape& sizes) {
  if (t_destination != nullptr && t_destination->dtype() == dtype &&
      t_destination->sizes() == sizes) {
    Tensor dest = *t_destination;
    t_destination = nullptr;  // one destination per call: the first output of its type
    return dest;
  }
  return empty(dtype, sizes);
}

Tensor write_base(const Tensor& self) { return t_write_in_place ? self : contiguous_copy(self); }

Result<Outputs> run_kernel(const KernelCall& call, std::string_view op,
                           std::span<const KernelArg> args, OpKernel impl) {
  ScopedSet<const Tensor*> destination(t_destination, call.destination);
  ScopedSet<bool> in_place(t_write_in_place, call.in_place);
  // Outside a session (kernels calling kernels, tests) the thread's current pool stays.
  ThreadPool* pool = call.session != nullptr ? session_pool(*call.session) : current_pool();
  ScopedPool scoped_pool(pool);
  try {
    return impl(op, args);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::kBackend, "{}: out of memory", op);
  } catch (const std::length_error&) {
    return make_error(ErrorKind::kBackend, "{}: out of memory (a size too large to allocate)", op);
  }
}

Result<Tensor> new_tensor(std::string_view op, DType dtype, const Shape& sizes) {
  auto numel = checked_numel(sizes);
  KCHECK(numel.has_value(), ErrorKind::kShapeMismatch, "sizes {} are negative or overflow",
         shape_string(sizes));
  auto bytes = checked_mul(*numel, dtype_size(dtype));
  KCHECK(bytes.has_value(), ErrorKind::kShapeMismatch, "a tensor of sizes {} is too large",
         shape_string(sizes));
  return output_or_new(dtype, sizes);
}

Tensor scalar_to_tensor(const Scalar& s, DType dtype) {
  Tensor t = empty(dtype, {});
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

double item_as_double(const Tensor& t) {
  return dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return cast_value<double>(*t.data<T>());
  });
}

}  // namespace splice::cpu
