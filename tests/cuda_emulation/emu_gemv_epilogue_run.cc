// Host emulation of the GEMV-epilogue kernels, step 2: runs each generated kernel
// (emu_gemv_epilogue.inc) over products of several row counts, widths, column ranges, strides
// and biases, split over k and not (plan_gemv_epilogue at 2 and at 132 multiprocessors), with
// the parameter block the launcher builds (gemv_epilogue_params), every block and thread of
// the grid, and compares with a host reference: the product summed in double and rounded to
// its dtype as a stored product would be, then the epilogue.
// The emulation header must come before the generated kernels (order matters: keep the blocks).
#include "emu_cuda.h"

#define __align__(n) alignas(n)
#include "emu_builtins.h"

#include "emu_gemv_epilogue.inc"

#include <cstdio>
#include <random>

#include "emu_gemv_epilogue_cases.h"

using namespace splice;
using namespace splice::cuda;

using KernelFn = void (*)(const void*, int);
static const KernelFn kKernels[] = {
#include "emu_gemv_epilogue_table.inc"
};

namespace {

struct Geometry {
  int64_t rows, k, width, sm;
  bool bias;
  int64_t in_row_pad, in_col_stride;  // the tensor operand's layout
};

// A buffer of n elements of dtype t, from floats (rounded to t).
std::vector<unsigned char> buffer_of(DType t, const std::vector<float>& v) {
  std::vector<unsigned char> b(v.size() * dtype_size(t) + 16);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kFloat32) {
      std::memcpy(b.data() + 4 * i, &v[i], 4);
    } else {
      const uint16_t bits =
          t == DType::kFloat16 ? float_to_half_bits(v[i]) : float_to_bfloat16_bits(v[i]);
      std::memcpy(b.data() + 2 * i, &bits, 2);
    }
  }
  return b;
}

float load(DType t, const unsigned char* base, int64_t i) {
  if (t == DType::kFloat32) {
    float f;
    std::memcpy(&f, base + 4 * i, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, base + 2 * i, 2);
  return t == DType::kFloat16 ? half_bits_to_float(bits) : bfloat16_bits_to_float(bits);
}

}  // namespace

