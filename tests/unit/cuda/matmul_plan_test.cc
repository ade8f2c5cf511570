// The matmul family's layout logic without a GPU (suite CudaMatmulPlan): describe_matmul +
// execute_matmul run every case of matmul_cases.h through a host emulation of the GEMM steps
// (cuBLAS's column-major strided-batch GEMM with op flags and leading dims, checked against
// cuBLAS's own constraints; the strided copy; the scale; the integer kernel) and the result is
// compared with the CPU backend. A wrong op flag, leading dim, batch stride, fold or copy shows
// here; only cuBLASLt and the kernels themselves are left for the GPU test.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cuda/matmul_exec.h"
#include "backends/cuda/matmul_plan.h"
#include "matmul_cases.h"

namespace splice::cuda {
namespace {

using namespace splice::cuda::testing;

double read_elem(const void* base, int64_t off, DType dt) {
  const char* p = static_cast<const char*>(base);
  switch (dt) {
    case DType::kUInt8:
      return reinterpret_cast<const uint8_t*>(p)[off];
    case DType::kInt8:
      return reinterpret_cast<const int8_t*>(p)[off];
    case DType::kInt16:
      return reinterpret_cast<const int16_t*>(p)[off];
    case DType::kInt32:
      return reinterpret_cast<const int32_t*>(p)[off];
    case DType::kInt64:
      return static_cast<double>(reinterpret_cast<const int64_t*>(p)[off]);
    case DType::kFloat16:
      return static_cast<float>(reinterpret_cast<const Half*>(p)[off]);
    case DType::kFloat32:
      return reinterpret_cast<const float*>(p)[off];
    case DType::kFloat64:
      return reinterpret_cast<const double*>(p)[off];
    case DType::kBFloat16:
      return static_cast<float>(reinterpret_cast<const BFloat16*>(p)[off]);
    default:
      return 0;
  }
}

void write_elem(void* base, int64_t off, DType dt, double v) {
  char* p = static_cast<char*>(base);
  switch (dt) {
    case DType::kFloat16:
      reinterpret_cast<Half*>(p)[off] = Half(static_cast<float>(v));
      return;
    case DType::kFloat32:
      reinterpret_cast<float*>(p)[off] = static_cast<float>(v);
      return;
    case DType::kFloat64:
      reinterpret_cast<double*>(p)[off] = v;
      return;
    case DType::kBFloat16:
      reinterpret_cast<BFloat16*>(p)[off] = BFloat16(static_cast<float>(v));
      return;
    default:
      ADD_FAILURE() << "write_elem: unexpected dtype";
  }
}

int64_t offset_of(const DeviceTensor& t, int64_t linear, bool broadcast_ones) {
  int64_t off = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    const int64_t idx = linear % t.sizes[d];
    linear /= t.sizes[d];
    off += (broadcast_ones && t.sizes[d] == 1 ? 0 : idx) * t.strides[d];
  }
  return off;
}

// The GEMM steps on host memory, with cuBLAS's argument constraints checked.
class HostGemmSteps final : public GemmSteps {
 public:
  explicit HostGemmSteps(bool refuse_bias) : refuse_bias_(refuse_bias) {}
  int gemm_calls = 0, copies = 0;

  Result<void> copy(const DeviceTensor& dst, const DeviceTensor& src) override {
    ++copies;
    if (dst.rank != src.rank || dst.dtype != src.dtype)
      return Error(ErrorKind::kInternal, "copy: rank/dtype mismatch");
    const int64_t es = dtype_size(dst.dtype);
    DeviceTensor s = src;
    for (int d = 0; d < src.rank; ++d) {
      if (src.sizes[d] != dst.sizes[d] && src.sizes[d] != 1)
        return Error(ErrorKind::kInternal, "copy: src does not broadcast");
      s.sizes[d] = dst.sizes[d];
      if (src.sizes[d] == 1) s.strides[d] = 0;
    }
    for (int64_t i = 0; i < dst.numel(); ++i)
      std::memcpy(static_cast<char*>(dst.data) + offset_of(dst, i, false) * es,
                  static_cast<const char*>(s.data) + offset_of(s, i, false) * es, es);
    return ok_result();
  }

