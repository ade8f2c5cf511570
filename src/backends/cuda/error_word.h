#pragma once
// Checks inside kernels (an index out of range, a position read on the device, an integer
// division by zero) cannot return an Error, so they record the first failure in an error word:
// a small int64 array in device memory. The first failing check wins (atomicCAS on slot 0) and
// stores which check failed, the launch's site (the caller's id for the node, e.g. its plan
// step), the offending value, the limit it broke and the dim. Kernels that modify memory skip
// their writes once the word is set, and write kernels validate every index in a pass of their
// own before the writing pass, so a failed call leaves buffers as the CPU backend leaves them:
// everything before the failing node done, nothing of it or after it. The host clears the word
// before a call and reads it once after (ErrorWord::read), turning a failure into an Error that
// names the node and the numbers (failure_error).

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "backends/cuda/error_word_layout.h"
#include "support/error.h"

namespace splice::cuda {

struct DeviceCheckFailure {
  DeviceCheck check = DeviceCheck::kNone;
  int64_t site = 0;
  int64_t value = 0;
  int64_t limit = 0;
  int64_t dim = 0;
  int64_t extra = 0;
};

// The Error for a failure, prefixed with `context` (the node and op, e.g.
// "node index_copy_1 (aten.index_copy.default)"), in the CPU backend's words and kinds:
// kOutOfRange "index 7 is out of range for dim 0 of size 5", kBadInput "integer division by
// zero (ZeroDivisionError)", ...
Error failure_error(const DeviceCheckFailure& failure, std::string_view context);

// An error word in device memory with a pinned host copy for reading it back.
class ErrorWord {
 public:
  static Result<ErrorWord> create();
  ErrorWord() = default;
  ErrorWord(ErrorWord&& other) noexcept;
  ErrorWord& operator=(ErrorWord&& other) noexcept;
  ErrorWord(const ErrorWord&) = delete;
  ErrorWord& operator=(const ErrorWord&) = delete;
  ~ErrorWord();

  int64_t* device() const { return device_; }
  // Resets the word on `stream` (before a call's first launch).
  Result<void> clear(cudaStream_t stream);
  // Copies the word back and waits for `stream`: the first failure since clear(), if any.
  Result<std::optional<DeviceCheckFailure>> read(cudaStream_t stream);

 private:
  int64_t* device_ = nullptr;
  int64_t* host_ = nullptr;  // pinned
};

}  // namespace splice::cuda
