#pragma once
// Tensor: a strided view (dtype, sizes, strides in elements, element offset) over a shared
// Storage. Used by the frontend for weights, by the runtime for values and by the backends'
// kernels. Views share storage; `contiguous_copy` and `Tensor::empty` allocate.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "support/dtype.h"
#include "support/error.h"

namespace splice {

// Bytes that a tensor views. Either owned (allocated 64-byte aligned) or borrowed from
// something `keep_alive` holds (a memory-mapped archive).
class Storage {
 public:
  // Allocates nbytes, zero-filled, 64-byte aligned.
  static std::shared_ptr<Storage> allocate(size_t nbytes);
  // Wraps memory owned by `keep_alive`; the storage is read-only when `writable` is false.
  static std::shared_ptr<Storage> borrow(void* data, size_t nbytes,
                                         std::shared_ptr<const void> keep_alive, bool writable);

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  bool writable() const { return writable_; }
  // Whether splice allocated it (allocate) rather than viewing someone else's memory (borrow):
  // only owned storage may be kept beyond a call as session state.
  bool owned() const { return owned_; }

  Storage(std::byte* data, size_t nbytes, std::shared_ptr<const void> owner, bool writable,
          bool owned = false)
      : data_(data), nbytes_(nbytes), owner_(std::move(owner)), writable_(writable),
        owned_(owned) {}

 private:
  std::byte* data_;
  size_t nbytes_;
  std::shared_ptr<const void> owner_;
  bool writable_;
  bool owned_;
};

using Shape = std::vector<int64_t>;

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

  // A new contiguous, zero-filled tensor.
  static Tensor empty(DType dtype, const Shape& sizes);

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

  // Pointer to the element at the view's offset.
  std::byte* raw_data() const { return storage_->data() + offset_ * dtype_size(dtype_); }
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(raw_data());
  }

  // A view of the same storage with other sizes/strides/offset (no checks).
  Tensor view_as(Shape sizes, Shape strides, int64_t offset) const {
    return Tensor(dtype_, std::move(sizes), std::move(strides), offset, storage_);
  }

  // A contiguous copy in new storage (always copies).
  Tensor contiguous_copy() const;

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
