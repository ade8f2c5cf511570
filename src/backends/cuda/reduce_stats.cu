// Statistics over reduce.cuh: var/std with the mean (Welford, float or double accumulation)
// and the vector norms (the input converted to the result dtype first, as PyTorch does when a
// dtype is given).
#include "backends/cuda/reduce.cuh"
#include "backends/cuda/reduce_loaders.cuh"

namespace splice::cuda {

Result<void> launch_var(const ReduceLayout& layout, const DeviceTensor& self,
                        const DeviceTensor& var_out, const DeviceTensor* mean_out, double divisor,
                        bool take_sqrt, const KernelScratch& scratch, cudaStream_t stream) {
  const DeviceTensor* with_mean[] = {&var_out, mean_out};
  const DeviceTensor* only_var[] = {&var_out};
  const std::span<const DeviceTensor* const> outs =
      mean_out ? std::span<const DeviceTensor* const>(with_mean)
               : std::span<const DeviceTensor* const>(only_var);
  return dispatch_device_dtype(self.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (is_device_float_v<T>) {
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      using Load = TypedLoad<T, A>;
      const WelfordOp<Load> op{Load{static_cast<const T*>(self.data)}, static_cast<A>(divisor),
                               take_sqrt, mean_out != nullptr};
      return launch_reduce(layout, op, outs, scratch, stream);
    } else {
      return Error(ErrorKind::kInternal, "launch_var: non-float input");
    }
  });
}

Result<void> launch_norm(const ReduceLayout& layout, const DeviceTensor& self,
                         const DeviceTensor& out, NormKind kind, double p,
                         const KernelScratch& scratch, cudaStream_t stream) {
  const DeviceTensor* outs[] = {&out};
  return dispatch_accumulator(out.dtype, [&](auto acc_tag) -> Result<void> {
    using V = typename decltype(acc_tag)::type;
    if constexpr (std::is_floating_point_v<V>) {
      return dispatch_load<V>(self, out.dtype, [&](auto load) -> Result<void> {
        return launch_reduce(layout, NormOp<decltype(load)>{load, kind, static_cast<V>(p)}, outs,
                             scratch, stream);
      });
    } else {
      return Error(ErrorKind::kInternal, "launch_norm: non-float result");
    }
  });
}

}  // namespace splice::cuda
