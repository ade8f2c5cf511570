#pragma once
// Timing for the GPU micro-benchmarks (GpuAttentionBench, GpuNormBench): milliseconds per run
// of f(stream), `reps` runs recorded into one CUDA graph (so host launch overhead is not what
// is timed, and the launches are shown to be capturable), replayed once to warm up, then 5
// times between two CUDA events. -1 when the capture or the instantiation fails.

#include <cuda_runtime_api.h>

namespace splice::cuda::testing {

template <typename F>
double graph_time_ms(F&& f, int reps) {
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < reps; ++i) f(stream);
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess) return -1;
  if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return -1;
  cudaGraphLaunch(exec, stream);  // warm-up
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, stream);
  for (int i = 0; i < 5; ++i) cudaGraphLaunch(exec, stream);
  cudaEventRecord(b, stream);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return ms / (5.0 * reps);
}

}  // namespace splice::cuda::testing
