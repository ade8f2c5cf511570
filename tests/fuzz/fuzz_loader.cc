// libFuzzer target for the whole loader: zip container, JSON schema, import, weights and
// verification. Any input must end in a Program or an Error — never a crash, a hang, a
// sanitizer report or an allocation sized from unchecked input. The loader reads files, so
// each input is written to one scratch file first.
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <string>

#include "compiler/driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/splice_fuzz_" + std::to_string(getpid()) + ".pt2";
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto program = splice::compiler::load_program(path);
  (void)program.ok();
  return 0;
}
