// Normalisation kernels: _softmax, _log_softmax (and softmax/log_softmax.int with a dtype),
// native_layer_norm and its layer_norm front door, and rms_norm. All compute in float
// (double for float64) and round once into the output dtype, as PyTorch's CPU kernels do for
// f16/bf16. softmax is numerically stable (the row max is subtracted before exp), so a row of
// large values does not overflow; a row that is all -inf gives NaN, as in PyTorch.
// layer_norm uses the biased variance, rstd = 1 / sqrt(max(var, 0) + eps), and returns mean
// and rstd with shape input.shape[:axis] + [1] * len(normalized_shape) in the input's dtype:
// that is what the CPU decomposition that export records gives (eager PyTorch would return
// float32 statistics only for a bf16/f16 input with float32 weight, which export records as
// the input dtype; the runtime checks outputs against the recorded type).
#include <cmath>
#include <limits>

#include "backends/cpu/args.h"
#include "backends/cpu/parallel.h"
#include "backends/cpu/vec_math.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"

namespace splice::cpu {

namespace {

// The compute type of a float dtype: double for float64, float otherwise.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// softmax (or log_softmax) of `rows` contiguous float rows of n elements each, the rows split
// over the pool: the common case (a float32 softmax over the last dim), in vector loops.
template <bool kLog>
void softmax_float_rows(const float* x, float* y, int64_t rows, int64_t n) {
  if (n == 0) return;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / n);
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      // A NaN max makes every exp NaN: the whole row is NaN, as in PyTorch.
      const float max = max_floats(xr, n);
      const double sum = exp_shifted_sum(xr, max, yr, n);
      if constexpr (kLog) {
        const float log_sum = static_cast<float>(std::log(sum));
        for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] - max) - log_sum;
      } else {
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
      }
    }
  });
}

template <bool kLog>
Result<Tensor> softmax_impl(std::string_view op, const Tensor& self, int64_t dim, DType out_dtype) {
  KCHECK(is_floating(self.dtype()), ErrorKind::kBadInput, "expects a floating point tensor, got {}",
         dtype_name(self.dtype()));
  SPLICE_ASSIGN_OR_RETURN(dim, wrap_dim(op, dim, self.dim()));
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, out_dtype, self.sizes()));
  const Tensor in = self.is_contiguous() ? self : contiguous_copy(self);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < dim) outer *= self.size(d);
    if (d == dim) n = self.size(d);
    if (d > dim) inner *= self.size(d);
  }
  if (self.dtype() == DType::kFloat32 && out_dtype == DType::kFloat32 && inner == 1) {
    softmax_float_rows<kLog>(in.data<float>(), out.data<float>(), outer, n);
    return out;
  }
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      dispatch_dtype(out_dtype, [&](auto out_tag) {
        using O = typename decltype(out_tag)::type;
        if constexpr (is_float_v<O>) {
          using M = acc_t<T>;
          const T* px = in.data<T>();
          O* po = out.data<O>();
          std::vector<M> row(n);
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
              const int64_t base = o * n * inner + i;
              M max = -std::numeric_limits<M>::infinity();
              for (int64_t j = 0; j < n; ++j) {
                row[j] = static_cast<M>(px[base + j * inner]);
                // A NaN becomes the max and stays (the whole row is NaN, as in PyTorch).
                if (std::isnan(row[j]) || row[j] > max) max = row[j];
              }
              M sum = 0;
              for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - max);
              if constexpr (kLog) {
                const M log_sum = std::log(sum);
                for (int64_t j = 0; j < n; ++j)
                  po[base + j * inner] = cast_value<O>(row[j] - max - log_sum);
              } else {
                const M inv = M(1) / sum;
                for (int64_t j = 0; j < n; ++j)
                  po[base + j * inner] = cast_value<O>(std::exp(row[j] - max) * inv);
              }
            }
          }
        }
      });
    }
  });
  return out;
}

