#pragma once
// The registered backends as tests need them: the CPU backend's planning target (every test
// binary links the CPU backend, which registers itself).

#include "backends/backend.h"

namespace splice::testing {

inline const backend::Target& cpu_target() { return backend::find_backend("cpu")->target(); }

}  // namespace splice::testing
