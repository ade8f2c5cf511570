// Matrix products: mm, bmm, addmm, matmul (every rank combination of torch.matmul) and linear.
// float32/float64 go through OpenBLAS (cblas_sgemm / cblas_dgemm, opened by blas_setup.h) on the
// operands' own memory whenever BLAS can address it: each matrix of a batch needs one stride of 1
// and the other at least its extent (a transposed view like k.transpose(-2, -1) or linear's
// weight.T goes as a transposed operand, a slice of wider rows with its leading dimension), and
// batch dims may have any strides (broadcast ones are 0); only other layouts are copied to
// contiguous first. f16/bf16 are widened to float, multiplied by sgemm and rounded once; integer
// types use plain loops with wraparound accumulation (PyTorch's integer GEMM accumulates in the
// element type, which wraps the same way mod 2^n).
#include "backends/cpu/blas_setup.h"

#include <atomic>

#include "backends/cpu/args.h"
#include "backends/cpu/iter.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

// Rows of a product below which it stays on one thread (a block's BLAS call must be big enough
// to pay for waking a worker).
constexpr int64_t kRowsPerBlock = 16;

std::atomic<int64_t> g_operand_copies{0};

// How BLAS reads one [rows, cols] matrix in place: as stored (row-major, leading dimension
// ld) or transposed (its transpose is row-major with leading dimension ld).
struct BlasOperand {
  bool trans = false;
  int64_t ld = 0;
  int64_t row_stride = 0;  // elements from one row of the matrix to the next
};

// The BLAS form of a [rows, cols] matrix with strides (rs, cs), or nullopt when BLAS cannot
// address it (no unit stride, overlapping or negative strides). A dim of size 1 has no stride
// to honour, so it never forces a copy.
std::optional<BlasOperand> blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  if (cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? c : rs;
    if (ld >= c) return BlasOperand{false, ld, rs};
  }
  if (rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? r : cs;
    if (ld >= r) return BlasOperand{true, ld, rs};
  }
  return std::nullopt;
}

// One BLAS product of rows [0, m) of a into c (BLAS itself runs single-threaded: the model's
// pool splits the rows, see blas_rows); c is row-major with leading dimension n.
template <typename T>
void blas_block(int64_t m, int64_t n, int64_t k, const T* a, const BlasOperand& fa, const T* b,
                const BlasOperand& fb, T* c) {
  const auto ta = fa.trans ? CblasTrans : CblasNoTrans;
  const auto tb = fb.trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    blas().sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, fa.ld, b, fb.ld, 0.0f, c, n);
  } else {
    blas().dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, fa.ld, b, fb.ld, 0.0, c, n);
  }
}

// A float/double product over the running model's threads: each takes a block of rows of a
// and c (every output element is one BLAS dot product either way).
template <typename T>
void blas_rows(int64_t m, int64_t n, int64_t k, const T* a, const BlasOperand& fa, const T* b,
               const BlasOperand& fb, T* c) {
  if (!(m && n && k)) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = 0;
    return;
  }
  const int64_t work_per_row = std::max<int64_t>(n * k, 1);
  const int64_t grain = std::max<int64_t>(kRowsPerBlock, kParallelGrain / work_per_row);
  parallel_for(m, grain, [&](int64_t begin, int64_t end) {
    blas_block(end - begin, n, k, a + begin * fa.row_stride, fa, b, fb, c + begin * n);
  });
}

// Offsets (in elements, from the view's own) of every matrix of a [batch..., r, c] view, in
// row-major batch order; broadcast batch dims have stride 0.
std::vector<int64_t> matrix_offsets(const Tensor& t, int64_t count) {
  const int64_t nb = t.dim() - 2;
  std::vector<int64_t> offsets(static_cast<size_t>(count), 0);
  std::vector<int64_t> index(static_cast<size_t>(std::max<int64_t>(nb, 0)), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < count; ++i) {
    offsets[i] = off;
    for (int64_t d = nb - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) {
        off += t.stride(d);
        break;
      }
      off -= t.stride(d) * (index[d] - 1);
      index[d] = 0;
    }
  }
  return offsets;
}

