// Turns a CUDA runtime status into splice's Error (see cuda_check.h).
#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

Error cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  return make_error(ErrorKind::kBackend, "CUDA error {} ({}) in {} at {}:{}",
                    cudaGetErrorName(status), cudaGetErrorString(status), call, file, line);
}

}  // namespace splice::cuda
