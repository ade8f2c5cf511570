// Order reductions over reduce.cuh: amax/amin (and max/min over everything), max/min over a
// dim with indices and argmax/argmin, and any/all. One typed kernel per input dtype; values
// are compared in the input's opmath type (exact), narrow integers held as int32.
#include "backends/cuda/reduce.cuh"

namespace splice::cuda {

Result<void> launch_extreme(const ReduceLayout& layout, const DeviceTensor& self,
                            const DeviceTensor& out, bool is_max, const KernelScratch& scratch,
                            cudaStream_t stream) {
  const DeviceTensor* outs[] = {&out};
  return dispatch_device_dtype(self.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using Load = TypedLoad<T, opmath_t<T>>;
    return launch_reduce(layout, ExtremeOp<Load>{Load{static_cast<const T*>(self.data)}, is_max},
                         outs, scratch, stream);
  });
}

Result<void> launch_arg_extreme(const ReduceLayout& layout, const DeviceTensor& self,
                                const DeviceTensor* values, const DeviceTensor& indices,
                                bool is_max, const KernelScratch& scratch, cudaStream_t stream) {
  const DeviceTensor* with_values[] = {values, &indices};
  const DeviceTensor* only_indices[] = {&indices};
  const std::span<const DeviceTensor* const> outs =
      values ? std::span<const DeviceTensor* const>(with_values)
             : std::span<const DeviceTensor* const>(only_indices);
  const int value_slot = values ? 0 : -1;
  const int index_slot = values ? 1 : 0;
  return dispatch_device_dtype(self.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using Load = TypedLoad<T, opmath_t<T>>;
    const ArgExtremeOp<Load> op{Load{static_cast<const T*>(self.data)}, is_max, value_slot,
                                index_slot};
    return launch_reduce(layout, op, outs, scratch, stream);
  });
}

Result<void> launch_any_all(const ReduceLayout& layout, const DeviceTensor& self,
                            const DeviceTensor& out, bool all, const KernelScratch& scratch,
                            cudaStream_t stream) {
  const DeviceTensor* outs[] = {&out};
  return dispatch_device_dtype(self.dtype, [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    using Load = TypedLoad<T, bool>;
    return launch_reduce(layout, AnyAllOp<Load>{Load{static_cast<const T*>(self.data)}, all}, outs,
                         scratch, stream);
  });
}

}  // namespace splice::cuda
