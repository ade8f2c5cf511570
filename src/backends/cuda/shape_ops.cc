// Host side of the shape-rearranging copies: the CPU kernels' checks and output shapes, then
// one remap launch (remap_kernel.h) with each dim's mapping.
#include "backends/cuda/shape_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/common/args.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_info.h"
#include "backends/cuda/remap_kernel.h"
#include "support/checked_math.h"
#include "tensor/indexing.h"

namespace splice::cuda {

namespace {

Shape sizes_of(const DeviceTensor& t) { return Shape(t.sizes.begin(), t.sizes.begin() + t.rank); }

Result<void> check_out(std::string_view op, const DeviceTensor& out, DType dtype,
                       const Shape& sizes) {
  SPLICE_CHECK_OR_RETURN(out.dtype == dtype && sizes_of(out) == sizes, ErrorKind::kShapeMismatch,
                         "{}: the output is {}{} but the result is {}{}", op, dtype_name(out.dtype),
                         shape_string(sizes_of(out)), dtype_name(dtype), shape_string(sizes));
  SPLICE_CHECK_OR_RETURN(static_cast<int>(sizes.size()) <= kMaxDims, ErrorKind::kUnsupportedOp,
                         "{}: {} dims exceed the {} CUDA kernels take", op, sizes.size(), kMaxDims);
  return ok_result();
}

// Largest |offset| a view of `sizes` with `strides` reaches.
int64_t reach(const int64_t* sizes, const int64_t* strides, int rank) {
  int64_t r = 0;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return 0;
    r += (sizes[d] - 1) * (strides[d] < 0 ? -strides[d] : strides[d]);
  }
  return r;
}

Result<void> run_remap(RemapParams& p, const DeviceTensor& out, const DeviceTensor& src,
                       const LaunchContext& ctx) {
  int64_t numel = 1;
  for (int d = 0; d < p.rank; ++d) numel *= p.dims[d].out_size;
  if (numel == 0) return ok_result();
  p.numel = numel;
  p.out = out.data;
  p.src = src.data;
  p.error_word = ctx.error_word;
  int64_t out_sizes[kMaxDims], out_strides[kMaxDims], src_sizes[kMaxDims], src_strides[kMaxDims];
  const int src_rank = p.flat != 0 ? p.src_rank : p.rank;
  for (int d = 0; d < kMaxDims; ++d) {
    out_sizes[d] = p.dims[d].out_size;
    out_strides[d] = p.dims[d].out_stride;
    src_sizes[d] = p.dims[d].src_size;
    src_strides[d] = p.dims[d].src_stride;
  }
  // Padded coordinates reach below 0 and past n before being mapped: bound them generously.
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max() / 4;
  const bool index32 = numel < kLimit && reach(out_sizes, out_strides, p.rank) < kLimit &&
                       reach(src_sizes, src_strides, src_rank) < kLimit &&
                       std::max(numel, p.src_numel) < kLimit;
  SPLICE_ASSIGN_OR_RETURN(DeviceInfo device, current_device_info());
  SPLICE_CUDA_CHECK(
      launch_remap(p, dtype_size(out.dtype), index32, grid_blocks(numel, 256, device), ctx.stream));
  return ok_result();
}

// A per-dim remap of self into out (same rank), every dim kIdentity.
RemapParams identity_remap(const DeviceTensor& out, const DeviceTensor& self) {
  RemapParams p;
  p.rank = out.rank;
  for (int d = 0; d < out.rank; ++d) {
    p.dims[d].out_size = out.sizes[d];
    p.dims[d].out_stride = out.strides[d];
    p.dims[d].src_size = self.sizes[d];
    p.dims[d].src_stride = self.strides[d];
  }
  return p;
}

Result<void> check_self(std::string_view op, const DeviceTensor& self) {
  SPLICE_CHECK_OR_RETURN(self.rank <= kMaxDims, ErrorKind::kUnsupportedOp,
                         "{}: {} dims exceed the {} CUDA kernels take", op, self.rank, kMaxDims);
  return ok_result();
}

}  // namespace

