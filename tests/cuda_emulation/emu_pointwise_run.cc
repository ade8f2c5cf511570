// Host emulation, step 2: runs every generated pointwise kernel (emu_kernels.inc) over the same
// cases, shapes and layouts as the GPU test, with plan_pointwise_launch's parameter block and
// every block and thread of its grid, and compares with the CPU kernels bit for bit.
// The emulation header must come before the generated kernels (order matters: keep the blocks).
#include "emu_pointwise.h"

#include "emu_kernels.inc"

#include <cstdio>
#include <functional>

#include "backends/cuda/pointwise_launch.h"
#include "ir/pointwise_lowering.h"
#include "pointwise_case_args.h"
using namespace splice;
using namespace splice::cuda;
using namespace splice::cuda::testing;
struct Entry {
  int idx;
  void (*fn)(const void*, int);
};
static const Entry kTable[] = {
#include "emu_table.inc"
};
// Host "device" destination: host storage poisoned.
int main() {
  int64_t err[8] = {};
  int runs = 0, fails = 0;
  std::mt19937 rng(2024);
  struct Dims {
    int64_t n, m;
  };
  const Dims dims[] = {{3, 5}, {1, 1}, {0, 4}, {6, 36}, {33, 67}, {301, 3}};
  const Layout layouts[] = {Layout::kContiguous, Layout::kStrided, Layout::kTransposed,
                            Layout::kRows};
  int idx = 0;
  for (const PointwiseCase& c : pointwise_cases())
    for (DType dtype : kAllDTypes) {
      auto l = lower_pointwise_op(c.target, op_args(c, dtype));
      if (!l.ok()) continue;
      const Entry& e = kTable[idx++];
      // A target the CPU backend runs through a decomposition has no kernel to compare with.
      const cpu::KernelFn kernel = cpu::find_kernel(c.target);
      if (kernel == nullptr) continue;
      for (const Dims& d : dims)
        for (size_t li = 0; li < std::size(layouts); ++li) {
          const Layout in_layout = layouts[li], out_layout = layouts[(li + 1) % std::size(layouts)];
          std::vector<std::optional<Tensor>> tensors;
          auto args = cpu_args(c, dtype, d.n, d.m, in_layout, rng, tensors);
          auto expected = cpu::call_kernel(kernel, args);
          ++runs;
          std::string where =
              case_name(c, dtype) + fmt::format(" N={} M={} {}", d.n, d.m, layout_name(in_layout));
          if (!expected.ok()) {
            // fill.Tensor values the CPU refuses (docs/cuda.md): not a kernel question.
            if (c.target != "aten.fill.Tensor") {
              printf("CPU fail %s\n", where.c_str());
              ++fails;
            }
            continue;
          }
          const Tensor& want = (*expected)[0];
          std::vector<PointwiseOperand> ins;
          for (int a : l->inputs)
            ins.push_back({device_view(tensors[a]->storage()->data(), *tensors[a]), nullptr});
          Tensor dest = make_layout(want.dtype(), want.sizes(), out_layout);
          std::memset(dest.storage()->data(), kPoison, dest.storage()->nbytes());
          PointwiseOperand outs[] = {{device_view(dest.storage()->data(), dest), nullptr}};
          LaunchContext ctx;
          ctx.error_word = err;
          auto plan =
              plan_pointwise_launch(l->program, {}, ins, outs, l->program.constants, ctx, 4);
          if (!plan.ok()) {
            printf("plan fail %s: %s\n", where.c_str(), plan.error().message().c_str());
            ++fails;
            continue;
          }
          if (plan->blocks > 0) {
            gridDim.x = plan->blocks;
            blockDim.x = 256;
            for (unsigned b = 0; b < plan->blocks; ++b)
              for (unsigned t = 0; t < 256; ++t) {
                blockIdx.x = b;
                threadIdx.x = t;
                e.fn(plan->params.data(), (int)plan->kernel);
              }
          }
          if (err[0]) {
            printf("device check %s: %lld\n", where.c_str(), (long long)err[0]);
            std::memset(err, 0, sizeof err);
            ++fails;
            continue;
          }
          // Compare via check_destination logic on host memory.
          const Tensor got = dest;
          const Tensor w = want.contiguous_copy().value();
          const Tensor g = got.contiguous_copy().value();
          int64_t bad = 0;
          std::string ex;
          dispatch_dtype(want.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (int64_t i = 0; i < g.numel(); ++i) {
              const double gv = cast_value<double>(g.data<T>()[i]),
                           wv = cast_value<double>(w.data<T>()[i]);
              if (!close(gv, wv, want.dtype(), true) && ++bad <= 3)
                ex += fmt::format(" [{}] got {} want {};", i, gv, wv);
            }
          });
          // Bytes outside the view must still be poison.
          std::vector<bool> covered(dest.storage()->nbytes(), false);
          {
            Shape coord(dest.dim(), 0);
            const size_t es = dtype_size(dest.dtype());
            for (int64_t i = 0; i < dest.numel(); ++i) {
              int64_t off = dest.offset();
              for (int64_t k = 0; k < dest.dim(); ++k) off += coord[k] * dest.stride(k);
              for (size_t b = 0; b < es; ++b) covered[off * es + b] = true;
              for (int64_t k = dest.dim() - 1; k >= 0; --k) {
                if (++coord[k] < dest.size(k)) break;
                coord[k] = 0;
              }
            }
          }
          int64_t stray = 0;
          for (size_t b = 0; b < covered.size(); ++b)
            stray += !covered[b] && (unsigned char)dest.storage()->data()[b] != kPoison;
          if (bad || stray) {
            ++fails;
            if (fails < 80)
              printf("%s: %lld differ%s stray %lld (kernel %d vec %d)\n", where.c_str(),
                     (long long)bad, ex.c_str(), (long long)stray, (int)plan->kernel,
                     plan->vectorised);
          }
        }
    }
  printf("%d runs, %d failed\n", runs, fails);
}
