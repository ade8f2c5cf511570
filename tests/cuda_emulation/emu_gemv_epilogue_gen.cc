// Host emulation of the GEMV-epilogue kernels, step 1: generates the kernel source of each
// epilogue emu_gemv_epilogue_run.cc checks (emu_gemv_epilogue_cases.h) and writes it, made
// host-compilable (C++ linkage, splice's 16-bit conversions instead of PTX, a plain load for
// the streaming one), into emu_gemv_epilogue.inc, one namespace per case.
#include <cstdio>
#include <fstream>
#include <regex>

#include "emu_gemv_epilogue_cases.h"

using namespace splice;
using namespace splice::cuda;

void rep(std::string& s, const std::string& a, const std::string& b) {
  for (size_t p = s.find(a); p != std::string::npos; p = s.find(a, p + b.size()))
    s.replace(p, a.size(), b);
}

int main() {
  std::ofstream out("emu_gemv_epilogue.inc");
  const auto cases = emu_gemv_epilogue_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    auto src = generate_gemv_epilogue_source(cases[i].shape);
    if (!src.ok()) {
      printf("gen fail %s\n", src.error().message().c_str());
      return 1;
    }
    std::string s = *src;
    rep(s, "extern \"C\" ", "");
    rep(s, "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h.x));",
        "f = splice::half_bits_to_float(h.x);");
    rep(s, "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h.x) : \"f\"(f));",
        "h.x = splice::float_to_half_bits(f);");
    rep(s, "asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(b.x) : \"f\"(f));",
        "b.x = splice::float_to_bfloat16_bits(f);");
    s = std::regex_replace(s, std::regex(R"(asm volatile\("ld\.global[^;]*;"[^;]*;)"),
                           "v = *(const uint4*)p;");
    out << "namespace e" << i << " {\n" << s << "\n}\n";
  }
  std::ofstream table("emu_gemv_epilogue_table.inc");
  for (size_t i = 0; i < cases.size(); ++i)
    table << "[](const void* p, int mt) { const auto& P = *static_cast<const e" << i
          << "::Params*>(p); switch (mt) { case 1: e" << i << "::splice_gemv_epilogue_1(P); break; "
          << "case 2: e" << i << "::splice_gemv_epilogue_2(P); break; case 4: e" << i
          << "::splice_gemv_epilogue_4(P); break; case 8: e" << i
          << "::splice_gemv_epilogue_8(P); break; default: e" << i
          << "::splice_gemv_epilogue_16(P); } },\n";
  printf("%zu epilogue kernels generated\n", cases.size());
}