Result<void> flip(const DeviceTensor& out, const DeviceTensor& self, std::span<const int64_t> dims,
                  const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.flip.default";
  SPLICE_TRY(check_self(op, self));
  std::vector<bool> flipped(self.rank, false);
  for (int64_t d : dims) {
    SPLICE_ASSIGN_OR_RETURN(int64_t w, wrap_dim(op, d, self.rank));
    if (self.rank == 0) continue;
    KCHECK(!flipped[w], ErrorKind::kBadInput, "dim {} appears multiple times in the list of dims",
           w);
    flipped[w] = true;
  }
  SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(self)));
  RemapParams p = identity_remap(out, self);
  for (int d = 0; d < self.rank; ++d)
    if (flipped[d]) p.dims[d].map = static_cast<int32_t>(DimMap::kFlip);
  return run_remap(p, out, self, ctx);
}

Result<void> roll(const DeviceTensor& out, const DeviceTensor& self,
                  std::span<const int64_t> shifts, std::span<const int64_t> dims,
                  const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.roll.default";
  SPLICE_TRY(check_self(op, self));
  if (dims.empty()) {
    KCHECK(shifts.size() == 1, ErrorKind::kShapeMismatch,
           "shifts {} must have one entry when dims is empty",
           shape_string(Shape(shifts.begin(), shifts.end())));
    SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(self)));
    RemapParams p = identity_remap(out, self);
    const int64_t n = self.numel();
    p.flat = static_cast<int32_t>(FlatMap::kRoll);
    p.src_rank = self.rank;
    p.src_numel = n;
    p.flat_arg = n == 0 ? 0 : ((shifts[0] % n) + n) % n;
    return run_remap(p, out, self, ctx);
  }
  KCHECK(shifts.size() == dims.size(), ErrorKind::kShapeMismatch,
         "shifts and dimensions must align, got shifts {} and dims {}",
         shape_string(Shape(shifts.begin(), shifts.end())),
         shape_string(Shape(dims.begin(), dims.end())));
  KCHECK(self.rank > 0, ErrorKind::kShapeMismatch, "cannot roll a 0-d tensor along a dim");
  std::vector<int64_t> total(self.rank, 0);
  std::vector<bool> rolled(self.rank, false);
  for (size_t k = 0; k < dims.size(); ++k) {
    SPLICE_ASSIGN_OR_RETURN(int64_t d, wrap_dim(op, dims[k], self.rank));
    const int64_t n = self.sizes[d];
    // Rolling a dim twice adds the shifts (the CPU rolls one dim after the other).
    if (n > 0) total[d] = (total[d] + ((shifts[k] % n) + n) % n) % n;
    rolled[d] = true;
  }
  SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(self)));
  RemapParams p = identity_remap(out, self);
  for (int d = 0; d < self.rank; ++d) {
    if (!rolled[d]) continue;
    p.dims[d].map = static_cast<int32_t>(DimMap::kRoll);
    p.dims[d].arg = total[d];
  }
  return run_remap(p, out, self, ctx);
}

Result<void> repeat(const DeviceTensor& out, const DeviceTensor& self,
                    std::span<const int64_t> repeats, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.repeat.default";
  SPLICE_TRY(check_self(op, self));
  const int64_t rank = static_cast<int64_t>(repeats.size());
  KCHECK(rank >= self.rank, ErrorKind::kShapeMismatch,
         "number of repeat dims ({}) can not be smaller than the tensor's dims ({})", rank,
         self.rank);
  const int64_t lead = rank - self.rank;
  Shape out_shape(rank);
  RemapParams p;
  p.rank = static_cast<int32_t>(rank);
  for (int64_t d = 0; d < rank; ++d) {
    KCHECK(repeats[d] >= 0, ErrorKind::kShapeMismatch, "repeats {} has a negative entry",
           shape_string(Shape(repeats.begin(), repeats.end())));
    const int64_t size = d < lead ? 1 : self.sizes[d - lead];
    auto n = checked_mul(size, repeats[d]);
    KCHECK(n.has_value(), ErrorKind::kShapeMismatch, "repeating sizes {} by {} overflows",
           shape_string(sizes_of(self)), shape_string(Shape(repeats.begin(), repeats.end())));
    out_shape[d] = *n;
    p.dims[d].map = static_cast<int32_t>(DimMap::kModulo);
    p.dims[d].src_size = size;
    p.dims[d].src_stride = d < lead ? 0 : self.strides[d - lead];
  }
  SPLICE_TRY(check_out(op, out, self.dtype, out_shape));
  for (int64_t d = 0; d < rank; ++d) {
    p.dims[d].out_size = out.sizes[d];
    p.dims[d].out_stride = out.strides[d];
  }
  return run_remap(p, out, self, ctx);
}

