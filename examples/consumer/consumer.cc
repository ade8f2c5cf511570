// An installed splice, used from another project (examples/consumer/CMakeLists.txt): loads a
// recorded case of tests/cases (its model.pt2), runs its first call on the recorded inputs and
// compares every output with the one PyTorch recorded.
//
//   consumer CASE_DIR       e.g. consumer tests/cases/mm.default
//
// Reads float32 tensors only (what this example's cases use): a safetensors file is an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
// then the bytes. Exit code 0 when every output matches, 1 when one differs, 2 on bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "splice/splice.h"

namespace {

struct F32Tensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// Every tensor of a safetensors file; false (with `error` set) when it cannot be read or holds
// a tensor that is not float32.
bool read_f32_tensors(const std::string& path, std::map<std::string, F32Tensor>& out,
                      std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot be opened";
    return false;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t header_size = 0;
  if (bytes.size() < 8) {
    error = path + ": shorter than a safetensors header";
    return false;
  }
  std::memcpy(&header_size, bytes.data(), 8);  // little-endian, as every host splice runs on
  if (header_size > bytes.size() - 8) {
    error = path + ": header runs past the end of the file";
    return false;
  }
  const auto header = nlohmann::json::parse(bytes.substr(8, header_size), nullptr, false);
  if (!header.is_object()) {
    error = path + ": header is not a JSON object";
    return false;
  }
  const size_t data = 8 + header_size;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    if (entry.value("dtype", "") != "F32") {
      error = path + ": tensor '" + name + "' is not F32 (this example reads float32 only)";
      return false;
    }
    F32Tensor t;
    t.shape = entry.at("shape").get<std::vector<int64_t>>();
    const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
    if (offsets.size() != 2 || offsets[0] > offsets[1] || data + offsets[1] > bytes.size() ||
        (offsets[1] - offsets[0]) % sizeof(float) != 0) {
      error = path + ": tensor '" + name + "' has bad data_offsets";
      return false;
    }
    t.values.resize((offsets[1] - offsets[0]) / sizeof(float));
    std::memcpy(t.values.data(), bytes.data() + data + offsets[0], offsets[1] - offsets[0]);
    out.emplace(name, std::move(t));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CASE_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::map<std::string, F32Tensor> inputs, expected;
  std::string error;
  if (!read_f32_tensors(dir + "/call0.inputs.safetensors", inputs, error) ||
      !read_f32_tensors(dir + "/call0.outputs.safetensors", expected, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }

  auto model = splice::Model::load(dir + "/model.pt2");
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.error().message().c_str());
    return model.error().exit_code();
  }
  auto session = model->open_session();
  if (!session.ok()) {
    std::fprintf(stderr, "error: %s\n", session.error().message().c_str());
    return session.error().exit_code();
  }
  // The inputs are this program's memory: splice reads them during run() and keeps no pointer.
  std::map<std::string, splice::TensorArg> args;
  for (auto& [name, t] : inputs)
    args.emplace(name, splice::TensorArg{t.values.data(), splice::DType::kFloat32, t.shape});
  auto result = session->run(args);
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n", result.error().message().c_str());
    return result.error().exit_code();
  }

  // PyTorch's outputs are named output.N; float32 tolerance as the conformance suite's
  // (tests/conformance/compare.cc: atol 1e-5, rtol 1e-4).
  int failures = 0;
  if (result->outputs.size() != expected.size()) {
    std::fprintf(stderr, "%zu outputs, PyTorch recorded %zu\n", result->outputs.size(),
                 expected.size());
    return 1;
  }
  for (size_t i = 0; i < result->outputs.size(); ++i) {
    const std::string name = "output." + std::to_string(i);
    const splice::HostTensor& got = result->outputs[i];
    const F32Tensor& want = expected.at(name);
    if (got.dtype != splice::DType::kFloat32 || got.shape != want.shape) {
      std::fprintf(stderr, "%s: dtype or shape differs from PyTorch's\n", name.c_str());
      ++failures;
      continue;
    }
    double worst = 0;
    for (size_t k = 0; k < want.values.size(); ++k) {
      const double a = got.data<float>()[k], b = want.values[k];
      worst = std::max(worst, std::abs(a - b) / (1e-5 + 1e-4 * std::abs(b)));
    }
    std::printf("%s: %zu values, worst error %.3g of the tolerance\n", name.c_str(),
                want.values.size(), worst);
    if (worst > 1) ++failures;
  }
  if (failures) {
    std::printf("consumer: %d outputs differ from PyTorch's\n", failures);
    return 1;
  }
  std::printf("consumer: every output matches PyTorch's\n");
  return 0;
}