template <bool kLog>
Result<Outputs> softmax(std::string_view op, std::span<const KernelArg> args) {
  // _softmax / _log_softmax(self, int dim, bool half_to_float)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(bool half_to_float, a.boolean_or(2, false));
  // half_to_float: the result is float32 (the op's meta function), computed the same way.
  const DType out_dtype = half_to_float ? DType::kFloat32 : self.dtype();
  SPLICE_ASSIGN_OR_RETURN(Tensor out, softmax_impl<kLog>(op, self, dim, out_dtype));
  return Outputs{out};
}

// softmax.int / log_softmax.int(self, int dim, ScalarType? dtype=None): with a dtype the input
// is converted to it first (PyTorch's CPU path), then softmaxed in that dtype.
template <bool kLog>
Result<Outputs> softmax_dtype(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor self, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, a.integer(1));
  SPLICE_ASSIGN_OR_RETURN(auto dtype, a.opt_dtype(2));
  const Tensor in = dtype ? to_dtype(self, *dtype) : self;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, softmax_impl<kLog>(op, in, dim, in.dtype()));
  return Outputs{out};
}

Result<Outputs> layer_norm(std::string_view op, std::span<const KernelArg> args) {
  // native_layer_norm(input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps)
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> norm_shape, a.int_list(1));
  std::optional<Tensor> weight, bias;
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(weight, a.tensor(2));
  }
  if (!a.is_none(3)) {
    SPLICE_ASSIGN_OR_RETURN(bias, a.tensor(3));
  }
  SPLICE_ASSIGN_OR_RETURN(Scalar eps_s, a.scalar(4));
  const double eps = eps_s.to_double();
  const DType dtype = input.dtype();
  KCHECK(is_floating(dtype), ErrorKind::kBadInput, "expects a floating point input, got {}",
         dtype_name(dtype));
  const int64_t nd = static_cast<int64_t>(norm_shape.size());
  KCHECK(nd >= 1, ErrorKind::kShapeMismatch, "normalized_shape must have at least one dim");
  const int64_t axis = input.dim() - nd;
  KCHECK(axis >= 0 && Shape(input.sizes().begin() + axis, input.sizes().end()) == norm_shape,
         ErrorKind::kShapeMismatch, "normalized_shape {} does not match the trailing dims of {}",
         shape_string(norm_shape), shape_string(input.sizes()));
  const bool reduced = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  for (const auto* p : {&weight, &bias}) {
    if (!*p) continue;
    const Tensor& t = **p;
    KCHECK(t.sizes() == norm_shape, ErrorKind::kShapeMismatch,
           "weight/bias of shape {} must have normalized_shape {}", shape_string(t.sizes()),
           shape_string(norm_shape));
    // PyTorch accepts float32 parameters with a 16-bit input (mixed type), else equal dtypes.
    KCHECK(t.dtype() == dtype || (reduced && t.dtype() == DType::kFloat32),
           ErrorKind::kShapeMismatch, "weight/bias dtype {} does not match the input's {}",
           dtype_name(t.dtype()), dtype_name(dtype));
  }
  int64_t rows = 1, cols = 1;
  Shape stat_shape;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d < axis) {
      rows *= input.size(d);
      stat_shape.push_back(input.size(d));
    } else {
      cols *= input.size(d);
      stat_shape.push_back(1);
    }
  }
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor mean_t, new_tensor(op, dtype, stat_shape));
  SPLICE_ASSIGN_OR_RETURN(Tensor rstd_t, new_tensor(op, dtype, stat_shape));
  const Tensor in = input.is_contiguous() ? input : contiguous_copy(input);
  const DType acc_dtype = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  // Parameters already contiguous in the accumulation dtype (the usual case) are read in place.
  auto in_acc = [&](const std::optional<Tensor>& t) -> std::optional<Tensor> {
    if (!t || (t->dtype() == acc_dtype && t->is_contiguous())) return t;
    return cast_copy(*t, acc_dtype);
  };
  const std::optional<Tensor> w = in_acc(weight);
  const std::optional<Tensor> b = in_acc(bias);
  if (dtype == DType::kFloat32) {
    // The common case in vector loops, the rows split over the pool.
    const float* px = in.data<float>();
    float* po = out.data<float>();
    const float* pw = w ? w->data<float>() : nullptr;
    const float* pb = b ? b->data<float>() : nullptr;
    float* pmean = mean_t.data<float>();
    float* prstd = rstd_t.data<float>();
    const float eps_f = static_cast<float>(eps);
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1));
    parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const RowMoments m = layer_norm_row(px + r * cols, po + r * cols, cols, pw, pb, eps_f);
        pmean[r] = m.mean;
        prstd[r] = m.rstd;
      }
    });
    return Outputs{out, mean_t, rstd_t};
  }
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using M = acc_t<T>;
      const T* px = in.data<T>();
      T* po = out.data<T>();
      const M* pw = w ? w->data<M>() : nullptr;
      const M* pb = b ? b->data<M>() : nullptr;
      for (int64_t r = 0; r < rows; ++r) {
        const T* x = px + r * cols;
        // Two passes in double: the mean, then the biased variance around it.
        double s = 0;
        for (int64_t j = 0; j < cols; ++j) s += static_cast<double>(to_opmath(x[j]));
        const double mean_d = s / static_cast<double>(cols);
        double ss = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const double dev = static_cast<double>(to_opmath(x[j])) - mean_d;
          ss += dev * dev;
        }
        const M mean = static_cast<M>(mean_d);
        const M var = static_cast<M>(ss / static_cast<double>(cols));
        const M rstd = M(1) / std::sqrt(std::max(var, M(0)) + static_cast<M>(eps));
        const M shift = -rstd * mean;
        for (int64_t j = 0; j < cols; ++j) {
          M y = static_cast<M>(to_opmath(x[j])) * rstd + shift;
          if (pw) y *= pw[j];
          if (pb) y += pb[j];
          po[r * cols + j] = cast_value<T>(y);
        }
        mean_t.data<T>()[r] = cast_value<T>(mean);
        rstd_t.data<T>()[r] = cast_value<T>(rstd);
      }
    }
  });
  return Outputs{out, mean_t, rstd_t};
}