Result<void> repeat_interleave(const DeviceTensor& out, const DeviceTensor& self, int64_t repeats,
                               std::optional<int64_t> dim_opt, const LaunchContext& ctx) {
  constexpr std::string_view op = "aten.repeat_interleave.self_int";
  SPLICE_TRY(check_self(op, self));
  KCHECK(repeats >= 0, ErrorKind::kBadInput, "repeats can not be negative, got {}", repeats);
  if (!dim_opt) {
    const int64_t n = self.numel();
    auto total = checked_mul(n, repeats);
    KCHECK(total.has_value(), ErrorKind::kShapeMismatch, "repeating size {} by {} overflows", n,
           repeats);
    SPLICE_TRY(check_out(op, out, self.dtype, {*total}));
    RemapParams p;
    p.rank = 1;
    p.dims[0].out_size = out.sizes[0];
    p.dims[0].out_stride = out.strides[0];
    p.flat = static_cast<int32_t>(FlatMap::kDivide);
    p.flat_arg = repeats;
    p.src_rank = self.rank;
    p.src_numel = n;
    for (int d = 0; d < self.rank; ++d) {
      p.dims[d].src_size = self.sizes[d];
      p.dims[d].src_stride = self.strides[d];
    }
    return run_remap(p, out, self, ctx);
  }
  SPLICE_ASSIGN_OR_RETURN(int64_t dim, wrap_dim(op, *dim_opt, self.rank));
  if (self.rank == 0) {
    KCHECK(repeats == 1, ErrorKind::kShapeMismatch,
           "a 0-d tensor can only be repeated once along a dim, got repeats={}", repeats);
    SPLICE_TRY(check_out(op, out, self.dtype, {}));
    RemapParams p;
    return run_remap(p, out, self, ctx);
  }
  auto n = checked_mul(self.sizes[dim], repeats);
  KCHECK(n.has_value(), ErrorKind::kShapeMismatch, "repeating size {} by {} overflows",
         self.sizes[dim], repeats);
  Shape out_shape = sizes_of(self);
  out_shape[dim] = *n;
  SPLICE_TRY(check_out(op, out, self.dtype, out_shape));
  RemapParams p = identity_remap(out, self);
  p.dims[dim].map = static_cast<int32_t>(DimMap::kDivide);
  p.dims[dim].arg = repeats;
  return run_remap(p, out, self, ctx);
}

Result<void> tril_triu(const DeviceTensor& out, const DeviceTensor& self, int64_t diagonal,
                       bool lower, const LaunchContext& ctx) {
  const std::string_view op = lower ? "aten.tril.default" : "aten.triu.default";
  SPLICE_TRY(check_self(op, self));
  KCHECK(self.rank >= 2, ErrorKind::kShapeMismatch,
         "input tensor must have at least 2 dimensions, got {}", self.rank);
  SPLICE_TRY(check_out(op, out, self.dtype, sizes_of(self)));
  RemapParams p = identity_remap(out, self);
  p.tri = lower ? 1 : 2;
  p.diagonal = diagonal;
  return run_remap(p, out, self, ctx);
}

Result<PadMode> pad_mode(std::string_view op, std::string_view name) {
  if (name == "constant") return PadMode::kConstant;
  if (name == "reflect") return PadMode::kReflect;
  if (name == "replicate") return PadMode::kReplicate;
  if (name == "circular") return PadMode::kCircular;
  return make_error(ErrorKind::kUnsupportedOp,
                    "{}: padding mode '{}' is not supported (constant, reflect, replicate, "
                    "circular are)",
                    op, name);
}