int main() {
  std::mt19937 rng(35);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const auto cases = emu_gemv_epilogue_cases();
  const Geometry geometries[] = {
      {1, 256, 40, 132, false, 0, 1}, {3, 512, 24, 2, true, 5, 1},  {16, 64, 8, 132, true, 0, 2},
      {5, 1024, 17, 8, false, 3, 1},  {2, 2048, 64, 2, true, 0, 1}, {4, 8192, 24, 132, true, 2, 1},
      {1, 4096, 3, 132, false, 0, 1}, {2, 512, 130, 1, true, 0, 1},
  };
  int runs = 0, fails = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const EmuEpilogueCase& c = cases[ci];
    const DType t = c.shape.dtype;
    const size_t nin = c.shape.program.inputs.size();
    const size_t nout = c.shape.program.outputs.size();
    int ranges = 0;
    for (bool r : c.shape.is_range) ranges += r ? 1 : 0;
    for (const Geometry& g : geometries) {
      // Columns: range r starts at 8 + r * (width + 8); the product is wider than them all.
      const int64_t n = 8 + ranges * (g.width + 8) + 8;
      std::vector<float> x(g.rows * g.k), w(n * g.k), bias(n);
      for (auto* v : {&x, &w, &bias})
        for (float& e : *v) e = emu_round(t, uni(rng));
      // With a norm prologue the kernel reads x through it: the reference product reads the
      // norm's output, computed here as the fused norm kernel computes it.
      std::vector<float> nw(g.k), xe = x;
      for (float& e : nw) e = emu_round(t, 0.5f + 0.5f * uni(rng));
      if (c.shape.norm) {
        const DType stat = c.shape.norm->stat, cast = c.shape.norm->cast;
        for (int64_t m = 0; m < g.rows; ++m) {
          float s = 0;
          for (int64_t q = 0; q < g.k; ++q) {
            const float xf = emu_round(stat, x[m * g.k + q]);
            s += emu_round(stat, xf * xf);
          }
          const float mean = emu_round(stat, s / static_cast<float>(g.k));
          const float r = emu_round(stat, 1.0f / std::sqrt(emu_round(stat, mean + 1e-5f)));
          for (int64_t q = 0; q < g.k; ++q) {
            const float y = emu_round(cast, emu_round(stat, emu_round(stat, x[m * g.k + q]) * r));
            xe[m * g.k + q] = emu_round(t, c.norm_weight ? y * nw[q] : y);
          }
        }
      }
      auto xb = buffer_of(t, x), wb = buffer_of(t, w), bb = buffer_of(t, bias);
      auto nwb = buffer_of(t, nw);
      GemvEpilogueArgs a;
      a.gemv.dtype = t;
      a.gemv.m = g.rows;
      a.gemv.n = n;
      a.gemv.k = g.k;
      a.gemv.x = xb.data();
      a.gemv.x_rs = g.k;
      a.gemv.w = wb.data();
      a.gemv.w_ns = g.k;
      if (g.bias) a.gemv.bias = bb.data();
      a.width = g.width;
      if (c.shape.norm) {
        a.norm_eps = 1e-5f;
        if (c.norm_weight) a.norm_weight = nwb.data();
      }
      for (int r = 0; r < ranges; ++r) a.columns.push_back(8 + r * (g.width + 8));
      // The tensor inputs and the outputs.
      const int64_t in_rs = g.width * g.in_col_stride + g.in_row_pad;
      std::vector<std::vector<unsigned char>> ins, outs;
      std::vector<std::vector<float>> in_vals;
      for (size_t k = 0; k < nin; ++k) {
        if (c.shape.is_range[k]) continue;
        std::vector<float> v(g.rows * in_rs);
        for (float& e : v) e = emu_round(t, uni(rng));
        in_vals.push_back(v);
        ins.push_back(buffer_of(t, v));
        a.inputs.push_back({ins.back().data(), in_rs, g.in_col_stride});
      }
      for (size_t k = 0; k < nout; ++k) {
        outs.push_back(std::vector<unsigned char>(g.rows * g.width * dtype_size(t) + 16, 0x5a));
        a.outputs.push_back({outs.back().data(), g.width, 1});
      }
      const auto l = plan_gemv_epilogue(a, static_cast<int>(g.sm));
      if (!l) {
        printf("FAIL %s rows %ld: no launch\n", c.name, (long)g.rows);
        ++fails;
        continue;
      }
      std::vector<float> partials(l->partial_bytes / sizeof(float) + 1);
      std::vector<unsigned> counters(kGemvCounters, 0);
      int64_t err[8] = {};
      const std::vector<uint64_t> params =
          gemv_epilogue_params(a, *l, c.shape.program.constants,
                               l->partial_bytes ? partials.data() : nullptr, counters.data(), err);
      emu_launch(
          dim3(static_cast<unsigned>(l->blocks), static_cast<unsigned>(l->splits), 1), 256,
          [&] { kKernels[ci](params.data(), l->row_tile); }, /*barrier=*/true);
      ++runs;
      // The reference.
      int bad = 0;
      double worst = 0;
      for (int64_t m = 0; m < g.rows; ++m)
        for (int64_t j = 0; j < g.width; ++j) {
          std::vector<float> in(nin), out(nout);
          for (size_t k = 0, r = 0, ti = 0; k < nin; ++k) {
            if (c.shape.is_range[k]) {
              const int64_t col = a.columns[r++] + j;
              double s = 0;
              for (int64_t q = 0; q < g.k; ++q) s += double(xe[m * g.k + q]) * w[col * g.k + q];
              float v = static_cast<float>(s);
              if (g.bias) v += bias[col];
              in[k] = emu_round(t, v);
            } else {
              in[k] = in_vals[ti++][m * in_rs + j * g.in_col_stride];
            }
          }
          c.reference(in.data(), out.data());
          for (size_t o = 0; o < nout; ++o) {
            const float got = load(t, outs[o].data(), m * g.width + j);
            // A product summed in another order may round one ulp apart: the bound scales with
            // the epilogue's inputs as well as its output.
            double in_max = 0;
            for (float v : in) in_max = std::max(in_max, double(std::fabs(v)));
            const double rel = t == DType::kFloat32 ? 1e-4 : t == DType::kFloat16 ? 4e-3 : 3e-2;
            const double tol = rel * (1.0 + std::fabs(out[o]) + in_max);
            const double d = std::fabs(double(got) - out[o]);
            worst = std::max(worst, d);
            if (!(d <= tol)) {
              if (bad < 3)
                printf(
                    "  %s %s rows %ld width %ld k %ld splits %ld: out %zu (%ld, %ld) got %g want "
                    "%g\n",
                    c.name, dtype_name(t).data(), (long)g.rows, (long)g.width, (long)g.k,
                    (long)l->splits, o, (long)m, (long)j, got, out[o]);
              ++bad;
            }
          }
        }
      // Past the outputs' last element: untouched (the poison byte).
      for (auto& o : outs)
        for (size_t b = g.rows * g.width * dtype_size(t); b < o.size(); ++b)
          if (o[b] != 0x5a) ++bad;
      bool counters_zero = true;
      for (unsigned v : counters) counters_zero = counters_zero && v == 0;
      if (!counters_zero) ++bad;
      printf(
          "%s %s %s rows %ld width %ld k %ld tiles %ld blocks %ld splits %ld cols/block %d: worst "
          "%.3g%s\n",
          bad ? "FAIL" : "ok  ", c.name, dtype_name(t).data(), (long)g.rows, (long)g.width,
          (long)g.k, (long)l->tiles, (long)l->blocks, (long)l->splits, l->cols_per_block, worst,
          counters_zero ? "" : " (counters left set)");
      fails += bad ? 1 : 0;
    }
  }
  printf("%d runs, %d failed\n", runs, fails);
  return fails ? 1 : 0;
}
