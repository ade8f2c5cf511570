#pragma once
// The one kernel ABI every backend's kernels share. A kernel is a plain function resolved
// once per node when a model is loaded (Backend::kernel), called with the node's arguments in
// the exact order of the ATen overload's schema, and a KernelCall carrying what the runtime
// asks of this call besides the arguments: the session's execution context on the backend,
// the planned destination of the output, and whether a write may modify its base.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ir/ops.h"
#include "support/dtype.h"
#include "support/dtype_set.h"
#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::backend {

// One argument of an op call, in the exact order of the ATen overload's schema, with every
// defaulted argument filled (kwarg-only args too, in schema order). SymInts arrive evaluated.
// A Scalar argument arrives as bool, int64_t or double (its Python type). Device, Layout and
// MemoryFormat arguments arrive as std::string and are ignored (results are contiguous).
// Tensors live on the backend's device.
using KernelArg =
    std::variant<std::monostate /*None*/, bool, int64_t, double, std::string, DType /*ScalarType*/,
                 Tensor, std::vector<int64_t> /*int[]*/, std::vector<Tensor>,
                 std::vector<std::optional<Tensor>> /*Tensor?[]*/, std::vector<double>,
                 std::vector<bool>>;

class SessionContext;

// What the runtime asks of one kernel call besides its arguments.
struct KernelCall {
  // The calling session's execution context on the kernel's backend (its threads, its
  // stream); never null when the runtime calls.
  SessionContext* session = nullptr;
  // When set: store output 0 into this view of planned memory (possibly strided: a slice of a
  // larger buffer) if the kernel can (kStoresIntoDestination); the runtime checks whether the
  // returned tensor is this view and copies otherwise.
  const Tensor* destination = nullptr;
  // A write kernel (kWritesInPlace) modifies its base (argument 0) and returns it, instead of
  // returning a modified copy.
  bool in_place = false;
};

// Validates its arguments (errors name the op: kShapeMismatch, kOutOfRange, kBadInput) and
// returns its outputs. View ops (Aliasing::kView in the op table) may return views of their
// input; the runtime never writes into a kernel's inputs otherwise. Other results are new
// contiguous tensors on the backend's device, or call.destination.
using KernelFn = Result<std::vector<Tensor>> (*)(const KernelCall& call,
                                                 std::span<const KernelArg> args);

// Capabilities of one kernel, stated where the backend registers it; planning reads them
// (backend::Target) to decide where outputs can be stored.
enum KernelCaps : uint32_t {
  kNoCaps = 0,
  // Writes every element of output 0 through KernelCall::destination's strides when given one
  // of the output's dtype and sizes (so a producer stores straight into a write's slice).
  kStoresIntoDestination = 1u << 0,
  // A write (slice_scatter, select_scatter, index_put, index_copy) that honours
  // KernelCall::in_place.
  kWritesInPlace = 1u << 1,
  // Stores output 0 into KernelCall::destination when it is a whole (contiguous) planned
  // buffer of the output's dtype and sizes, writing every element: the memory planner gives
  // its output a buffer the session keeps, so the steady state allocates nothing for it. A
  // write's strided slice is never its destination (that takes kStoresIntoDestination).
  kStoresIntoContiguousDestination = 1u << 2,
};

// One row of a backend's kernel table: the op, its kernel, what the kernel can do with a
// KernelCall (caps), and the dtypes it runs (dtypes). A backend's table is what it declares it
// runs, op × dtype, and load refuses a program that needs a row the table lacks (see
// Target::check_runs for which dtype of a node is checked).
struct KernelEntry {
  ir::OpId op = ir::OpId::kCount;
  KernelFn fn = nullptr;
  uint32_t caps = kNoCaps;
  // The dtypes the kernel runs, by the node's dispatch dtype (Target::check_runs): every dtype
  // unless the row narrows it with accepting(), which it does only where the kernel itself
  // refuses the others (PyTorch refuses them too: a float-only softmax, a non-bool matmul).
  DTypeSet dtypes = DTypeSet::all();

  bool has(KernelCaps c) const { return (caps & c) != 0; }
  // This row running only `accepted` dtypes: `entry<OpId::mm, mm>().accepting(...)`.
  constexpr KernelEntry accepting(DTypeSet accepted) const {
    KernelEntry e = *this;
    e.dtypes = accepted;
    return e;
  }
};

// Every dtype but bool: what the matmul kernels run (PyTorch has no bool matmul either).
inline constexpr DTypeSet kNonBoolDTypes = DTypeSet::all().without(DType::kBool);

}  // namespace splice::backend