Result<void> pad(std::string_view op, const DeviceTensor& out, const DeviceTensor& self,
                 std::span<const int64_t> pads, PadMode mode, const Scalar& value,
                 const LaunchContext& ctx) {
  SPLICE_TRY(check_self(op, self));
  const int64_t rank = self.rank;
  const int64_t npad = static_cast<int64_t>(pads.size());
  const bool nd = op == "aten.constant_pad_nd.default";
  static constexpr const char* kModeNames[] = {"constant", "reflect", "replicate", "circular"};
  const char* name = kModeNames[static_cast<int>(mode)];
  // The checks (and messages) of cpu::pad_constant for constant_pad_nd, of cpu::pad_all_modes
  // for aten.pad.
  if (nd) {
    KCHECK(npad % 2 == 0, ErrorKind::kShapeMismatch,
           "length of pad must be even but instead it equals {}", npad);
    KCHECK(npad / 2 <= rank, ErrorKind::kShapeMismatch,
           "length of pad should be no more than twice the number of dimensions of the input "
           "({}), got {}",
           rank, npad);
  } else {
    KCHECK(npad % 2 == 0, ErrorKind::kShapeMismatch, "padding length {} must be divisible by 2",
           npad);
    KCHECK(npad / 2 <= rank, ErrorKind::kShapeMismatch,
           "padding length {} is more than two times the input dimension {}", npad, rank);
    if (mode != PadMode::kConstant) {
      KCHECK(value.to_double() == 0.0, ErrorKind::kBadInput,
             "padding mode \"{}\" doesn't take in value argument", name);
      const int64_t pdims = npad / 2;
      KCHECK(pdims >= 1 && pdims <= 3 && (rank == pdims + 1 || rank == pdims + 2),
             ErrorKind::kShapeMismatch,
             "padding size {} is not supported for {}D input in mode \"{}\" (2 pads 2D/3D "
             "input, 4 pads 3D/4D, 6 pads 4D/5D)",
             npad, rank, name);
    }
  }
  Shape out_shape = sizes_of(self);
  RemapParams p = identity_remap(out, self);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = rank - 1 - d;
    if (2 * k >= npad) continue;
    const int64_t n = self.sizes[d], before = pads[2 * k], after = pads[2 * k + 1];
    if (!nd && mode != PadMode::kConstant) {
      KCHECK(before >= 0 && after >= 0, ErrorKind::kUnsupportedOp,
             "negative padding ({}, {}) at dim {} is only supported in constant mode", before,
             after, d);
      if (mode == PadMode::kReflect) {
        KCHECK(before < n && after < n, ErrorKind::kShapeMismatch,
               "padding size should be less than the corresponding input dimension, but got "
               "padding ({}, {}) at dimension {} of input {}",
               before, after, d, shape_string(sizes_of(self)));
      } else if (mode == PadMode::kCircular) {
        KCHECK(before <= n && after <= n, ErrorKind::kShapeMismatch,
               "padding value causes wrapping around more than once (padding ({}, {}) at "
               "dimension {} of size {})",
               before, after, d, n);
      } else {
        KCHECK(n > 0, ErrorKind::kShapeMismatch, "cannot replicate-pad dim {} of size 0", d);
      }
    }
    auto size = checked_add(n, before);
    if (size) size = checked_add(*size, after);
    if (nd) {
      KCHECK(size.has_value() && *size >= 0, ErrorKind::kShapeMismatch,
             "the input size {} at dim {}, plus padding {} and {}, resulted in a negative output "
             "size",
             n, d, before, after);
    } else {
      KCHECK(size.has_value() && *size >= 0, ErrorKind::kShapeMismatch,
             "the input size {}, plus padding {} and {} at dim {}, gives a negative or too large "
             "output size",
             n, before, after, d);
    }
    out_shape[d] = *size;
    static constexpr DimMap kMaps[] = {DimMap::kPadConstant, DimMap::kPadReflect,
                                       DimMap::kPadReplicate, DimMap::kPadCircular};
    p.dims[d].map = static_cast<int32_t>(kMaps[static_cast<int>(mode)]);
    p.dims[d].arg = before;
  }
  SPLICE_TRY(check_out(op, out, self.dtype, out_shape));
  for (int64_t d = 0; d < rank; ++d) p.dims[d].out_size = out.sizes[d];
  if (mode == PadMode::kConstant) {
    SPLICE_ASSIGN_OR_RETURN(const Tensor v, backend::scalar_to_tensor(value, self.dtype));
    std::memcpy(&p.fill, v.raw_data(), dtype_size(self.dtype));
  }
  return run_remap(p, out, self, ctx);
}

}  // namespace splice::cuda
