#pragma once
// Device memory for the CUDA backend: cudaMalloc/cudaFree behind Result-returning wrappers that
// count every cudaMalloc the process makes (so a test can prove that a repeated call allocates
// nothing), an owning DeviceBuffer, a Workspace that grows only when a launcher needs more
// scratch than it holds, and asynchronous copies between host and device on a stream.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "support/error.h"

namespace splice::cuda {

// cudaMalloc of `bytes` (nullptr for 0 bytes, without a call); `what` names the allocation in
// the Error (kBackend, with the byte count and CUDA's reason).
Result<void*> device_malloc(size_t bytes, std::string_view what);
// cudaFree; nullptr is a no-op.
Result<void> device_free(void* ptr);
// How many cudaMalloc calls device_malloc has made in this process (successful or not).
int64_t cuda_malloc_count();

// An owning device allocation (move-only); frees on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> allocate(size_t bytes, std::string_view what);
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Scratch device memory that launchers borrow for the duration of one stream's work (index
// de-duplication tables, nonzero counts). It grows when asked for more than it holds (waiting
// for `stream` first, since pending kernels may still use the old block) and never shrinks, so
// after a first call of a given size later calls allocate nothing. Not thread-safe: one per
// stream (a session owns one).
class Workspace {
 public:
  // At least `bytes` of device memory, 256-byte aligned, valid until the next reserve().
  Result<void*> reserve(size_t bytes, cudaStream_t stream);
  size_t capacity() const { return buffer_.size(); }
  // The current block (nullptr before the first reserve): a recorded call names it.
  void* data() const { return buffer_.data(); }

 private:
  DeviceBuffer buffer_;
};

// Asynchronous copies on `stream` (the host side should be pinned for true asynchrony; pageable
// host memory makes CUDA stage the copy). 0 bytes is a no-op.
Result<void> copy_to_device_async(void* device_dst, const void* host_src, size_t bytes,
                                  cudaStream_t stream);
Result<void> copy_to_host_async(void* host_dst, const void* device_src, size_t bytes,
                                cudaStream_t stream);
Result<void> copy_device_to_device_async(void* dst, const void* src, size_t bytes,
                                         cudaStream_t stream);

}  // namespace splice::cuda
