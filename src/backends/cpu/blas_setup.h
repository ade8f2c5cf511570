#pragma once
// OpenBLAS for the CPU backend, opened when a CPU model is first opened (or a matmul first runs),
// never at process start: single-threaded (each model's pool decides how many cores its kernels
// use) and running the kernels this CPU can run.
//
// Why not linked: OpenBLAS's pthread build (Debian's default) starts its worker threads in a
// load-time constructor, before main. Those are threads splice never uses, and under an
// address-space limit one of them retried a 128 MB allocation forever, so even `splice --help`
// under `ulimit -v 100000` never returned (issue 34, item 3). Opened here, it is opened with
// OPENBLAS_NUM_THREADS=1, so it starts none; and a process that never plans a CPU matmul never
// maps it. Debian's serial build has no threads either but is not safe to call from several
// threads at once, which each model's pool does (its results were wrong on two threads).

#include <cblas.h>

#include <string>

#include "support/error.h"

namespace splice::cpu {

// OpenBLAS's entry points splice calls, resolved from the opened library.
struct BlasLibrary {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  std::string core;  // the kernel set in use ("SkylakeX", "Haswell", ...), "" when unknown
};

// Opens OpenBLAS once per process (libopenblas.so.0), sets it to one thread and, where it fell
// back to its generic SSE3 kernels on a CPU it does not know by model number, selects the
// kernels the CPU's features allow. Every later call returns the first one's result: the
// library, or a kBackend error naming what could not be opened or found.
Result<const BlasLibrary*> open_blas();

// The opened library; for kernels, which run only after open_blas() succeeded (a CPU model's
// open does it; unit tests that call kernels directly open it on first use). Aborts with
// open_blas()'s message if it fails.
const BlasLibrary& blas();

// open_blas()'s library's kernel set, or "" when it is unknown or the library is not there.
std::string blas_core_name();

}  // namespace splice::cpu
