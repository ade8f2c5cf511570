// libFuzzer target for the safetensors reader (parse_safetensors): the 8-byte length, the
// header read as JSON events (nesting, duplicate names and fields, numbers of every kind), the
// per-tensor checks and the tiling of the data area. Any input must end in tensors or an Error
// -- never a crash, a hang, a sanitizer report or an allocation sized from unchecked input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tensor/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span<const uint8_t>(data, size));
  auto tensors = splice::parse_safetensors(bytes, "fuzz.safetensors");
  if (tensors.ok()) {
    // What was read must be whole: every tensor's bytes are readable (ASan checks each one).
    unsigned sum = 0;
    for (const auto& [name, t] : *tensors)
      for (size_t i = 0; i < t.nbytes(); ++i) sum += static_cast<unsigned>(t.raw_data()[i]);
    asm volatile("" : : "r"(sum));  // the reads must happen
  }
  return 0;
}
