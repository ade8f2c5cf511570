// The host side of device checks: allocating, clearing and reading the error word, and the
// Error each recorded failure becomes.
#include "backends/cuda/error_word.h"

#include <utility>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_memory.h"

namespace splice::cuda {

Error failure_error(const DeviceCheckFailure& f, std::string_view context) {
  Error e(ErrorKind::kInternal, "");
  switch (f.check) {
    case DeviceCheck::kIndexOutOfRange:
      e = make_error(ErrorKind::kOutOfRange, "index {} is out of range for dim {} of size {}",
                     f.value, f.dim, f.limit);
      break;
    case DeviceCheck::kPositionOutOfRange:
      e = make_error(ErrorKind::kOutOfRange,
                     "position {} (covering {} entries) is out of range for dim {} of size {}",
                     f.value, f.extra, f.dim, f.limit);
      break;
    case DeviceCheck::kIntegerDivisionByZero:
      e = make_error(ErrorKind::kBadInput, "integer division by zero (ZeroDivisionError)");
      break;
    case DeviceCheck::kNegativeRepeat:
      e = make_error(ErrorKind::kBadInput, "repeats can not be negative, got {} at {}", f.value,
                     f.dim);
      break;
    case DeviceCheck::kSymbolOutOfRange:
      e = make_error(ErrorKind::kOutOfRange, "the value {} is outside its range [{}, {}]", f.value,
                     f.extra, f.limit);
      break;
    case DeviceCheck::kNone:
    default:
      e = make_error(ErrorKind::kInternal, "the device error word holds unknown check {}",
                     static_cast<int64_t>(f.check));
      break;
  }
  return context.empty() ? e : e.with_context(std::string(context));
}

Result<ErrorWord> ErrorWord::create() {
  ErrorWord w;
  SPLICE_ASSIGN_OR_RETURN(void* dev,
                          device_malloc(kErrorWordSlots * sizeof(int64_t), "the error word"));
  w.device_ = static_cast<int64_t*>(dev);
  void* host = nullptr;
  SPLICE_CUDA_CHECK(cudaMallocHost(&host, kErrorWordSlots * sizeof(int64_t)));
  w.host_ = static_cast<int64_t*>(host);
  SPLICE_CUDA_CHECK(cudaMemset(w.device_, 0, kErrorWordSlots * sizeof(int64_t)));
  return w;
}

ErrorWord::ErrorWord(ErrorWord&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)), host_(std::exchange(other.host_, nullptr)) {}

ErrorWord& ErrorWord::operator=(ErrorWord&& other) noexcept {
  if (this != &other) {
    ErrorWord old(std::move(*this));
    device_ = std::exchange(other.device_, nullptr);
    host_ = std::exchange(other.host_, nullptr);
  }
  return *this;
}

ErrorWord::~ErrorWord() {
  if (device_ != nullptr) (void)cudaFree(device_);
  if (host_ != nullptr) (void)cudaFreeHost(host_);
}

Result<void> ErrorWord::clear(cudaStream_t stream) {
  SPLICE_CUDA_CHECK(cudaMemsetAsync(device_, 0, kErrorWordSlots * sizeof(int64_t), stream));
  return ok_result();
}

Result<std::optional<DeviceCheckFailure>> ErrorWord::read(cudaStream_t stream) {
  SPLICE_CUDA_CHECK(cudaMemcpyAsync(host_, device_, kErrorWordSlots * sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, stream));
  SPLICE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host_[kErrorWordCheck] == 0) return std::optional<DeviceCheckFailure>();
  DeviceCheckFailure f;
  f.check = static_cast<DeviceCheck>(host_[kErrorWordCheck]);
  f.site = host_[kErrorWordSite];
  f.value = host_[kErrorWordValue];
  f.limit = host_[kErrorWordLimit];
  f.dim = host_[kErrorWordDim];
  f.extra = host_[kErrorWordExtra];
  return std::optional<DeviceCheckFailure>(f);
}

}  // namespace splice::cuda
