// Matrix products: mm, bmm and addmm. float32/float64 go through OpenBLAS (cblas_sgemm /
// cblas_dgemm) on contiguous copies; f16/bf16 are widened to float, multiplied by sgemm and
// rounded once; integer types use plain loops with wraparound accumulation (PyTorch's integer
// GEMM accumulates in the element type, which wraps the same way mod 2^n).
#include <cblas.h>

#include "backends/cpu/args.h"
#include "backends/cpu/cast.h"
#include "backends/cpu/dispatch.h"
#include "backends/cpu/iter.h"

namespace splice::cpu {

namespace {

// One [m,k] x [k,n] product; a, b, c are contiguous (c is [m,n], overwritten).
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>) {
    if (m && n && k)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    else
      for (int64_t i = 0; i < m * n; ++i) c[i] = 0;
  } else if constexpr (std::is_same_v<T, double>) {
    if (m && n && k)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
    else
      for (int64_t i = 0; i < m * n; ++i) c[i] = 0;
  } else if constexpr (is_reduced_float_v<T>) {
    std::vector<float> fa(m * k), fb(k * n), fc(m * n);
    for (int64_t i = 0; i < m * k; ++i) fa[i] = static_cast<float>(a[i]);
    for (int64_t i = 0; i < k * n; ++i) fb[i] = static_cast<float>(b[i]);
    gemm<float>(m, n, k, fa.data(), fb.data(), fc.data());
    for (int64_t i = 0; i < m * n; ++i) c[i] = T(fc[i]);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        uint64_t acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += static_cast<uint64_t>(static_cast<int64_t>(a[i * k + p])) *
                 static_cast<uint64_t>(static_cast<int64_t>(b[p * n + j]));
        c[i * n + j] = static_cast<T>(acc);
      }
    }
  }
}

// Batched product of contiguous [batch,m,k] and [batch,k,n] into a new [batch,m,n] tensor.
Result<Tensor> batched(std::string_view op, const Tensor& a, const Tensor& b, int64_t batch,
                       int64_t m, int64_t k, int64_t n, Shape out_shape) {
  KCHECK(a.dtype() == b.dtype(), ErrorKind::kShapeMismatch,
         "expected both operands to have the same dtype, got {} and {}", dtype_name(a.dtype()),
         dtype_name(b.dtype()));
  KCHECK(a.dtype() != DType::kBool, ErrorKind::kBadInput, "not implemented for bool tensors");
  constexpr int64_t kBlasMax = 2147483647;  // OpenBLAS's blasint is 32-bit here
  KCHECK(m <= kBlasMax && n <= kBlasMax && k <= kBlasMax, ErrorKind::kShapeMismatch,
         "matrix dims {}x{}x{} exceed the BLAS limit", m, k, n);
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, a.dtype(), out_shape));
  const Tensor ca = a.is_contiguous() ? a : a.contiguous_copy();
  const Tensor cb = b.is_contiguous() ? b : b.contiguous_copy();
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < batch; ++i)
        gemm<T>(m, n, k, ca.data<T>() + i * m * k, cb.data<T>() + i * k * n,
                out.data<T>() + i * m * n);
    }
  });
  return out;
}

Result<Outputs> mm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor x, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor y, a.tensor(1));
  KCHECK(x.dim() == 2 && y.dim() == 2, ErrorKind::kShapeMismatch,
         "expects 2-D tensors, got shapes {} and {}", shape_string(x.sizes()),
         shape_string(y.sizes()));
  KCHECK(x.size(1) == y.size(0), ErrorKind::kShapeMismatch, "shapes {} and {} cannot be multiplied",
         shape_string(x.sizes()), shape_string(y.sizes()));
  SPLICE_ASSIGN_OR_RETURN(
      Tensor out, batched(op, x, y, 1, x.size(0), x.size(1), y.size(1), {x.size(0), y.size(1)}));
  return Outputs{out};
}

Result<Outputs> bmm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor x, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor y, a.tensor(1));
  KCHECK(x.dim() == 3 && y.dim() == 3, ErrorKind::kShapeMismatch,
         "expects 3-D tensors, got shapes {} and {}", shape_string(x.sizes()),
         shape_string(y.sizes()));
  KCHECK(x.size(0) == y.size(0) && x.size(2) == y.size(1), ErrorKind::kShapeMismatch,
         "shapes {} and {} cannot be batch-multiplied", shape_string(x.sizes()),
         shape_string(y.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, batched(op, x, y, x.size(0), x.size(1), x.size(2), y.size(2),
                                              {x.size(0), x.size(1), y.size(2)}));
  return Outputs{out};
}

Result<Outputs> addmm(std::string_view op, std::span<const KernelArg> args) {
  // addmm(self, mat1, mat2, *, beta=1, alpha=1) = beta * self + alpha * (mat1 @ mat2)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor bias, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar beta, a.scalar_or(3, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(4, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Outputs prod, mm(op, args.subspan(1, 2)));
  const Tensor& p = prod[0];
  KCHECK(bias.dtype() == p.dtype(), ErrorKind::kShapeMismatch,
         "self has dtype {} but the product has {}", dtype_name(bias.dtype()),
         dtype_name(p.dtype()));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, bias.sizes(), p.sizes()));
  KCHECK(shape == p.sizes(), ErrorKind::kShapeMismatch, "self of shape {} does not broadcast to {}",
         shape_string(bias.sizes()), shape_string(p.sizes()));
  dispatch_dtype(p.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using M = opmath_t<T>;
      const M be = static_cast<M>(beta.to_double()), al = static_cast<M>(alpha.to_double());
      binary_loop<T, T, T>(p, p, bias, [&](T x, T b) -> T {
        const M prod_term = al == M(1) ? to_opmath(x) : al * to_opmath(x);
        if (be == M(0)) return from_opmath<T>(prod_term);  // beta=0 ignores self (even NaN)
        return from_opmath<T>(prod_term + (be == M(1) ? to_opmath(b) : be * to_opmath(b)));
      });
    } else if constexpr (!std::is_same_v<T, bool>) {
      const uint64_t be = static_cast<uint64_t>(beta.to_int()),
                     al = static_cast<uint64_t>(alpha.to_int());
      binary_loop<T, T, T>(p, p, bias, [&](T x, T b) -> T {
        return static_cast<T>(al * static_cast<uint64_t>(static_cast<int64_t>(x)) +
                              be * static_cast<uint64_t>(static_cast<int64_t>(b)));
      });
    }
  });
  return Outputs{p};
}

}  // namespace

std::span<const KernelEntry> matmul_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<"aten.mm.default", mm>(),
      entry<"aten.bmm.default", bmm>(),
      entry<"aten.addmm.default", addmm>(),
  };
  return kEntries;
}

}  // namespace splice::cpu
