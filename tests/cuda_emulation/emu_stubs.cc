// Host stand-ins for the CUDA runtime calls splice's host code makes (memory is host memory),
// and a host interpreter of the one-node copy programs copy_ops.cc launches.
// Host stand-ins for the CUDA runtime calls splice's host code makes, and a host copy_cast.
#include <cuda_runtime_api.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "backends/common/args.h"
#include "tensor/convert.h"
#include "tensor/dtype_dispatch.h"
extern "C" {
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t) {
  std::memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int v, size_t n) {
  std::memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
  std::memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
  std::memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* c) {
  *c = 1;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMultiProcessorCount ? 2 : 9;
  return cudaSuccess;
}
// device_identity (device_info.cc) names the device; the emulation is "emu" of CUDA 13.0.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int) {
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof(prop->name), "emu");
  prop->major = 9;
  prop->multiProcessorCount = 2;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
const char* cudaGetErrorName(cudaError_t) { return "emu"; }
const char* cudaGetErrorString(cudaError_t) { return "emu"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }
cudaError_t cudaMalloc(void** p, size_t n) {
  if (n > (size_t(1) << 40)) return cudaErrorMemoryAllocation;
  *p = std::aligned_alloc(256, (n + 255) / 256 * 256);
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t n) {
  *p = std::malloc(n);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* p) {
  std::free(p);
  return cudaSuccess;
}
}
#include "backends/cuda/error_word_layout.h"
#include "backends/cuda/pointwise_launch.h"
namespace splice::cuda {
// A host interpreter of the one-node copy programs copy_ops builds (copy of an input or of a
// constant into the output), with device positions.
static Result<void> run_copy(const ir::PointwiseProgram& p,
                             std::span<const PointwiseOperand> inputs,
                             std::span<const PointwiseOperand> outputs, const LaunchContext& ctx) {
  if (p.nodes.size() != 1 || p.nodes[0].fn != ir::PointwiseFn::kCopy) std::abort();
  if (ctx.error_word && ctx.error_word[0]) return ok_result();
  const auto& ref = p.nodes[0].operands[0];
  DeviceTensor dst = outputs[0].view;
  auto apply_pos = [&](const PointwiseOperand& o, DeviceTensor& v) -> bool {
    if (!o.position) return true;
    const int64_t pos = *o.position->position;
    if (pos < 0 || pos > o.position->dim_size - o.position->extent) {
      if (ctx.error_word[0] == 0) {
        ctx.error_word[0] = 2;
        ctx.error_word[1] = ctx.site;
        ctx.error_word[2] = pos;
        ctx.error_word[3] = o.position->dim_size;
        ctx.error_word[4] = o.position->dim;
        ctx.error_word[5] = o.position->extent;
      }
      return false;
    }
    v.data = static_cast<char*>(v.data) + pos * o.position->stride * dtype_size(v.dtype);
    return true;
  };
  if (!apply_pos(outputs[0], dst)) return ok_result();
  DeviceTensor src;
  Tensor holder;
  if (ref.kind == ir::PointwiseRef::Kind::kConstant) {
    holder = backend::scalar_to_tensor(p.constants[ref.index].value, p.constants[ref.index].dtype)
                 .value();
    src.data = holder.raw_data();
    src.dtype = holder.dtype();
    src.rank = 0;
  } else {
    src = inputs[ref.index].view;
    if (!apply_pos(inputs[ref.index], src)) return ok_result();
  }
  const int64_t n = dst.numel();
  const int lead = dst.rank - src.rank;
  dispatch_dtype(dst.dtype, [&](auto dt) {
    using D = typename decltype(dt)::type;
    dispatch_dtype(src.dtype, [&](auto st) {
      using S = typename decltype(st)::type;
      for (int64_t i = 0; i < n; ++i) {
        int64_t rest = i, od = 0, os = 0;
        for (int d = dst.rank - 1; d >= 0; --d) {
          const int64_t c = rest % dst.sizes[d];
          rest /= dst.sizes[d];
          od += c * dst.strides[d];
          if (d >= lead && src.sizes[d - lead] != 1) os += c * src.strides[d - lead];
        }
        static_cast<D*>(dst.data)[od] = cast_value<D>(static_cast<const S*>(src.data)[os]);
      }
    });
  });
  return ok_result();
}
Result<void> launch_pointwise(const ir::PointwiseProgram& program,
                              std::span<const PointwiseOperand> inputs,
                              std::span<const PointwiseOperand> outputs, const LaunchContext& ctx) {
  return run_copy(program, inputs, outputs, ctx);
}
Result<void> launch_pointwise(const ir::PointwiseProgram& program,
                              std::span<const DeviceTensor> inputs,
                              std::span<const DeviceTensor> outputs, const LaunchContext& ctx) {
  std::vector<PointwiseOperand> in, out;
  for (const auto& t : inputs) in.push_back({t, nullptr});
  for (const auto& t : outputs) out.push_back({t, nullptr});
  return run_copy(program, in, out, ctx);
}
}  // namespace splice::cuda
