#pragma once
// Normalisation launchers: layer norm, RMS norm and group norm, matching the CPU backend
// (cpu/nn.cc, composite_math.cc) and PyTorch. Statistics in float (double for
// float64 inputs) — the CPU uses double — and each output rounded once; 16-bit inputs may have
// float32 weight and bias (PyTorch's mixed-type layer norm). Inputs, outputs, weights and the
// statistics outputs may be any strided views (rank <= 8). A row or group gets a warp (up to
// 1024 elements) or a block; statistics take two passes over it (mean, then the squared
// deviations), then a third writes, so rows of any length work.

#include <cuda_runtime_api.h>

#include <optional>
#include <span>

#include "backends/cuda/device_tensor.h"
#include "support/error.h"

namespace splice::cuda {

// native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd), and
// layer_norm (mean, rstd null). normalized_shape must equal input's trailing dims; weight and
// bias have that shape (input's dtype, or float32 with a 16-bit input). out has input's shape
// and dtype; mean and rstd have input.shape[:axis] + [1] * len(normalized_shape) (dtype as the
// caller allocated them: input's dtype for what export records). rstd = 1 / sqrt(max(var, 0) +
// eps) with the biased variance; y = x * rstd - mean * rstd, times weight, plus bias.
Result<void> layer_norm(const DeviceTensor& input, std::span<const int64_t> normalized_shape,
                        const DeviceTensor* weight, const DeviceTensor* bias, double eps,
                        const DeviceTensor& out, const DeviceTensor* mean, const DeviceTensor* rstd,
                        cudaStream_t stream);

// rms_norm(input, normalized_shape, weight?, eps?) and _fused_rms_norm (-> out, rstd): y = x *
// rsqrt(mean(x^2) + eps) * weight over the trailing normalized dims; eps nullopt is the
// epsilon of the compute type (float's for 16-bit and float32 inputs, double's for float64),
// as torch 2.11's fused kernel does. rstd (null for rms_norm) has input's shape with the
// normalized dims set to 1.
Result<void> rms_norm(const DeviceTensor& input, std::span<const int64_t> normalized_shape,
                      const DeviceTensor* weight, std::optional<double> eps,
                      const DeviceTensor& out, const DeviceTensor* rstd, cudaStream_t stream);

// A planned RMSNorm group (plan/norm_fusion.h, backend::RmsNormCall) as one kernel, over the
// last dim of out's sizes (sum has them too; x, residual and weight broadcast to them as
// PyTorch broadcasts, so the weight may be [H] or the runtime's [1, ..., 1, H] view):
//   a = residual ? round_x(x + residual) : x     stored into sum when given
//   m = round_stat(sum_j round_stat(a_j^2) / H); r = round_stat(1 / sqrt(round_stat(m + eps)))
//   y = round_cast(round_stat(a * r)); out = round_out(weight ? y * weight : y)
// in float (round_stat is nothing for float32 statistics, the upcasting models'); x, residual
// and sum share a dtype; x, out, weight, stat and cast are float16, bfloat16 or float32. One warp
// per row up to 1024 elements, else a block; no allocation, no sync; it writes nothing once
// `error_word` (may be null) records a failed check.
Result<void> fused_rms_norm(const DeviceTensor& x, const DeviceTensor* residual,
                            const DeviceTensor* weight, const DeviceTensor* sum,
                            const DeviceTensor& out, DType stat, DType cast, double eps,
                            const int64_t* error_word, cudaStream_t stream);

// native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd) and
// group_norm (mean, rstd null): input holds N x C x HxW elements in row-major order of its own
// shape ([N, C, *]); weight and bias have C elements; mean and rstd are [N, group].
Result<void> group_norm(const DeviceTensor& input, const DeviceTensor* weight,
                        const DeviceTensor* bias, int64_t n, int64_t c, int64_t hxw, int64_t groups,
                        double eps, const DeviceTensor& out, const DeviceTensor* mean,
                        const DeviceTensor* rstd, cudaStream_t stream);

}  // namespace splice::cuda
