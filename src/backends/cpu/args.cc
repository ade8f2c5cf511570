// The CPU kernels' boundary (run_kernel: the call's destination and in-place request, the
// session's thread pool, running out of memory turned into an Error) and their allocation
// helpers, which throw std::bad_alloc for the boundary to catch.
#include "backends/cpu/args.h"

#include <new>
#include <optional>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/thread_pool.h"
#include "support/checked_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

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

// The error of the last allocation of this thread's kernel that failed ("out of memory: cannot
// allocate N bytes of host memory"), so run_kernel reports the byte count that bad_alloc
// cannot carry.
thread_local std::optional<Error> t_failed_allocation;

// Unwraps an allocation result for code inside a kernel (see empty() in args.h).
Tensor or_throw(Result<Tensor> r) {
  if (!r.ok()) {
    t_failed_allocation = r.error();
    throw std::bad_alloc();
  }
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
  t_failed_allocation.reset();
  try {
    return impl(op, args);
  } catch (const std::bad_alloc&) {
    if (t_failed_allocation) return t_failed_allocation->with_context(std::string(op));
    // A container inside the kernel: the size it asked for is not known here.
    return make_error(ErrorKind::kBackend,
                      "{}: out of memory (a buffer inside the kernel, of a size not known here)",
                      op);
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
  return or_throw(backend::scalar_to_tensor(s, dtype));
}

double item_as_double(const Tensor& t) {
  return dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return cast_value<double>(*t.data<T>());
  });
}

}  // namespace splice::cpu
