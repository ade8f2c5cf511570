// Host emulation of the GEMV-epilogue kernels, step 1: generates the kernel source of each
// epilogue emu_gemv_epilogue_run.cc checks (emu_gemv_epilogue_cases.h) and writes it, made
// host-compilable (C++ linkage, splice's 16-bit conversions instead of PTX, a plain load for
// the streaming one), into emu_gemv_epilogue.inc, one namespace per case.
#include <cstdio>

#include <fstream>
#include "emu_source.h"

#include "emu_gemv_epilogue_cases.h"

using namespace splice;
using namespace splice::cuda;

int main() {
  std::ofstream out("emu_gemv_epilogue.inc");
  const auto cases = emu_gemv_epilogue_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    auto src = generate_gemv_epilogue_source(cases[i].shape);
    if (!src.ok()) {
      printf("gen fail %s\n", src.error().message().c_str());
      return 1;
    }
    const std::string s = emu_host_source(*src);
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
