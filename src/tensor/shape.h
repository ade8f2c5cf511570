#pragma once
// Shape: a tensor's sizes or strides, a vector of int64 that keeps up to kInline elements
// inside itself and allocates only beyond. Every view a kernel makes, every value a step
// binds, copies two of them: as std::vector they were two heap allocations each, a fifth of a
// small model's CPU time in malloc and free. It has the part of std::vector's interface the
// code uses, converts to and from std::vector<int64_t> (the public API's shapes), and compares
// element-wise.

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace splice {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  // Ranks up to this stay inline (PyTorch's own SmallVector for sizes keeps 5).
  static constexpr size_t kInline = 6;

  Shape() noexcept {}  // user-provided: a const Shape needs no initializer
  explicit Shape(size_t n) { assign(n, 0); }
  Shape(size_t n, int64_t value) { assign(n, value); }
  Shape(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
  Shape(const Shape& other) { copy_from(other); }
  Shape(Shape&& other) noexcept { take(other); }
  ~Shape() { release(); }

  Shape& operator=(const Shape& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    int64_t* fresh = new int64_t[n]();  // zeroed, as inline_ is
    if (size_ > 0) std::memcpy(fresh, data_, size_ * sizeof(int64_t));
    release();
    data_ = fresh;
    capacity_ = n;
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    if constexpr (std::forward_iterator<It>)
      reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  void push_back(int64_t value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = value;
  }
  int64_t& emplace_back(int64_t value) {
    push_back(value);
    return back();
  }
  void pop_back() { --size_; }

  iterator insert(const_iterator pos, int64_t value) { return insert(pos, size_t{1}, value); }
  iterator insert(const_iterator pos, size_t n, int64_t value) {
    const size_t at = open_gap(pos, n);
    std::fill(data_ + at, data_ + at + n, value);
    return data_ + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    // Copy first: [first, last) may be this shape's own elements.
    const Shape values(first, last);
    const size_t at = open_gap(pos, values.size());
    std::copy(values.begin(), values.end(), data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - data_);
    const size_t n = static_cast<size_t>(last - first);
    std::copy(data_ + at + n, data_ + size_, data_ + at);
    size_ -= n;
    return data_ + at;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_; }
  void release() {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
  }
  // Copies other's elements here (the hot path of every tensor copy). A rank up to kInline
  // copies kInline elements whatever the size: a fixed-size copy is a few register moves, a
  // variable-size one a call into memmove. Both buffers hold at least kInline elements (a heap
  // buffer is only made for more), so the copy stays inside them.
  void copy_from(const Shape& other) {
    if (other.size_ <= kInline) {
      std::memcpy(data_, other.data_, kInline * sizeof(int64_t));
    } else {
      if (other.size_ > capacity_) reserve(other.size_);
      std::memcpy(data_, other.data_, other.size_ * sizeof(int64_t));
    }
    size_ = other.size_;
  }
  // Moves other's elements here (this holds none) and leaves other empty and inline.
  void take(Shape& other) {
    if (other.on_heap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = kInline;
    } else {
      data_ = inline_;
      capacity_ = kInline;
      std::memcpy(inline_, other.inline_, sizeof inline_);  // fixed size: see copy_from
    }
    size_ = other.size_;
    other.size_ = 0;
  }
  // Makes room for n elements at pos; returns pos's index.
  size_t open_gap(const_iterator pos, size_t n) {
    const size_t at = static_cast<size_t>(pos - data_);
    if (size_ + n > capacity_) reserve(std::max(size_ + n, capacity_ * 2));
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += n;
    return at;
  }

  // Zeroed so that the whole-buffer copies above never read indeterminate values.
  int64_t inline_[kInline] = {};
  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

}  // namespace splice
