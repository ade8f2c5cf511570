#pragma once
// The error word's layout (error_word.h), shared by host code, nvcc kernels (error_word.cuh)
// and the NVRTC preamble. Kept free of fmt-using headers so .cu files can include it.

#include <cstdint>

namespace splice::cuda {

// What a failed device check was. The numbers are shared with device code (error_word.cuh and
// the NVRTC preamble), so they never change meaning.
enum class DeviceCheck : int64_t {
  kNone = 0,
  // value: the index; limit: the dim's size; dim: the indexed dim.
  kIndexOutOfRange = 1,
  // A position read on the device (a slice start, a write offset): value: the position;
  // limit: the dim's size; dim; extra: the entries the view covers from the position.
  kPositionOutOfRange = 2,
  // Integer div/floor_divide/remainder/fmod by zero (PyTorch raises ZeroDivisionError).
  kIntegerDivisionByZero = 3,
  // repeat_interleave with a negative repeat count: value: the count; dim: its position.
  kNegativeRepeat = 4,
  // A value read into a symbol on the device (.item() of a position, runtime/device_positions.h)
  // outside the symbol's range: value: the value; limit: the range's largest value; extra: its
  // smallest.
  kSymbolOutOfRange = 5,
};

// Slots of the error word (int64 each).
inline constexpr int kErrorWordCheck = 0;
inline constexpr int kErrorWordSite = 1;
inline constexpr int kErrorWordValue = 2;
inline constexpr int kErrorWordLimit = 3;
inline constexpr int kErrorWordDim = 4;
inline constexpr int kErrorWordExtra = 5;
inline constexpr int kErrorWordSlots = 8;

}  // namespace splice::cuda
