// cudaMalloc/cudaFree wrappers with a process-wide allocation counter, DeviceBuffer, the
// growable Workspace and the asynchronous copy helpers.
#include "backends/cuda/device_memory.h"

#include <atomic>

#include "backends/cuda/cuda_check.h"

namespace splice::cuda {

namespace {
std::atomic<int64_t> g_malloc_count{0};
}  // namespace

Result<void*> device_malloc(size_t bytes, std::string_view what) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  g_malloc_count.fetch_add(1, std::memory_order_relaxed);
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it for later calls
    return make_error(ErrorKind::kBackend, "cudaMalloc of {} bytes for {} failed: {} ({})", bytes,
                      what, cudaGetErrorName(status), cudaGetErrorString(status));
  }
  return ptr;
}

Result<void> device_free(void* ptr) {
  if (ptr == nullptr) return ok_result();
  SPLICE_CUDA_CHECK(cudaFree(ptr));
  return ok_result();
}

int64_t cuda_malloc_count() { return g_malloc_count.load(std::memory_order_relaxed); }

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, std::string_view what) {
  SPLICE_ASSIGN_OR_RETURN(void* ptr, device_malloc(bytes, what));
  DeviceBuffer b;
  b.data_ = ptr;
  b.size_ = bytes;
  return b;
}

DeviceBuffer::~DeviceBuffer() {
  // A destructor cannot report; a failing cudaFree here means the context is already broken,
  // which the next checked call reports.
  if (data_ != nullptr) (void)cudaFree(data_);
}

Result<void*> Workspace::reserve(size_t bytes, cudaStream_t stream) {
  if (bytes <= buffer_.size()) return buffer_.data();
  // Pending kernels on the stream may still read the old block.
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(stream));
  buffer_ = DeviceBuffer();
  const size_t rounded = (bytes + 255) / 256 * 256;
  SPLICE_ASSIGN_OR_RETURN(buffer_, DeviceBuffer::allocate(rounded, "a launcher workspace"));
  return buffer_.data();
}

Result<void> copy_to_device_async(void* device_dst, const void* host_src, size_t bytes,
                                  cudaStream_t stream) {
  if (bytes == 0) return ok_result();
  SPLICE_CUDA_CHECK(cudaMemcpyAsync(device_dst, host_src, bytes, cudaMemcpyHostToDevice, stream));
  return ok_result();
}

Result<void> copy_to_host_async(void* host_dst, const void* device_src, size_t bytes,
                                cudaStream_t stream) {
  if (bytes == 0) return ok_result();
  SPLICE_CUDA_CHECK(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, stream));
  return ok_result();
}

Result<void> copy_device_to_device_async(void* dst, const void* src, size_t bytes,
                                         cudaStream_t stream) {
  if (bytes == 0) return ok_result();
  SPLICE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  return ok_result();
}

}  // namespace splice::cuda