  Result<void> scale(const DeviceTensor& dst, double beta) override {
    for (int64_t i = 0; i < dst.numel(); ++i) {
      const int64_t off = offset_of(dst, i, false);
      if (is_floating(dst.dtype)) {
        const double v = beta == 0 ? 0.0 : beta * read_elem(dst.data, off, dst.dtype);
        write_elem(dst.data, off, dst.dtype, v);
      } else {
        const int64_t es = dtype_size(dst.dtype);
        int64_t v = 0;
        std::memcpy(&v, static_cast<char*>(dst.data) + off * es, es);  // little endian
        if (es < 8 && dst.dtype != DType::kUInt8)                      // sign-extend
          v = (v << (64 - 8 * es)) >> (64 - 8 * es);
        const uint64_t r = beta == 0 ? 0
                                     : static_cast<uint64_t>(static_cast<int64_t>(beta)) *
                                           static_cast<uint64_t>(v);
        std::memcpy(static_cast<char*>(dst.data) + off * es, &r, es);
      }
    }
    return ok_result();
  }

  Result<bool> gemm(const BlasCall& c) override {
    ++gemm_calls;
    if (c.bias && refuse_bias_) return false;
    const auto need = [](bool ok, const char* what) -> Result<void> {
      if (!ok) return Error(ErrorKind::kInternal, std::string("cuBLAS constraint: ") + what);
      return ok_result();
    };
    SPLICE_TRY(need(c.m >= 1 && c.n >= 1 && c.k >= 1 && c.batch >= 1, "dims >= 1"));
    SPLICE_TRY(need(c.lda >= std::max<int64_t>(1, c.trans_a ? c.k : c.m), "lda >= rows of A"));
    SPLICE_TRY(need(c.ldb >= std::max<int64_t>(1, c.trans_b ? c.n : c.k), "ldb >= rows of B"));
    SPLICE_TRY(need(c.ldd >= std::max<int64_t>(1, c.m), "ldd >= m"));
    SPLICE_TRY(need(c.batch == 1 || c.stride_d >= c.ldd * (c.n - 1) + c.m, "D batches overlap"));
    for (int64_t bi = 0; bi < c.batch; ++bi) {
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < c.k; ++p) {
            const int64_t ao = bi * c.stride_a + (c.trans_a ? p + i * c.lda : i + p * c.lda);
            const int64_t bo = bi * c.stride_b + (c.trans_b ? j + p * c.ldb : p + j * c.ldb);
            acc += read_elem(c.a, ao, c.dtype) * read_elem(c.b, bo, c.dtype);
          }
          const int64_t d_off = bi * c.stride_d + i + j * c.ldd;
          double v = c.alpha * acc;
          if (c.beta != 0) v += c.beta * read_elem(c.d, d_off, c.dtype);
          if (c.bias) v += read_elem(c.bias, i, c.dtype);
          write_elem(c.d, d_off, c.dtype, v);
        }
      }
    }
    return true;
  }

  Result<void> int_gemm(const IntGemmArgs& a) override {
    int64_t batches = 1;
    for (int64_t s : a.batch) batches *= s;
    const int64_t es = dtype_size(a.dtype);
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t ao = 0, bo = 0, doff = 0, rem = bi;
      for (int64_t d = static_cast<int64_t>(a.batch.size()) - 1; d >= 0; --d) {
        const int64_t idx = rem % a.batch[d];
        rem /= a.batch[d];
        ao += idx * a.a_batch_strides[d];
        bo += idx * a.b_batch_strides[d];
        doff += idx * a.d_batch_strides[d];
      }
      for (int64_t i = 0; i < a.m; ++i) {
        for (int64_t j = 0; j < a.n; ++j) {
          uint64_t acc = 0;
          for (int64_t p = 0; p < a.k; ++p)
            acc += static_cast<uint64_t>(static_cast<int64_t>(
                       read_elem(a.a, ao + i * a.a_rs + p * a.a_cs, a.dtype))) *
                   static_cast<uint64_t>(
                       static_cast<int64_t>(read_elem(a.b, bo + p * a.b_rs + j * a.b_cs, a.dtype)));
          const int64_t o = doff + i * a.d_rs + j * a.d_cs;
          uint64_t r = static_cast<uint64_t>(a.alpha) * acc;
          if (a.beta != 0)
            r += static_cast<uint64_t>(a.beta) *
                 static_cast<uint64_t>(static_cast<int64_t>(read_elem(a.d, o, a.dtype)));
          char* dst = static_cast<char*>(a.d) + o * es;
          switch (a.dtype) {
            case DType::kUInt8:
              *reinterpret_cast<uint8_t*>(dst) = static_cast<uint8_t>(r);
              break;
            case DType::kInt8:
              *reinterpret_cast<int8_t*>(dst) = static_cast<int8_t>(r);
              break;
            case DType::kInt16:
              *reinterpret_cast<int16_t*>(dst) = static_cast<int16_t>(r);
              break;
            case DType::kInt32:
              *reinterpret_cast<int32_t*>(dst) = static_cast<int32_t>(r);
              break;
            default:
              *reinterpret_cast<int64_t*>(dst) = static_cast<int64_t>(r);
              break;
          }
        }
      }
    }
    return ok_result();
  }

 private:
  bool refuse_bias_;
};

