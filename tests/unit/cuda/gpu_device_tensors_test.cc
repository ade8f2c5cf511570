// Device tensors through the public API: inputs already on the GPU are read there (a mutated
// one is written there in place), outputs can stay on the GPU, and the results equal those of
// host tensors. Needs a GPU (skips without one).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/cuda/device_info.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "case_session.h"
#include "splice/splice.h"

namespace splice::cuda {
namespace {

using testing::case_inputs;
using testing::open_case;

// Device memory the test owns.
struct DeviceCopy {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceCopy(const Tensor& t) : bytes(t.nbytes()) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, t.raw_data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() { (void)cudaFree(ptr); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  std::vector<std::byte> read() const {
    std::vector<std::byte> host(bytes);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

std::vector<std::byte> read(const DeviceTensor& d) {
  std::vector<std::byte> host(static_cast<size_t>(d.numel()) * dtype_size(d.dtype));
  EXPECT_EQ(cudaMemcpy(host.data(), d.data, host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

class GpuDeviceTensors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_available()) GTEST_SKIP() << "no CUDA device";
  }
};

// Llama with a static cache, 5 calls of the same shapes (so graphs record and replay) with
// inputs in device memory that the caller fills on its own stream, and outputs left on the
// device: every output equals the host-tensor session's.
TEST_F(GpuDeviceTensors, DeviceInputsAndOutputsMatchHostTensors) {
  const std::string name = "hf_llama_static_cache.default";
  Session device = open_case(name, "cuda", true), host = open_case(name, "cuda", true);
  cudaStream_t caller = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&caller, cudaStreamNonBlocking), cudaSuccess);
  for (int64_t pos = 0; pos < 5; ++pos) {
    SCOPED_TRACE(pos);
    auto ids = Tensor::empty(DType::kInt64, {1, 1}).value();
    auto position = Tensor::empty(DType::kInt64, {1}).value();
    *ids.data<int64_t>() = 7 + pos;
    *position.data<int64_t>() = pos;
    // The caller's device buffers, written on its stream and not synchronized: the call must
    // wait for that stream.
    void* d_ids = nullptr;
    void* d_pos = nullptr;
    ASSERT_EQ(cudaMallocAsync(&d_ids, 8, caller), cudaSuccess);
    ASSERT_EQ(cudaMallocAsync(&d_pos, 8, caller), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(d_ids, ids.raw_data(), 8, cudaMemcpyHostToDevice, caller),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(d_pos, position.raw_data(), 8, cudaMemcpyHostToDevice, caller),
              cudaSuccess);
    const Device gpu{DeviceType::kCUDA, 0};
    std::map<std::string, TensorArg> dargs{
        {"input_ids", TensorArg{d_ids, DType::kInt64, {1, 1}, gpu}},
        {"cache_position", TensorArg{d_pos, DType::kInt64, {1}, gpu}}};
    RunOptions options;
    options.stream = caller;
    options.outputs_on_device = true;
    auto a = device.run(dargs, options);
    std::map<std::string, TensorArg> hargs{
        {"input_ids", TensorArg{ids.raw_data(), DType::kInt64, {1, 1}}},
        {"cache_position", TensorArg{position.raw_data(), DType::kInt64, {1}}}};
    auto b = host.run(hargs);
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    ASSERT_EQ(a->device_outputs.size(), b->outputs.size());
    for (size_t i = 0; i < b->outputs.size(); ++i) {
      const DeviceTensor& d = a->device_outputs[i];
      EXPECT_EQ(d.device, gpu);
      ASSERT_EQ(d.shape, b->outputs[i].shape);
      EXPECT_EQ(read(d), b->outputs[i].bytes) << "output " << i;
    }
    ASSERT_EQ(cudaFreeAsync(d_ids, caller), cudaSuccess);
    ASSERT_EQ(cudaFreeAsync(d_pos, caller), cudaSuccess);
  }
  EXPECT_EQ(device.graph_stats().replayed, 4) << device.graph_stats().refusal;
  ASSERT_EQ(cudaStreamSynchronize(caller), cudaSuccess);
  (void)cudaStreamDestroy(caller);
}

// A KV cache passed as a user input that the program mutates: the caller's device memory
// holds the new value after each call — written in place without graphs, copied back into it
// with them — equal to the host-tensor session's cache.
TEST_F(GpuDeviceTensors, MutatedDeviceInputIsWrittenInPlace) {
  const std::string name = "f_kv_cache_as_user_input.default";
  for (bool graphs : {false, true}) {
    SCOPED_TRACE(graphs ? "graphs on" : "graphs off");
    Session device = open_case(name, "cuda", graphs), host = open_case(name, "cuda", graphs);
    auto first = case_inputs(name, 0);
    DeviceCopy cache(first.at("cache"));
    Tensor host_cache = first.at("cache").contiguous_copy().value();
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE(call);
      auto in = case_inputs(name, call);
      DeviceCopy k(in.at("k")), pos(in.at("pos"));
      const Device gpu{DeviceType::kCUDA, 0};
      std::map<std::string, TensorArg> dargs{
          {"cache", TensorArg{cache.ptr, DType::kFloat32, host_cache.sizes(), gpu}},
          {"k", TensorArg{k.ptr, in.at("k").dtype(), in.at("k").sizes(), gpu}},
          {"pos", TensorArg{pos.ptr, in.at("pos").dtype(), in.at("pos").sizes(), gpu}}};
      std::map<std::string, TensorArg> hargs{
          {"cache", TensorArg{host_cache.raw_data(), DType::kFloat32, host_cache.sizes()}},
          {"k", TensorArg{in.at("k").raw_data(), in.at("k").dtype(), in.at("k").sizes()}},
          {"pos", TensorArg{in.at("pos").raw_data(), in.at("pos").dtype(), in.at("pos").sizes()}}};
      auto a = device.run(dargs);
      auto b = host.run(hargs);
      ASSERT_TRUE(a.ok()) << a.error().message();
      ASSERT_TRUE(b.ok()) << b.error().message();
      const auto written = cache.read();
      ASSERT_EQ(written.size(), host_cache.nbytes());
      EXPECT_EQ(std::memcmp(written.data(), host_cache.raw_data(), written.size()), 0)
          << "the caller's device cache differs from the host session's";
    }
  }
}

// MeasureOptions::device_io: the inputs are copied to the GPU once, untimed, so the timed calls
// copy less between host and device than calls on host tensors, and run the same kernels.
// Without graphs a device input is read in place (no copy at all); a replay copies it into the
// tensor its recording reads (device to device, which CUPTI counts as a memcpy too, as it
// counts the host-to-device copy it replaces), so there the count may only not grow.
TEST_F(GpuDeviceTensors, MeasureWithDeviceIoCopiesNoInputsPerCall) {
  const std::string name = "hf_llama_static_cache.default";
  for (bool graphs : {false, true}) {
    SCOPED_TRACE(graphs ? "graphs on" : "graphs off");
    Session session = open_case(name, "cuda", graphs);
    auto in = case_inputs(name, 1);
    const std::map<std::string, TensorArg> args = testing::tensor_args(in);
    MeasureOptions host_io;
    host_io.warmup = 2;
    host_io.iters = 4;
    MeasureOptions device_io = host_io;
    device_io.device_io = true;
    auto a = session.measure(args, host_io);
    auto b = session.measure(args, device_io);
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    if (!a->counted || !b->counted) GTEST_SKIP() << "CUPTI counted nothing: " << a->count_note;
    EXPECT_EQ(a->kernels, b->kernels);
    if (graphs)
      EXPECT_LE(b->memcpys, a->memcpys);
    else
      EXPECT_LT(b->memcpys, a->memcpys);
  }
}

// A call's fresh output is handed to the caller as it is, not copied: with the inputs on the
// device and no graphs (whose recorded outputs every replay rewrites, so those are copied), a
// rotary call copies nothing at all — its kernel checks nothing on the device, so not even the
// error word is read back.
TEST_F(GpuDeviceTensors, FreshOutputsAreHandedOverWithoutACopy) {
  const std::string name = "rotary_halves_into_empty_like.default";
  Session session = open_case(name, "cuda", false);
  auto in = case_inputs(name, 0);
  MeasureOptions options;
  options.warmup = 2;
  options.iters = 5;
  options.device_io = true;
  auto times = session.measure(testing::tensor_args(in), options);
  ASSERT_TRUE(times.ok()) << times.error().message();
  if (!times->counted) GTEST_SKIP() << "CUPTI counted nothing: " << times->count_note;
  EXPECT_EQ(times->kernels, options.iters);
  EXPECT_EQ(times->memcpys, 0) << "no output copy, no error-word read";
  EXPECT_EQ(times->memsets, 0);
}

// Model::load compiles the plan's pointwise groups (side by side on the host's cores), so the
// first call compiles no kernel of its own.
TEST_F(GpuDeviceTensors, LoadCompilesTheGroupsKernels) {
  const std::string name = "rotary_halves_f16.default";
  Session session = open_case(name, "cuda", false);
  const int64_t loaded = nvrtc_compile_count();
  auto in = case_inputs(name, 0);
  auto r = session.run(testing::tensor_args(in));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(nvrtc_compile_count(), loaded);
}

}  // namespace
}  // namespace splice::cuda
