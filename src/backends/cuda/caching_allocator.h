#pragma once
// The CUDA backend's device memory for tensors: a caching allocator over device_malloc (which
// counts every cudaMalloc). A freed block goes back to a free list instead of cudaFree, and a
// later request of the same rounded size takes it, so a session's second call with the same
// symbol values allocates nothing (tests read device_malloc_count()).
//
// Stream safety: a block freed while kernels queued on a session's stream may still use it is
// only handed out again to work on that same stream (stream order makes the reuse safe). Each
// free list is therefore keyed by the stream of the thread's current session
// (set_current_stream, which the backend sets whenever a session runs a kernel or a copy); a
// session's blocks are released for real when the session ends (release_stream, after a
// stream sync). When cudaMalloc fails, every cached block is freed after a device sync and the
// allocation retried once.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "support/error.h"
#include "tensor/tensor.h"

namespace splice::cuda {

// The stream whose free list this thread's allocations and frees use (nullptr: no session,
// e.g. weights uploaded at load, which are synchronous).
void set_current_stream(cudaStream_t stream);
cudaStream_t current_stream();

// Device memory of at least `bytes` (rounded up to 512 bytes; 0 bytes still gets a block so
// every tensor has an address) on `device`, owned by the returned Storage: when its last view
// goes, the block returns to the free list of the stream current at that moment.
Result<std::shared_ptr<Storage>> allocate_device_storage(size_t bytes, Device device);

// While set (non-null), every allocation this thread makes is also appended to `keep`, and a
// cudaMalloc it needs runs in the relaxed capture mode: a call being recorded into a CUDA graph
// allocates memory that the graph then names, so the memory must stay the recording's (the
// caller keeps `keep` as long as the graph) and its cudaMalloc is not part of the graph.
void set_recording_keep(std::vector<std::shared_ptr<Storage>>* keep);

// Frees every cached block of `stream`'s free list (the stream must be idle: the caller
// synchronized it), and makes later frees on this thread go to the no-session list.
void release_stream(cudaStream_t stream);

// Blocks held in free lists right now (for tests).
size_t cached_block_count();
// Bytes those blocks hold: memory an allocation gets back (from its stream's list, or after
// the allocator frees the cache and retries), though cudaMemGetInfo counts it as used.
size_t cached_bytes();

}  // namespace splice::cuda