DeviceTensor host_view(const Tensor& t) {
  DeviceTensor d;
  d.data = t.raw_data();
  d.dtype = t.dtype();
  d.rank = static_cast<int>(t.dim());
  for (int i = 0; i < d.rank; ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

TEST(CudaMatmulPlan, ColumnMajorLeadingDims) {
  EXPECT_EQ(column_major_ld(4, 3, 1, 4), 4);
  EXPECT_EQ(column_major_ld(4, 3, 1, 6), 6);
  EXPECT_EQ(column_major_ld(4, 3, 1, 3), std::nullopt);  // columns would overlap
  EXPECT_EQ(column_major_ld(4, 3, 3, 1), std::nullopt);  // row-major
  EXPECT_EQ(column_major_ld(1, 5, 77, 2), 2);            // one row: any row stride
  EXPECT_EQ(column_major_ld(4, 1, 1, 0), 4);             // one column: any column stride
  EXPECT_EQ(column_major_ld(1, 5, 0, 0), std::nullopt);  // a broadcast row
}

TEST(CudaMatmulPlan, FoldsBatchIntoRowsForASharedWeight) {
  GemmProblem p;
  p.batch = {3};
  p.a = {{35}, 5, 7, 7, 1};  // contiguous [3, 5, 7]
  p.b = {{0}, 7, 4, 4, 1};   // [7, 4] shared
  p.d = {{20}, 5, 4, 4, 1};
  const GemmPlan plan = plan_gemm(p);
  EXPECT_TRUE(plan.folded);
  EXPECT_TRUE(plan.swapped);
  EXPECT_EQ(plan.m, 4);
  EXPECT_EQ(plan.n, 15);
  EXPECT_EQ(plan.k, 7);
  EXPECT_EQ(plan.batch_count, 1);
  EXPECT_EQ(plan.outer_calls(), 1);
  EXPECT_FALSE(plan.first.transpose);
  EXPECT_EQ(plan.first.ld, 4);
  EXPECT_EQ(plan.scratch_bytes, 0u);
}

TEST(CudaMatmulPlan, EveryCaseMatchesTheCpuBackend) {
  std::mt19937 gen(99);
  CaseLog log;
  const DType dtypes[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                          DType::kBFloat16, DType::kInt32,   DType::kInt64,
                          DType::kUInt8,    DType::kInt16,   DType::kInt8};
  int variant = 0;
  for (const MatmulCase& mc : matmul_cases()) {
    for (DType dt : dtypes) {
      const bool refuse_bias = variant++ % 2 == 1;
      if (decomposed_before_backends(kind_target(mc.kind))) continue;
      const MatmulInputs in = make_matmul_inputs(mc, dt, gen);
      std::string error;
      const std::vector<Tensor> want = cpu_reference(kind_target(mc.kind), in.args, &error);
      const std::string label = case_label(mc, dt) + (refuse_bias ? " (no epilogue)" : "");
      if (!error.empty()) {
        log.record(label, error);
        continue;
      }
      const Tensor got = make_output(dt, want[0].sizes(), mc.strided_out && want[0].dim() > 0);
      MatmulArgs args;
      args.kind = mc.kind;
      args.a = host_view(in.a);
      args.b = host_view(in.b);
      DeviceTensor c;
      if (in.c) {
        c = host_view(*in.c);
        args.c = &c;
      }
      args.alpha = is_floating(dt) ? mc.alpha : std::trunc(mc.alpha);
      args.beta = is_floating(dt) ? mc.beta : std::trunc(mc.beta);
      args.out = host_view(got);
      auto exec = describe_matmul(kind_target(mc.kind), args);
      if (!exec.ok()) {
        log.record(label, "describe: " + exec.error().message());
        continue;
      }
      std::vector<double> scratch_mem(exec->plan.scratch_bytes / 8 + 1);
      const KernelScratch scratch{scratch_mem.data(), scratch_mem.size() * 8};
      HostGemmSteps steps(refuse_bias);
      auto r = execute_matmul(*exec, scratch, steps);
      if (!r.ok()) {
        log.record(label, "execute: " + r.error().message());
        continue;
      }
      std::string problem = compare(got, want[0], matmul_tolerance(dt, case_k(mc)));
      const std::string outside = check_outside_untouched(got);
      if (!outside.empty()) problem += " " + outside;
      log.record(label, problem);
    }
  }
  std::printf("[ summary  ] %s\n", log.summary().c_str());
}

TEST(CudaMatmulPlan, ErrorsNameTheShapes) {
  std::mt19937 gen(5);
  const Tensor a = random_tensor(DType::kFloat32, {3, 4}, Layout::kContiguous, gen);
  const Tensor b = random_tensor(DType::kFloat32, {5, 2}, Layout::kContiguous, gen);
  const Tensor out = make_output(DType::kFloat32, {3, 2}, false);
  MatmulArgs args;
  args.kind = MatmulKind::kMm;
  args.a = host_view(a);
  args.b = host_view(b);
  args.out = host_view(out);
  auto e = describe_matmul("mm", args);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind(), ErrorKind::kShapeMismatch);
  EXPECT_EQ(e.error().message(), "mm: shapes [3, 4] and [5, 2] cannot be multiplied (4 != 5)");
  const Tensor bb = random_tensor(DType::kBool, {4, 2}, Layout::kContiguous, gen);
  const Tensor ab = random_tensor(DType::kBool, {3, 4}, Layout::kContiguous, gen);
  args.a = host_view(ab);
  args.b = host_view(bb);
  const Tensor outb = make_output(DType::kBool, {3, 2}, false);
  args.out = host_view(outb);
  e = describe_matmul("mm", args);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message(), "mm: not implemented for bool tensors");
  const Tensor b2 = random_tensor(DType::kFloat32, {4, 2}, Layout::kContiguous, gen);
  const Tensor wrong = make_output(DType::kFloat32, {2, 3}, false);
  args.a = host_view(a);
  args.b = host_view(b2);
  args.out = host_view(wrong);
  e = describe_matmul("mm", args);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message(), "mm: the output has shape [2, 3], expected [3, 2]");
  // A sliced operand needs scratch: too little is an error naming the bytes.
  const Tensor s = random_tensor(DType::kFloat32, {4, 2}, Layout::kSliced, gen);
  const Tensor o2 = make_output(DType::kFloat32, {3, 2}, false);
  args.b = host_view(s);
  args.out = host_view(o2);
  auto exec = describe_matmul("mm", args);
  ASSERT_TRUE(exec.ok());
  EXPECT_GT(exec->plan.scratch_bytes, 0u);
  HostGemmSteps steps(false);
  auto r = execute_matmul(*exec, KernelScratch{}, steps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kBackend);
  EXPECT_NE(r.error().message().find("needs 256 bytes of scratch"), std::string::npos)
      << r.error().message();
}

}  // namespace
}  // namespace splice::cuda
