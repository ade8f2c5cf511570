// A minimal use of splice's public C++ API (include/splice/splice.h): load a .pt2 archive once,
// open two sessions on it, run one call in each, print the outputs.
//
//   api_example model.pt2
//
// Session 0 gets every input element set to 0.5 (floats) or 0 (integers, bools); session 1
// gets 1.5 or 1. Programs with symbolic input shapes are fed with every symbolic dim set to 2
// — fine for a bare symbol (s0), possibly not what an expression (s0 + 1) needs.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "splice/splice.h"

namespace {

// The bytes of one element of `dtype` holding `value` (0.5, 1.5, 0 or 1; each exact in every
// dtype, so the half-precision bit patterns can be written down).
std::vector<unsigned char> element(splice::DType dtype, int session) {
  using splice::DType;
  auto bytes = [](const auto& v) {
    std::vector<unsigned char> b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);
    return b;
  };
  const double f = session == 0 ? 0.5 : 1.5;
  switch (dtype) {
    case DType::kFloat32:
      return bytes(static_cast<float>(f));
    case DType::kFloat64:
      return bytes(f);
    case DType::kFloat16:
      return bytes(static_cast<uint16_t>(session == 0 ? 0x3800 : 0x3E00));
    case DType::kBFloat16:
      return bytes(static_cast<uint16_t>(session == 0 ? 0x3F00 : 0x3FC0));
    case DType::kInt64:
      return bytes(static_cast<int64_t>(session));
    case DType::kInt32:
      return bytes(static_cast<int32_t>(session));
    case DType::kInt16:
      return bytes(static_cast<int16_t>(session));
    default:
      return bytes(static_cast<uint8_t>(session));  // int8, uint8, bool
  }
}

// "f32[2, 3] 1.5 1.5 ..." (values for the common dtypes, a byte count for the others).
void print_tensor(const std::string& label, const splice::HostTensor& t) {
  static const char* const kNames[] = {"u8",  "i8",  "i16", "i32",  "i64",
                                       "f16", "f32", "f64", "bool", "bf16"};
  std::printf("  %s: %s[", label.c_str(), kNames[static_cast<int>(t.dtype)]);
  for (size_t i = 0; i < t.shape.size(); ++i)
    std::printf(i ? ", %lld" : "%lld", (long long)t.shape[i]);
  std::printf("]");
  const int64_t shown = t.numel() < 8 ? t.numel() : 8;
  for (int64_t i = 0; i < shown; ++i) {
    switch (t.dtype) {
      case splice::DType::kFloat32:
        std::printf(" %g", t.data<float>()[i]);
        break;
      case splice::DType::kFloat64:
        std::printf(" %g", t.data<double>()[i]);
        break;
      case splice::DType::kInt64:
        std::printf(" %lld", (long long)t.data<int64_t>()[i]);
        break;
      case splice::DType::kInt32:
        std::printf(" %d", t.data<int32_t>()[i]);
        break;
      case splice::DType::kBool:
        std::printf(" %d", static_cast<int>(t.data<bool>()[i]));
        break;
      default:
        std::printf(" (%zu bytes)\n", t.bytes.size());
        return;
    }
  }
  std::printf(t.numel() > shown ? " ...\n" : "\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.pt2\n", argv[0]);
    return 2;
  }
  // Load once; the Model is immutable and may be shared by threads and sessions.
  auto model = splice::Model::load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.error().message().c_str());
    return model.error().exit_code();
  }

  // Each session has its own copy of the program's buffers (e.g. a KV cache).
  for (int session_index = 0; session_index < 2; ++session_index) {
    auto session = model->open_session();
    if (!session.ok()) {
      std::fprintf(stderr, "error: %s\n", session.error().message().c_str());
      return session.error().exit_code();
    }

    // Inputs are caller memory; splice reads it during run() and keeps no pointer to it.
    std::vector<std::vector<unsigned char>> storage;
    std::map<std::string, splice::TensorArg> inputs;
    for (const splice::InputInfo& info : model->inputs()) {
      splice::TensorArg arg{nullptr, info.dtype, {}};
      for (const std::string& dim : info.shape) {
        bool numeric = !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
        arg.shape.push_back(numeric ? std::stoll(dim) : 2);
      }
      int64_t numel = 1;
      for (int64_t d : arg.shape) numel *= d;
      std::vector<unsigned char> one = element(info.dtype, session_index);
      std::vector<unsigned char>& data = storage.emplace_back();
      for (int64_t i = 0; i < numel; ++i) data.insert(data.end(), one.begin(), one.end());
      arg.data = data.data();
      inputs.emplace(info.name, arg);
    }

    auto result = session->run(inputs);
    if (!result.ok()) {
      std::fprintf(stderr, "error: %s\n", result.error().message().c_str());
      return result.error().exit_code();
    }
    std::printf("session %d\n", session_index);
    for (size_t i = 0; i < result->outputs.size(); ++i) {
      if (result->present[i]) print_tensor("output." + std::to_string(i), result->outputs[i]);
    }
    for (const auto& [name, t] : result->mutated_inputs) print_tensor("mutated." + name, t);
  }
  return 0;
}
