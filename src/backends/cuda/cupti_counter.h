#pragma once
// Counting what a stream runs — kernels, memory copies, memsets — with CUPTI's activity API.
// libcupti is opened with dlopen on first use, not linked, as cuBLASLt is (cublaslt_library.h):
// a CUDA build must start on a machine without it, and `splice bench` still times calls there
// (it reports the count as n/a with the reason this returns).
//
// CUPTI's activity records and their buffer callbacks are process-wide, so there is one
// counter per process. A record is counted for the stream it ran on, and only while that
// stream is armed: a probe arms its session's stream just before a call and disarms it just
// after, so the untimed work around a call (restoring state) and other sessions' streams are
// not counted.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/error.h"

namespace splice::cuda {

struct StreamCounts {
  int64_t kernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
};

// A kernel record of a profiled stream: its name, grid, GPU time and the step that was marked
// (ActivityCounter::mark_step) when the host launched it (-1: none).
struct KernelRecord {
  std::string name;
  int64_t grid[3] = {0, 0, 0};
  uint64_t start_ns = 0, end_ns = 0;
  int64_t step = -1;
};

class ActivityCounter {
 public:
  // The process's counter, opened on the first call: libcupti loaded (libcupti.so.<major of
  // the headers>, libcupti.so, then the toolkit's folders: $CUDA_HOME/lib64,
  // /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64), its API version checked and
  // the buffer callbacks registered. Later calls return the same counter or the same kBackend
  // error, whose message says why ("libcupti not found: ...").
  static Result<ActivityCounter*> get();

  // Kernel, memcpy and memset records are made while anyone holds the counter (one hold per
  // probe; the first hold enables them, the last release disables them).
  Result<void> hold();
  void release();

  // CUPTI's id of `stream` (ids are per context; splice runs on one device). Needs a hold.
  Result<uint32_t> stream_id(cudaStream_t stream);
  // Starts counting stream `id`: waits for `stream` and delivers every record made so far
  // first, so nothing queued before arm() is counted.
  Result<void> arm(cudaStream_t stream, uint32_t id);
  // Stops counting stream `id` and returns what ran on it since arm(): waits for `stream`, has
  // CUPTI deliver its records, then reads them. An error (CUPTI dropped records for want of a
  // buffer, or a CUPTI call failed) means the counts would be short; the stream is disarmed
  // either way.
  Result<StreamCounts> disarm(cudaStream_t stream, uint32_t id);

  // Profiling (Session::profile). profile_arm(stream, id) arms the stream as arm() does and
  // also keeps its kernel records with their names, grids and times; mark_step(s) tags what
  // this host thread launches from now on with step s (CUPTI's external correlation ids; -1:
  // untagged); profile_disarm disarms and returns the kernels in launch order with their
  // steps. The external correlation records are enabled only while profiling.
  Result<void> profile_arm(cudaStream_t stream, uint32_t id);
  Result<void> mark_step(int64_t step);
  Result<std::vector<KernelRecord>> profile_disarm(cudaStream_t stream, uint32_t id);

 private:
  ActivityCounter() = default;
};

}  // namespace splice::cuda
