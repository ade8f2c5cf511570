#pragma once
// Programmatic dependent launch (Hopper, sm_90 and later): a kernel launched "dependent" may
// start while the kernel before it in the stream is still finishing, instead of after it has
// drained. In a decode step of ~150 short kernels that start-up and drain (a few µs each, at
// low bandwidth) is a large share of the call; a dependent kernel fills it by prefetching its
// weight into L2 (dependent_launch.cuh) before it waits.
//
// The contract, which every kernel launched this way keeps: every thread calls
// dependent_start() (griddepcontrol.wait, then launch_dependents) before it reads or writes
// memory an earlier kernel may write or read; before that it only prefetches into L2 (which is
// coherent: a prefetched line is never stale). A kernel therefore finishes only after the one
// before it has, so a later kernel's wait covers every earlier one, dependent or not. Kernels
// that do not keep it are launched normally and order the stream as always.
//
// SPLICE_PDL=0 in the environment launches everything normally (for measuring what dependent
// launches gain, and for ruling them out when a result looks wrong).

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "support/error.h"

namespace splice::cuda {

// Whether launches on the current device may be dependent: compute capability 9.0 or later and
// SPLICE_PDL not "0". Never fails (false without a device).
bool dependent_launch_enabled();

// Launches an NVRTC-compiled kernel (a driver CUfunction) with `threads` threads per block and
// no dynamic shared memory, dependent where dependent_launch_enabled(); the kernel must keep
// the contract above. kBackend when the driver refuses the launch.
Result<void> launch_module_kernel(CUfunction kernel, unsigned grid_x, unsigned grid_y,
                                  unsigned threads, cudaStream_t stream, void** args);

}  // namespace splice::cuda