// One [m,k] x [k,n] product; a, b, c are contiguous (c is [m,n], overwritten). With tb, b
// holds the product's right operand transposed: a contiguous [n,k] matrix.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c, bool tb = false) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    blas_rows(m, n, k, a, BlasOperand{false, k, k}, b,
              tb ? BlasOperand{true, k, 1} : BlasOperand{false, n, n}, c);
  } else if constexpr (is_reduced_float_v<T>) {
    std::vector<float> fa(m * k), fb(k * n), fc(m * n);
    for (int64_t i = 0; i < m * k; ++i) fa[i] = static_cast<float>(a[i]);
    for (int64_t i = 0; i < k * n; ++i) fb[i] = static_cast<float>(b[i]);
    gemm<float>(m, n, k, fa.data(), fb.data(), fc.data(), tb);
    for (int64_t i = 0; i < m * n; ++i) c[i] = T(fc[i]);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        uint64_t acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += static_cast<uint64_t>(static_cast<int64_t>(a[i * k + p])) *
                 static_cast<uint64_t>(static_cast<int64_t>(tb ? b[j * k + p] : b[p * n + j]));
        c[i * n + j] = static_cast<T>(acc);
      }
    }
  }
}

// Batched product of a [batch..., m, k] and b [batch..., k, n] (views with the same batch dims,
// of any strides; `batch` matrices each) into a new contiguous [batch, m, n] tensor of
// `out_shape`.
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
  KCHECK(out.is_contiguous(), ErrorKind::kInternal, "the product's output is not contiguous");
  if (a.dtype() == DType::kFloat32 || a.dtype() == DType::kFloat64) {
    // BLAS reads each operand where it lies when it can; otherwise one contiguous copy.
    auto operand = [&](const Tensor& t, int64_t rows, int64_t cols) {
      const int64_t d = t.dim();
      auto form = blas_operand(rows, cols, t.stride(d - 2), t.stride(d - 1));
      if (form) return std::make_pair(t, *form);
      g_operand_copies.fetch_add(1, std::memory_order_relaxed);
      const Tensor c = contiguous_copy(t);
      return std::make_pair(c, *blas_operand(rows, cols, c.stride(d - 2), c.stride(d - 1)));
    };
    // Plain variables, not structured bindings: clang 14 (the sanitizer and fuzz builds) does
    // not let a lambda capture a structured binding.
    const auto operand_a = operand(a, m, k);
    const auto operand_b = operand(b, k, n);
    const Tensor& va = operand_a.first;
    const Tensor& vb = operand_b.first;
    const auto fa = operand_a.second;
    const auto fb = operand_b.second;
    const std::vector<int64_t> oa = matrix_offsets(va, batch), ob = matrix_offsets(vb, batch);
    dispatch_dtype(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        for (int64_t i = 0; i < batch; ++i)
          blas_rows<T>(m, n, k, va.data<T>() + oa[i], fa, vb.data<T>() + ob[i], fb,
                       out.data<T>() + i * m * n);
      }
    });
    return out;
  }
  const Tensor ca = a.is_contiguous() ? a : contiguous_copy(a);
  // A 2-D b that is the transpose of a contiguous [n,k] matrix is read as is.
  const bool tb = !b.is_contiguous() && b.dim() == 2 && b.stride(0) == 1 && b.stride(1) == k;
  const Tensor cb = b.is_contiguous() || tb ? b : contiguous_copy(b);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < batch; ++i)
        gemm<T>(m, n, k, ca.data<T>() + i * m * k, cb.data<T>() + i * k * n,
                out.data<T>() + i * m * n, tb);
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

// addmm's usual form, a linear layer's: beta = alpha = 1 and a float32/float64 bias of one row
// added to every row of the contiguous product, as a plain loop per row that the compiler
// vectorises (the same sums as the general path's x + b, without its per-element branches and
// strided walk). False, doing nothing, for every other form.
bool add_bias_rows(const Tensor& p, const Tensor& bias, const Scalar& beta, const Scalar& alpha) {
  auto is_one = [](const Scalar& s) {
    return s.is_double() ? s.to_double() == 1.0 : s.to_int() == 1;
  };
  if (!is_one(beta) || !is_one(alpha) || p.dim() != 2 || !p.is_contiguous()) return false;
  const int64_t rows = p.size(0), n = p.size(1);
  const bool one_row = bias.dim() >= 1 && bias.size(bias.dim() - 1) == n &&
                       (bias.dim() == 1 || bias.size(0) == 1) &&
                       (n == 1 || bias.stride(bias.dim() - 1) == 1);
  if (!one_row) return false;
  bool done = false;
  dispatch_dtype(p.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* __restrict b = bias.data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        T* __restrict row = p.data<T>() + i * n;
        for (int64_t j = 0; j < n; ++j) row[j] += b[j];
      }
      done = true;
    }
  });
  return done;
}

