#pragma once
// Helpers for the GPU tests that run a conformance case's model through the public API: the
// case's folder, a session on its model, the inputs it recorded for a call, and the arguments
// Session::run takes. Kept apart from cuda_test_util.h (the kernel tests' helpers), which the
// host emulation (tests/cuda_emulation) compiles without the public API and SPLICE_SOURCE_DIR.

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "splice/splice.h"
#include "tensor/safetensors.h"
#include "tensor/tensor.h"

namespace splice::cuda::testing {

// The folder of conformance case `name` (tests/cases/<name>). SPLICE_TEST_SOURCE_DIR overrides
// the source tree the binary was built from: on the GPU host the bundle runs against the
// checkout there (scripts/gpu_run.sh).
inline std::string case_dir(const std::string& name) {
  const char* root = std::getenv("SPLICE_TEST_SOURCE_DIR");
  return std::string(root != nullptr && *root != '\0' ? root : SPLICE_SOURCE_DIR) +
         "/tests/cases/" + name;
}

// A session on case `name`'s model loaded for `device`; a failed load or open fails the test.
inline Session open_case(const std::string& name, const std::string& device,
                         bool cuda_graphs = true) {
  LoadOptions options;
  options.device = device;
  options.cuda_graphs = cuda_graphs;
  auto model = Model::load(case_dir(name) + "/model.pt2", options);
  EXPECT_TRUE(model.ok()) << model.error().message();
  auto session = model->open_session();
  EXPECT_TRUE(session.ok()) << session.error().message();
  return std::move(*session);
}

// The inputs case `name` recorded for call `call`.
inline std::map<std::string, Tensor> case_inputs(const std::string& name, int call) {
  auto r =
      read_safetensors(case_dir(name) + "/call" + std::to_string(call) + ".inputs.safetensors");
  EXPECT_TRUE(r.ok()) << r.error().message();
  return std::move(*r);
}

// Session::run's arguments: views of the tensors of `m`, which must outlive the call.
inline std::map<std::string, TensorArg> tensor_args(std::map<std::string, Tensor>& m) {
  std::map<std::string, TensorArg> a;
  for (auto& [name, t] : m) a.emplace(name, TensorArg{t.raw_data(), t.dtype(), t.sizes()});
  return a;
}

}  // namespace splice::cuda::testing
