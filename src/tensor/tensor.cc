// Storage allocation and the small Tensor helpers that need no kernels.
#include "tensor/tensor.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "support/checked_math.h"

namespace splice {

namespace {

// Freed host blocks kept for the next allocation of the same padded size: a call of a program
// allocates the same few dozen intermediates every time (kernel outputs the plan does not
// place), and malloc's free lists give blocks of a few KiB back only after coalescing work
// that cost a quarter of a small model's call. Blocks up to kMaxBlock are kept, kMaxCached
// bytes in all; beyond that they go back to the system. The cache lives for the process and is
// never destroyed (a Storage may be freed during static destruction), so its blocks stay
// reachable for leak checkers.
class HostBlockCache {
 public:
  static HostBlockCache& instance() {
    static HostBlockCache* cache = new HostBlockCache();
    return *cache;
  }

  void* take(size_t padded) {
    if (!kEnabled || padded > kMaxBlock) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(padded);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= padded;
    return p;
  }

  void give(void* p, size_t padded) {
    if (kEnabled && padded <= kMaxBlock) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + padded <= kMaxCached) {
        free_[padded].push_back(p);
        cached_ += padded;
        return;
      }
    }
    std::free(p);
  }

 private:
  // Under AddressSanitizer every block goes back to the system, so a use after free is seen.
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  static constexpr bool kEnabled = false;
#else
  static constexpr bool kEnabled = true;
#endif
#else
  static constexpr bool kEnabled = true;
#endif
  static constexpr size_t kMaxBlock = size_t{1} << 20;
  static constexpr size_t kMaxCached = size_t{64} << 20;
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
};

}  // namespace

Result<std::shared_ptr<Storage>> Storage::allocate(size_t nbytes) {
  // Round up so aligned_alloc's size is a multiple of the alignment; allocate at least 64.
  const size_t padded = nbytes == 0 ? 64 : (nbytes + 63) / 64 * 64;
  if (padded < nbytes)
    return make_error(ErrorKind::kBackend, "out of memory: cannot allocate {} bytes", nbytes);
  HostBlockCache& cache = HostBlockCache::instance();
  void* p = cache.take(padded);
  if (p == nullptr) p = std::aligned_alloc(64, padded);
  if (p == nullptr)
    return make_error(ErrorKind::kBackend, "out of memory: cannot allocate {} bytes of host memory",
                      nbytes);
  std::memset(p, 0, padded);
  std::shared_ptr<const void> owner(
      p, [padded, &cache](const void* q) { cache.give(const_cast<void*>(q), padded); });
  return std::make_shared<Storage>(static_cast<std::byte*>(p), nbytes, std::move(owner), true,
                                   /*owned=*/true);
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t nbytes,
                                         std::shared_ptr<const void> keep_alive, bool writable,
                                         Device device) {
  return std::make_shared<Storage>(static_cast<std::byte*>(data), nbytes, std::move(keep_alive),
                                   writable, /*owned=*/false, device);
}

std::shared_ptr<Storage> Storage::adopt(void* data, size_t nbytes,
                                        std::shared_ptr<const void> owner, Device device) {
  return std::make_shared<Storage>(static_cast<std::byte*>(data), nbytes, std::move(owner),
                                   /*writable=*/true, /*owned=*/true, device);
}

void Storage::check_host() const {
  // Device memory read through a host pointer would crash or read garbage: a splice bug.
  SPLICE_ASSERT(device_.is_host());
}

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

int64_t shape_numel(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::optional<int64_t> checked_numel(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0) return std::nullopt;
    auto m = checked_mul(n, s);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

std::string shape_string(const Shape& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

Result<Tensor> Tensor::empty(DType dtype, const Shape& sizes) {
  auto numel = checked_numel(sizes);
  auto bytes = numel ? checked_mul(*numel, static_cast<int64_t>(dtype_size(dtype))) : std::nullopt;
  if (!bytes)
    return make_error(ErrorKind::kShapeMismatch, "a tensor of sizes {} is too large",
                      shape_string(sizes));
  SPLICE_ASSIGN_OR_RETURN(auto storage, Storage::allocate(static_cast<size_t>(*bytes)));
  return Tensor(dtype, sizes, contiguous_strides(sizes), 0, std::move(storage));
}

bool Tensor::is_contiguous() const {
  // A tensor with no elements is contiguous whatever its strides, as in PyTorch: [2, 0, 4] has
  // strides [4, 4, 1], which the walk below would reject at the size-0 dim.
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

Result<Tensor> Tensor::contiguous_copy() const {
  SPLICE_ASSIGN_OR_RETURN(Tensor out, empty(dtype_, sizes_));
  const int64_t n = numel();
  if (n == 0) return out;
  const int esize = dtype_size(dtype_);
  if (is_contiguous()) {
    std::memcpy(out.raw_data(), raw_data(), static_cast<size_t>(n) * esize);
    return out;
  }
  // Odometer walk over the strided source.
  const int64_t rank = dim();
  Shape index(rank, 0);
  const std::byte* base = raw_data();
  std::byte* dst = out.raw_data();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += index[d] * strides_[d];
    std::memcpy(dst + i * esize, base + off * esize, esize);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes_[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

Result<void> check_view_in_bounds(const Tensor& t) {
  auto numel = checked_numel(t.sizes());
  SPLICE_CHECK_OR_RETURN(numel.has_value(), ErrorKind::kBadArchive,
                         "tensor sizes {} are negative or overflow", shape_string(t.sizes()));
  SPLICE_CHECK_OR_RETURN(t.offset() >= 0, ErrorKind::kBadArchive, "negative storage offset {}",
                         t.offset());
  if (*numel == 0) return ok_result();
  // Highest element index addressed: offset + sum((size-1)*stride) for non-negative strides.
  int64_t last = t.offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    SPLICE_CHECK_OR_RETURN(t.stride(d) >= 0, ErrorKind::kBadArchive, "negative stride {}",
                           t.stride(d));
    auto span = checked_mul(t.size(d) - 1, t.stride(d));
    auto next = span ? checked_add(last, *span) : std::nullopt;
    SPLICE_CHECK_OR_RETURN(next.has_value(), ErrorKind::kBadArchive, "tensor view {} overflows",
                           shape_string(t.sizes()));
    last = *next;
  }
  auto end_bytes = checked_mul(last + 1, dtype_size(t.dtype()));
  SPLICE_CHECK_OR_RETURN(end_bytes && static_cast<uint64_t>(*end_bytes) <= t.storage()->nbytes(),
                         ErrorKind::kBadArchive,
                         "tensor view of sizes {} strides {} offset {} needs more than the {} "
                         "bytes of its storage",
                         shape_string(t.sizes()), shape_string(t.strides()), t.offset(),
                         t.storage()->nbytes());
  return ok_result();
}

}  // namespace splice