Result<Outputs> addmm(std::string_view op, std::span<const KernelArg> args) {
  // addmm(self, mat1, mat2, *, beta=1, alpha=1) = beta * self + alpha * (mat1 @ mat2)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor bias, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Scalar beta, a.scalar_or(3, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Scalar alpha, a.scalar_or(4, Scalar(int64_t{1})));
  SPLICE_ASSIGN_OR_RETURN(Outputs prod, mm(op, args.subspan(1, 2)));
  const Tensor& p = prod[0];
  // PyTorch's check: integer results take integer scalars only (a float one read as an
  // integer would throw). A bool product mm has refused already.
  KCHECK(!is_integral(p.dtype()) || (!beta.is_double() && !alpha.is_double()), ErrorKind::kBadInput,
         "for integral input tensors, beta and alpha must not be floating point numbers (got "
         "beta={}, alpha={})",
         beta.to_double(), alpha.to_double());
  KCHECK(bias.dtype() == p.dtype(), ErrorKind::kShapeMismatch,
         "self has dtype {} but the product has {}", dtype_name(bias.dtype()),
         dtype_name(p.dtype()));
  SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, bias.sizes(), p.sizes()));
  KCHECK(shape == p.sizes(), ErrorKind::kShapeMismatch, "self of shape {} does not broadcast to {}",
         shape_string(bias.sizes()), shape_string(p.sizes()));
  if (add_bias_rows(p, bias, beta, alpha)) return Outputs{p};
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

// a [batch..., m, k] as one [rows, k] view when its batch and row dims collapse into one
// strided dim (every non-unit dim steps exactly over the ones inside it), else nullopt.
std::optional<Tensor> fold_rows(const Tensor& a, int64_t rows, int64_t k) {
  const int64_t d = a.dim();
  int64_t row_stride = std::max<int64_t>(k, 1);
  int64_t next = -1;  // the stride the next outer non-unit dim must have
  for (int64_t i = d - 2; i >= 0; --i) {
    if (a.size(i) == 1) continue;
    if (next < 0)
      row_stride = a.stride(i);
    else if (a.stride(i) != next)
      return std::nullopt;
    next = a.stride(i) * a.size(i);
  }
  return a.view_as({rows, k}, {row_stride, a.stride(d - 1)}, a.offset());
}

// torch.matmul for every rank combination: a 1-D left operand is a row [1,k] and a 1-D right
// operand a column [k,1], their unit dim dropped from the result; a 2-D right operand is
// multiplied with the left one's leading dims folded into rows (one GEMM, as PyTorch folds);
// otherwise the batch dims broadcast and each batch is one GEMM.
Result<Tensor> matmul_impl(std::string_view op, const Tensor& x, const Tensor& y) {
  KCHECK(x.dim() >= 1 && y.dim() >= 1, ErrorKind::kShapeMismatch,
         "both arguments need to be at least 1-D, got shapes {} and {}", shape_string(x.sizes()),
         shape_string(y.sizes()));
  const Tensor a =
      x.dim() == 1 ? x.view_as({1, x.size(0)}, {x.size(0) * x.stride(0), x.stride(0)}, x.offset())
                   : x;
  const Tensor b = y.dim() == 1 ? y.view_as({y.size(0), 1}, {y.stride(0), 1}, y.offset()) : y;
  const int64_t m = a.size(a.dim() - 2), k = a.size(a.dim() - 1);
  const int64_t n = b.size(b.dim() - 1);
  KCHECK(b.size(b.dim() - 2) == k, ErrorKind::kShapeMismatch,
         "shapes {} and {} cannot be multiplied ({} != {})", shape_string(x.sizes()),
         shape_string(y.sizes()), k, b.size(b.dim() - 2));
  const Shape a_batch(a.sizes().begin(), a.sizes().end() - 2);
  const Shape b_batch(b.sizes().begin(), b.sizes().end() - 2);
  Shape batch = a_batch;
  if (!b_batch.empty()) {
    SPLICE_ASSIGN_OR_RETURN(batch, broadcast_shapes(op, a_batch, b_batch));
  }
  Shape out_shape = batch;
  if (x.dim() > 1) out_shape.push_back(m);
  if (y.dim() > 1) out_shape.push_back(n);
  Shape rows_shape = batch;
  rows_shape.push_back(m);
  const auto rows_opt = checked_numel(rows_shape);
  KCHECK(rows_opt.has_value(), ErrorKind::kShapeMismatch, "batch shape {} with {} rows overflows",
         shape_string(batch), m);
  const int64_t batch_numel = shape_numel(batch);
  if (b_batch.empty()) {
    const int64_t rows = *rows_opt;
    std::optional<Tensor> folded = fold_rows(a, rows, k);
    if (!folded) {
      g_operand_copies.fetch_add(1, std::memory_order_relaxed);
      folded = fold_rows(contiguous_copy(a), rows, k);
    }
    SPLICE_ASSIGN_OR_RETURN(Tensor out, batched(op, *folded, b, 1, rows, k, n, out_shape));
    return out;
  }
  // Broadcast batch dims are views with stride 0: batched reads each matrix where it lies.
  Shape a_shape = batch, b_shape = batch;
  a_shape.insert(a_shape.end(), {m, k});
  b_shape.insert(b_shape.end(), {k, n});
  return batched(op, broadcast_to(a, a_shape), broadcast_to(b, b_shape), batch_numel, m, k, n,
                 out_shape);
}

