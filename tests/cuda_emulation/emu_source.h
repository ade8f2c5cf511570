// Host emulation: generated CUDA source made host-compilable C++ (for the generator programs
// emu_pointwise_gen.cc and emu_gemv_epilogue_gen.cc): C++ linkage, splice's 16-bit float
// conversions instead of PTX, a plain load for the streaming one.
#pragma once
#include <regex>
#include <string>

#include "tensor/half.h"

inline void emu_replace_all(std::string& s, const std::string& a, const std::string& b) {
  for (size_t p = s.find(a); p != std::string::npos; p = s.find(a, p + b.size()))
    s.replace(p, a.size(), b);
}

inline std::string emu_host_source(std::string s) {
  emu_replace_all(s, "extern \"C\" ", "");
  emu_replace_all(s, "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h.x));",
                  "f = splice::half_bits_to_float(h.x);");
  emu_replace_all(s, "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h.x) : \"f\"(f));",
                  "h.x = splice::float_to_half_bits(f);");
  emu_replace_all(s, "asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(b.x) : \"f\"(f));",
                  "b.x = splice::float_to_bfloat16_bits(f);");
  return std::regex_replace(s, std::regex(R"(asm volatile\("ld\.global[^;]*;"[^;]*;)"),
                            "v = *(const uint4*)p;");
}