// layer_norm.default(input, normalized_shape, weight=None, bias=None, float eps=1e-05,
// bool cudnn_enable=True): native_layer_norm's first output.
Result<Outputs> layer_norm_front(std::string_view op, std::span<const KernelArg> args) {
  KCHECK(args.size() >= 5, ErrorKind::kBadInput, "expects 5 or 6 arguments, got {}", args.size());
  SPLICE_ASSIGN_OR_RETURN(Outputs all, layer_norm(op, args.first(5)));
  return Outputs{all[0]};
}

// rms_norm(input, normalized_shape, Tensor? weight=None, float? eps=None): x * rsqrt(mean(x^2)
// + eps) over the trailing normalized_shape dims, times weight, computed in float (double for
// float64) and rounded once, as torch 2.11's fused CPU kernel does; eps None is the epsilon
// of that compute type (float's for f16/bf16, not the 16-bit type's).
// _fused_rms_norm(input, int[] normalized_shape, Tensor? weight, float? eps) -> (output, rstd)
// (what a CUDA export records) also returns rstd, in the compute type, shaped like input with
// the normalized dims set to 1.
template <bool kWithRstd>
Result<Outputs> rms_norm(std::string_view op, std::span<const KernelArg> args) {
  Args a(op, args);
  SPLICE_ASSIGN_OR_RETURN(Tensor input, a.tensor(0));
  SPLICE_ASSIGN_OR_RETURN(std::vector<int64_t> norm_shape, a.int_list(1));
  std::optional<Tensor> weight;
  if (!a.is_none(2)) {
    SPLICE_ASSIGN_OR_RETURN(weight, a.tensor(2));
  }
  std::optional<double> eps;
  if (!a.is_none(3)) {
    SPLICE_ASSIGN_OR_RETURN(Scalar e, a.scalar(3));
    eps = e.to_double();
  }
  const DType dtype = input.dtype();
  KCHECK(is_floating(dtype), ErrorKind::kBadInput, "expects a floating point input, got {}",
         dtype_name(dtype));
  const int64_t nd = static_cast<int64_t>(norm_shape.size());
  const int64_t axis = input.dim() - nd;
  KCHECK(nd >= 1 && axis >= 0 &&
             Shape(input.sizes().begin() + axis, input.sizes().end()) == norm_shape,
         ErrorKind::kShapeMismatch, "normalized_shape {} does not match the trailing dims of {}",
         shape_string(norm_shape), shape_string(input.sizes()));
  KCHECK(!weight || weight->sizes() == norm_shape, ErrorKind::kShapeMismatch,
         "weight of shape {} must have normalized_shape {}",
         shape_string(weight ? weight->sizes() : Shape{}), shape_string(norm_shape));
  int64_t rows = 1, cols = 1;
  Shape rstd_shape = input.sizes();
  for (int64_t d = 0; d < input.dim(); ++d) {
    (d < axis ? rows : cols) *= input.size(d);
    if (d >= axis) rstd_shape[d] = 1;
  }
  const DType acc_dtype = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  SPLICE_ASSIGN_OR_RETURN(Tensor out, new_tensor(op, dtype, input.sizes()));
  SPLICE_ASSIGN_OR_RETURN(Tensor rstd_t, new_tensor(op, acc_dtype, rstd_shape));
  const Tensor in = input.is_contiguous() ? input : contiguous_copy(input);
  const std::optional<Tensor> w = weight ? std::optional(cast_copy(*weight, acc_dtype)) : weight;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      using M = acc_t<T>;
      const M e = eps ? static_cast<M>(*eps) : std::numeric_limits<M>::epsilon();
      const T* px = in.data<T>();
      T* po = out.data<T>();
      const M* pw = w ? w->data<M>() : nullptr;
      for (int64_t r = 0; r < rows; ++r) {
        const T* x = px + r * cols;
        double ss = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const double v = static_cast<double>(to_opmath(x[j]));
          ss += v * v;
        }
        const M rstd = M(1) / std::sqrt(static_cast<M>(ss / static_cast<double>(cols)) + e);
        rstd_t.data<M>()[r] = rstd;
        for (int64_t j = 0; j < cols; ++j) {
          M y = static_cast<M>(to_opmath(x[j])) * rstd;
          if (pw) y *= pw[j];
          po[r * cols + j] = cast_value<T>(y);
        }
      }
    }
  });
  if constexpr (kWithRstd) return Outputs{out, rstd_t};
  return Outputs{out};
}

}  // namespace

std::span<const KernelEntry> nn_kernels() {
  static constexpr KernelEntry kEntries[] = {
      entry<OpId::_softmax, softmax<false>>(kStoresIntoContiguousDestination)
          .accepting(DTypeSet::floating()),
      entry<OpId::_log_softmax, softmax<true>>(kStoresIntoContiguousDestination)
          .accepting(DTypeSet::floating()),
      entry<OpId::native_layer_norm, layer_norm>().accepting(DTypeSet::floating()),
      entry<OpId::softmax_int, softmax_dtype<false>>(kStoresIntoContiguousDestination),
      entry<OpId::log_softmax_int, softmax_dtype<true>>(kStoresIntoContiguousDestination),
      entry<OpId::layer_norm, layer_norm_front>().accepting(DTypeSet::floating()),
      entry<OpId::rms_norm, rms_norm<false>>().accepting(DTypeSet::floating()),
      entry<OpId::_fused_rms_norm, rms_norm<true>>().accepting(DTypeSet::floating()),
  };
  return kEntries;
}

}  // namespace splice::cpu
