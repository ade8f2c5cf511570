// OpenBLAS opened at run time (blas_setup.h says why), and its kernel set chosen.
//
// Debian 12's OpenBLAS 0.3.21 is built for every x86 core (DYNAMIC_ARCH) and picks one at load
// by the CPU's family and model number. A CPU newer than the library (an Emerald Rapids Xeon is
// model 207) matches none and gets the generic Prescott (SSE3) kernels: sgemm ran 1.6x slower
// than with the AVX-512 ones on a 2-layer block (bench/RESULTS.md). Newer OpenBLAS releases fall
// back by feature flags; this does the same for the one we open: when the library chose
// Prescott and the CPU has AVX-512 (or AVX2 and FMA), it re-runs OpenBLAS's own core selection
// with OPENBLAS_CORETYPE naming that core, as a user could at the shell. A user's own
// OPENBLAS_CORETYPE is left alone.
#include "backends/cpu/blas_setup.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string_view>

#include "support/shared_library.h"

namespace splice::cpu {

namespace {

// The soname of Debian's OpenBLAS builds (the alternatives system points it at the pthread,
// OpenMP or serial one; the pthread one is the default of libopenblas-dev).
constexpr const char* kLibrary = "libopenblas.so.0";

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

// Sets an environment variable for the duration of a scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved_)
      setenv(name_, saved_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

template <typename F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(library_symbol(library, name));
}

// The core OpenBLAS runs, re-selected where it fell back to Prescott on a CPU that can do more.
// The core-selection entry points exist only in a DYNAMIC_ARCH build; without them the core
// was fixed when the library was compiled.
std::string choose_core(void* library) {
  using CoreName = char* (*)();
  using Hook = void (*)();
  auto core_name = symbol<CoreName>(library, "openblas_get_corename");
  auto init = symbol<Hook>(library, "gotoblas_dynamic_init");
  auto quit = symbol<Hook>(library, "gotoblas_dynamic_quit");
  const auto current = [&] {
    const char* name = core_name != nullptr ? core_name() : nullptr;
    return std::string(name == nullptr ? "" : name);
  };
  if (core_name == nullptr || init == nullptr || quit == nullptr) return current();
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return current();  // the user chose
  if (!equals_ignoring_case(current(), "prescott")) return current();
  const char* core = core_for_this_cpu();
  if (core == nullptr) return current();
  {
    // OpenBLAS reads the variable only in its core selection.
    ScopedEnv coretype("OPENBLAS_CORETYPE", core);
    quit();
    init();
  }
  return current();
}

struct Opened {
  BlasLibrary library;
  std::optional<Error> error;
};

Opened open_once() {
  Opened o;
  void* library = nullptr;
  std::string reason;
  {
    // No worker threads: OpenBLAS reads this in its load-time constructor. The user's value,
    // if any, is restored once it has been read (splice's pools do the threading).
    ScopedEnv threads("OPENBLAS_NUM_THREADS", "1");
    library = open_shared_library(kLibrary, "", reason);
  }
  if (library == nullptr) {
    o.error = make_error(ErrorKind::kBackend,
                         "the CPU backend needs OpenBLAS ({}), which cannot be opened: {} "
                         "(scripts/setup installs it: libopenblas-dev)",
                         kLibrary, reason);
    return o;
  }
  std::string missing;
  resolve_symbol(library, "cblas_sgemm", o.library.sgemm, missing);
  resolve_symbol(library, "cblas_dgemm", o.library.dgemm, missing);
  if (!missing.empty()) {
    o.error = make_error(ErrorKind::kBackend, "{} has no {}", kLibrary, missing);
    return o;
  }
  o.library.core = choose_core(library);
  // A library another part of the process opened first started its threads already: keep
  // them idle (each call runs on the thread that makes it).
  if (auto set_threads = symbol<void (*)(int)>(library, "openblas_set_num_threads")) set_threads(1);
  return o;  // the library stays open for the process's life
}

const Opened& opened() {
  static std::once_flag once;
  static Opened o;
  std::call_once(once, [] { o = open_once(); });
  return o;
}

}  // namespace

Result<const BlasLibrary*> open_blas() {
  const Opened& o = opened();
  if (o.error) return *o.error;
  return &o.library;
}

const BlasLibrary& blas() {
  const Opened& o = opened();
  if (o.error) {
    std::fprintf(stderr, "splice: %s\n", o.error->message().c_str());
    std::abort();
  }
  return o.library;
}

std::string blas_core_name() {
  const Opened& o = opened();
  return o.error ? std::string() : o.library.core;
}

}  // namespace splice::cpu
