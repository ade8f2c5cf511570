#pragma once
// The CPU backend behind the backend interface (backends/backend.h): host memory, the
// reference kernels (registry.h), and a thread pool per loaded model whose size is the
// model's LoadOptions::threads. It registers itself as "cpu" when its library is linked.

#include "backends/backend.h"

namespace splice::cpu {

class ThreadPool;

// The thread pool of the model a CPU session belongs to.
ThreadPool* session_pool(backend::SessionContext& session);

}  // namespace splice::cpu
