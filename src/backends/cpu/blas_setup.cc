// Debian 12's OpenBLAS 0.3.21 is built for every x86 core (DYNAMIC_ARCH) and picks one at load
// by the CPU's family and model number. A CPU newer than the library (an Emerald Rapids Xeon is
// model 207) matches none and gets the generic Prescott (SSE3) kernels: sgemm ran 1.6x slower
// than with the AVX-512 ones on a 2-layer block (bench/RESULTS.md). Newer OpenBLAS releases fall
// back by feature flags; this does the same for the one we link: when the library chose
// Prescott and the CPU has AVX-512 (or AVX2 and FMA), it re-runs OpenBLAS's own core selection
// with OPENBLAS_CORETYPE naming that core, as a user could at the shell. A user's own
// OPENBLAS_CORETYPE is left alone.
#include "backends/cpu/blas_setup.h"

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string_view>

// OpenBLAS entry points outside the cblas header. The core-selection ones exist only in a
// DYNAMIC_ARCH build: weak, so a library without them links and they read as null.
extern "C" {
void openblas_set_num_threads(int);
char* openblas_get_corename(void) __attribute__((weak));
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace splice::cpu {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// The best OpenBLAS core this CPU's features allow, or nullptr for none better than SSE3.
const char* core_for_this_cpu() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

void choose_core() {
  if (openblas_get_corename == nullptr || gotoblas_dynamic_init == nullptr ||
      gotoblas_dynamic_quit == nullptr)
    return;  // not a DYNAMIC_ARCH build: the core was fixed when it was compiled
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user chose
  if (!equals_ignoring_case(blas_core_name(), "prescott")) return;
  const char* core = core_for_this_cpu();
  if (core == nullptr) return;
  // OpenBLAS reads the variable only in its core selection; it is removed again right after,
  // so the process's environment is as it was.
  setenv("OPENBLAS_CORETYPE", core, 0);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace

std::string blas_core_name() {
  if (openblas_get_corename == nullptr) return "";
  const char* name = openblas_get_corename();
  return name == nullptr ? "" : name;
}

void set_up_blas() {
  static std::once_flag once;
  std::call_once(once, [] {
    choose_core();
    // Matmul splits its rows over the model's pool and calls BLAS on each block: BLAS must not
    // start threads of its own on top (it would oversubscribe the cores).
    openblas_set_num_threads(1);
  });
}

}  // namespace splice::cpu
