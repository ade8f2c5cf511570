// Host emulation, step 1: lowers every pointwise case in every dtype, generates its CUDA source
// and writes the sources (made host-compilable: C++ linkage, splice's half/bfloat16 conversions
// instead of PTX) into emu_kernels.inc, one namespace per distinct source, plus the table
// emu_table.inc that emu_pointwise_run.cc calls them through.
#include <cstdio>
#include <fstream>
#include <map>
#include "backends/cuda/pointwise_codegen.h"
#include "emu_source.h"
#include "ir/pointwise_lowering.h"
#include "pointwise_case_args.h"
using namespace splice;
using namespace splice::cuda;
using namespace splice::cuda::testing;
int main() {
  std::map<std::string, int> ns_of;
  std::ofstream out("emu_kernels.inc");
  std::ofstream table("emu_table.inc");
  int idx = 0;
  for (const PointwiseCase& c : pointwise_cases())
    for (DType dtype : kAllDTypes) {
      auto l = lower_pointwise_op(c.target, op_args(c, dtype));
      if (!l.ok()) continue;
      auto src = generate_pointwise_source(l->program, {});
      if (!src.ok()) {
        printf("gen fail %s\n", src.error().message().c_str());
        return 1;
      }
      const std::string s = emu_host_source(*src);
      auto it = ns_of.find(s);
      int ns;
      if (it == ns_of.end()) {
        ns = (int)ns_of.size();
        ns_of[s] = ns;
        out << "namespace k" << ns << " {\n" << s << "\n}\n";
      } else
        ns = it->second;
      table << "{" << idx << ", [](const void* p, int k){ const auto& P = *static_cast<const k"
            << ns << "::Params*>(p); if (k==0) k" << ns
            << "::splice_pw_contiguous(P); else if (k==1) k" << ns
            << "::splice_pw_strided32(P); else if (k==2) k" << ns
            << "::splice_pw_strided64(P); else k" << ns << "::splice_pw_rows4(P);}},\n";
      ++idx;
    }
  printf("%d programs, %zu unique\n", idx, ns_of.size());
}
