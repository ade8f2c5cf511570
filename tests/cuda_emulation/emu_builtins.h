// Host emulation: the CUDA bit-cast built-ins the generated kernels use, for emu_pointwise.h
// and emu_gemv_epilogue_run.cc.
#pragma once
#include <cstring>

inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline double __longlong_as_double(long long i) {
  double f;
  std::memcpy(&f, &i, 8);
  return f;
}
