#pragma once
// Tensor: a strided view (dtype, sizes, strides in elements, element offset) over a shared
// Storage. Used by the frontend for weights, by the runtime for values and by the backends'
// kernels. Views share storage; `contiguous_copy` and `Tensor::empty` allocate host memory.
// A Storage knows its device: host memory, or a backend's device memory (which a backend
// allocates and frees); the element accessors (`data<T>`, `raw_data`) are for host memory and
// check that they are used on it, `device_data` is the address on any device.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "splice/device.h"
#include "support/dtype.h"
#include "support/error.h"
#include "tensor/shape.h"

namespace splice {

// Bytes that a tensor views. Either owned (allocated by splice: 64-byte aligned host memory,
// or a backend's device memory) or borrowed from something `keep_alive` holds (a
// memory-mapped archive, a caller's buffer).
class Storage {
 public:
  // Allocates nbytes of host memory, zero-filled, 64-byte aligned; kBackend "out of memory"
  // when the system has none.
  static Result<std::shared_ptr<Storage>> allocate(size_t nbytes);
  // Wraps memory owned by `keep_alive` on `device`; read-only when `writable` is false.
  static std::shared_ptr<Storage> borrow(void* data, size_t nbytes,
                                         std::shared_ptr<const void> keep_alive, bool writable,
                                         Device device = kHostDevice);
  // Memory a backend allocated on `device`; `owner` frees it when the last view goes.
  static std::shared_ptr<Storage> adopt(void* data, size_t nbytes,
                                        std::shared_ptr<const void> owner, Device device);

  // Host memory only (checked: device memory is not addressable here).
  std::byte* data() {
    check_host();
    return data_;
  }
  const std::byte* data() const {
    check_host();
    return data_;
  }
  // The address on the storage's own device.
  std::byte* device_data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  bool writable() const { return writable_; }
  // Whether splice allocated it (allocate) rather than viewing someone else's memory (borrow):
  // only owned storage may be kept beyond a call as session state.
  bool owned() const { return owned_; }
  const Device& device() const { return device_; }
  bool is_host() const { return device_.is_host(); }

  Storage(std::byte* data, size_t nbytes, std::shared_ptr<const void> owner, bool writable,
          bool owned = false, Device device = kHostDevice)
      : data_(data),
        nbytes_(nbytes),
        owner_(std::move(owner)),
        writable_(writable),
        owned_(owned),
        device_(device) {}

 private:
  void check_host() const;
  std::byte* data_;
  size_t nbytes_;
  std::shared_ptr<const void> owner_;
  bool writable_;
  bool owned_;
  Device device_;
};

// Strides (in elements) of a contiguous row-major tensor of `sizes`.
Shape contiguous_strides(const Shape& sizes);
// Product of sizes (1 for a 0-d tensor); no overflow check (use checked_numel for untrusted).
int64_t shape_numel(const Shape& sizes);
std::optional<int64_t> checked_numel(const Shape& sizes);
std::string shape_string(const Shape& sizes);  // "[2, 3]"

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape sizes, Shape strides, int64_t offset, std::shared_ptr<Storage> storage)
      : dtype_(dtype),
        sizes_(std::move(sizes)),
        strides_(std::move(strides)),
        offset_(offset),
        storage_(std::move(storage)) {}

  // A new contiguous, zero-filled host tensor (kBackend when memory runs out).
  static Result<Tensor> empty(DType dtype, const Shape& sizes);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& sizes() const { return sizes_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int64_t dim) const { return sizes_[dim]; }
  int64_t stride(int64_t dim) const { return strides_[dim]; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return shape_numel(sizes_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  const Device& device() const { return storage_->device(); }
  bool is_host() const { return storage_ == nullptr || storage_->is_host(); }

  // Pointer to the element at the view's offset, in host memory (checked).
  std::byte* raw_data() const { return storage_->data() + offset_ * dtype_size(dtype_); }
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(raw_data());
  }
  // Address of the element at the view's offset on the tensor's own device.
  std::byte* device_data() const { return storage_->device_data() + offset_ * dtype_size(dtype_); }

  // A view of the same storage with other sizes/strides/offset (no checks).
  Tensor view_as(Shape sizes, Shape strides, int64_t offset) const {
    return Tensor(dtype_, std::move(sizes), std::move(strides), offset, storage_);
  }

  // A contiguous copy in new host storage (always copies; host tensors only).
  Result<Tensor> contiguous_copy() const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape sizes_;
  Shape strides_;
  int64_t offset_ = 0;
  std::shared_ptr<Storage> storage_;
};

// Checks that every element a view addresses lies inside its storage (for views built from
// untrusted sizes/strides/offsets, e.g. weights in an archive).
Result<void> check_view_in_bounds(const Tensor& t);

}  // namespace splice
