#pragma once
// Where a tensor's memory lives: the host, or a device of a backend (a CUDA GPU by index).

#include <cstdint>
#include <string>

namespace splice {

enum class DeviceType : uint8_t {
  kCPU,   // host memory
  kCUDA,  // memory of an NVIDIA GPU
};

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;  // which GPU; always 0 for the host

  bool is_host() const { return type == DeviceType::kCPU; }
  bool operator==(const Device&) const = default;
};

inline constexpr Device kHostDevice{};

// "cpu", "cuda:0".
inline std::string device_name(const Device& d) {
  return d.is_host() ? std::string("cpu") : "cuda:" + std::to_string(d.index);
}

}  // namespace splice
