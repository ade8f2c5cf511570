#pragma once
// Recorded cases through the public API on a backend (test backends registered by a test):
// every output and buffer after every call of a case must match what PyTorch recorded.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "splice/splice.h"
#include "tensor/safetensors.h"
#include "tests/conformance/compare.h"

namespace splice::testing {

// Runs case directory `dir` (ending in '/') call by call on `device`.
inline void expect_recorded_calls_match(const std::string& dir, const char* device) {
  LoadOptions options;
  options.device = device;
  options.threads = 2;
  auto model = Model::load(dir + "model.pt2", options);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->device(), device);
  auto session = model->open_session();
  ASSERT_TRUE(session.ok()) << session.error().message();
  for (int k = 0;; ++k) {
    const std::string call = dir + "call" + std::to_string(k);
    auto inputs = read_safetensors(call + ".inputs.safetensors");
    if (!inputs.ok()) {
      EXPECT_GT(k, 0) << "the case has no calls";
      break;
    }
    std::map<std::string, TensorArg> args;
    for (auto& [n, t] : *inputs) args.emplace(n, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
    auto result = session->run(args);
    ASSERT_TRUE(result.ok()) << result.error().message();
    auto expected = read_safetensors(call + ".outputs.safetensors");
    ASSERT_TRUE(expected.ok());
    for (size_t i = 0; i < result->outputs.size(); ++i) {
      if (!result->present[i]) continue;
      const HostTensor& h = result->outputs[i];
      Tensor got(
          h.dtype, h.shape, contiguous_strides(h.shape), 0,
          Storage::borrow(const_cast<std::byte*>(h.bytes.data()), h.bytes.size(), nullptr, false));
      const auto want = expected->find("output." + std::to_string(i));
      ASSERT_NE(want, expected->end());
      EXPECT_EQ(compare_tensors(want->second, got), "") << "output " << i;
    }
    auto state = read_safetensors(call + ".state.safetensors");
    ASSERT_TRUE(state.ok());
    for (const auto& [fqn, want] : *state) {
      auto h = session->state(fqn);
      ASSERT_TRUE(h.ok()) << h.error().message();
      Tensor got(h->dtype, h->shape, contiguous_strides(h->shape), 0,
                 Storage::borrow(h->bytes.data(), h->bytes.size(), nullptr, false));
      EXPECT_EQ(compare_tensors(want, got), "") << "buffer " << fqn << " after call " << k;
    }
  }
}

}  // namespace splice::testing
