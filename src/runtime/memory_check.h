#pragma once
// The memory check before a call (issue 34): once a call's inputs have bound the symbols, the
// memory its plan will allocate is known — the planned buffers it must allocate (every
// per-call buffer; a session buffer it does not hold yet or holds too small) plus the peak of
// the tensors kernels allocate, each alive from its step to the step that releases it — and a
// call that needs more than the backend's device can still give (Backend::available_memory:
// on the host the smallest of MemAvailable, the cgroup's memory.max and RLIMIT_AS less what is
// in use; on a GPU cudaMemGetInfo) is refused before anything is allocated, naming the bytes
// and the limit. A 100,000-token call of a Llama (a [T, T] causal mask) is refused at once
// instead of growing for seconds into an out-of-memory error or an OOM kill.
//
// What the check counts is a lower bound of the call's memory: sizes that use a symbol bound
// only during the call (.item()) are not known yet, and kernels' own scratch space is not
// counted, so a call it lets through may still run out (and then fails with the byte count
// of the allocation that failed). A call under kMinCheckedBytes is not checked.

#include <cstdint>
#include <vector>

#include "runtime/model_impl.h"

namespace splice::runtime {

// Calls needing less than this are not checked: reading the limits (a few /proc files) would
// cost more than the memory is worth.
inline constexpr int64_t kMinCheckedBytes = int64_t{64} << 20;

// What a call needs under `symbols`, from the model's plan and the session's buffers.
struct CallMemory {
  int64_t buffers = 0;        // planned buffers the call allocates
  int64_t intermediates = 0;  // peak of kernel-allocated tensors alive at once
  int64_t total() const;      // the two, saturating at INT64_MAX
};
CallMemory call_memory(const detail::ModelImpl& model, const detail::SessionState& state,
                       const SymBindings& symbols);

// Refuses (kBackend, "out of memory: ...") a call whose CallMemory exceeds the backend's
// available memory. Checked once per binding of the symbols a session's calls start with.
Result<void> check_call_memory(const detail::ModelImpl& model, detail::SessionState& state,
                               const SymBindings& symbols);

// The kernel-allocated values of the model (ModelImpl::allocated_values), resolved at load:
// every tensor output of a node that runs a kernel allocating it (not a view, not stored into
// a planned buffer or a write's destination, not a write done in place), with the plan steps
// that make and release it.
std::vector<detail::AllocatedValue> find_allocated_values(const detail::ModelImpl& model);

}  // namespace splice::runtime