Result<Outputs> matmul(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor x, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor y, a.tensor(1));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, matmul_impl(op, x, y));
  return Outputs{out};
}

Result<Outputs> linear(std::string_view op, std::span<const KernelArg> args) {
  // linear(input, weight, bias=None) = input @ weight.T + bias. PyTorch runs it as addmm (bias
  // added inside the GEMM) for contiguous inputs, so 16-bit floats are computed in float and
  // rounded once after the bias, as here.
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(Tensor weight, a.tensor(1));
  std::optional<Tensor> bias;
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(bias, a.tensor(2));
  }
  const DType dtype = input.dtype();
  KCHECK(weight.dim() == 1 || weight.dim() == 2, ErrorKind::kShapeMismatch,
         "weight must be 1-D or 2-D, got shape {}", shape_string(weight.sizes()));
  KCHECK(weight.dtype() == dtype && (!bias || bias->dtype() == dtype), ErrorKind::kShapeMismatch,
         "input ({}), weight ({}) and bias ({}) must have the same dtype", dtype_name(dtype),
         dtype_name(weight.dtype()), bias ? dtype_name(bias->dtype()) : "None");
  const Tensor wt = weight.dim() == 2
                        ? weight.view_as({weight.size(1), weight.size(0)},
                                         {weight.stride(1), weight.stride(0)}, weight.offset())
                        : weight;
  const bool reduced = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  const DType compute = reduced ? DType::kFloat32 : dtype;
  SPLICE_ASSIGN_OR_RETURN(Tensor prod, matmul_impl(op, reduced ? cast_copy(input, compute) : input,
                                                   reduced ? cast_copy(wt, compute) : wt));
  if (bias) {
    SPLICE_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(op, bias->sizes(), prod.sizes()));
    KCHECK(shape == prod.sizes(), ErrorKind::kShapeMismatch,
           "bias of shape {} does not broadcast to the output shape {}",
           shape_string(bias->sizes()), shape_string(prod.sizes()));
    const Tensor b = to_dtype(*bias, compute);
    dispatch_dtype(compute, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) {
        binary_loop<T, T, T>(prod, prod, b, [](T x, T y) { return x + y; });
      } else if constexpr (is_int_v<T>) {
        binary_loop<T, T, T>(prod, prod, b, [](T x, T y) {
          return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(x)) +
                                static_cast<uint64_t>(static_cast<int64_t>(y)));
        });
      }
    });
  }
  return Outputs{reduced ? cast_copy(prod, dtype) : prod};
}

}  // namespace

int64_t matmul_operand_copies() { return g_operand_copies.load(std::memory_order_relaxed); }

std::span<const KernelEntry> matmul_kernels() {
  static constexpr KernelEntry kEntries[] = {
      // Products store into a planned buffer (batched's output_or_new, before any copy of
      // an operand); a strided slice is refused by batched's contiguity check.
      entry<OpId::mm, mm>(kStoresIntoContiguousDestination).accepting(backend::kNonBoolDTypes),
      entry<OpId::bmm, bmm>(kStoresIntoContiguousDestination).accepting(backend::kNonBoolDTypes),
      entry<OpId::addmm, addmm>(kStoresIntoContiguousDestination)
          .accepting(backend::kNonBoolDTypes),
      entry<OpId::matmul, matmul>().accepting(backend::kNonBoolDTypes),
      entry<OpId::linear, linear>().accepting(backend::kNonBoolDTypes),
  };
  return kEntries;
}

}  // namespace splice::cpu
