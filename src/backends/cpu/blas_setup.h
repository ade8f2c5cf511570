#pragma once
// OpenBLAS set up for the CPU backend, once per process: single-threaded (each model's pool
// decides how many cores its kernels use), and running the kernels this CPU can run.

#include <string>

namespace splice::cpu {

// Makes BLAS single-threaded and, where OpenBLAS fell back to its generic SSE3 kernels on a
// CPU it does not know by model number, selects the kernels the CPU's features allow. Safe to
// call more than once; only the first call does anything.
void set_up_blas();

// The OpenBLAS kernel set in use ("SkylakeX", "Haswell", ...), or "" when unknown.
std::string blas_core_name();

}  // namespace splice::cpu
